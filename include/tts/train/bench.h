// `tts-train bench` below its command line: training steps of a family on a synthetic batch,
// timed through the one Step that training runs (forward, losses, backward through the gradient
// reducer, clip, the optimizer; a GAN's two updates), and with `profile` what one iteration
// issues. What a family supplies is its bench subject (BenchSubject), the way it supplies a
// train::Family to training.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tts/config/config.h"
#include "tts/data/phase.h"
#include "tts/train/family.h"

namespace tts::train {

// The synthetic batch `tts-train bench` steps: `batch` utterances; a text-reading family's of
// `text_len` symbols from a table of `symbols`; `frames` output mel frames each (0: the
// family's own default: 600 for Tacotron-2, a vocoder's training window).
struct BenchShape {
  int64_t batch = 1;
  int64_t text_len = 120;
  int64_t frames = 0;
  int64_t symbols = 148;
};

// What bench steps: a family without a store (no batch source, no validation) in `phase`, and one
// synthetic batch on the rank's device, with what the bench reports of its size.
struct BenchSubject {
  std::unique_ptr<Family> family;
  std::unique_ptr<FamilyBatch> batch;
  data::Phase phase;
  int64_t frames = 0;     // mel frames per utterance the step computes (padding to r included)
  int64_t text_len = 0;   // symbols per utterance; 0 for a family without text input
  int64_t samples = 0;    // waveform samples per utterance; 0 for a family without audio output
  double step_gflop = 0;  // a training step's arithmetic counted from the shapes; 0: not counted
  // The family's own fields of bench's JSON line, in order: a name and its value, quoted as a
  // string when `text` (Tacotron-2's frames_per_step and recurrent_products path).
  struct Field {
    std::string name;
    std::string value;
    bool text = false;
  };
  std::vector<Field> fields;
};

using BenchFactory = std::function<BenchSubject(const FamilyContext&, const BenchShape&)>;

struct BenchRequest {
  config::Config config;
  BenchShape shape;  // shape.batch 0: train.batch_size
  int steps = 5;     // timed, after one warm-up step
  int threads = 0;   // intra-op threads; 0: libtorch's choice
  config::Device device = config::Device::kCpu;
  bool profile = false;
  BenchFactory make_subject;  // the family config.model.kind names
};

// bench's JSON line: its fields in order, each value already JSON.
struct BenchResult {
  std::vector<std::pair<std::string, std::string>> fields;
  std::string json() const;
};

// Times request.steps steps (and profiles one with request.profile). Throws UsageError for a
// request that cannot run (a shape out of range, CUDA where there is none).
BenchResult bench(const BenchRequest& request);

}  // namespace tts::train

// Rendering an utterance the model generated (model.infer): its spectrogram through Griffin-Lim
// to audio, and its plots. `tts-train synthesize` and validation's audio sample share it, so an
// utterance whose stop token fired after a frame or two renders in both.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tts/config/audio_options.h"
#include "tts/models/tacotron2/layers/network.h"
#include "tts/report/plots.h"

namespace tts::audio {
class AudioProcessor;
}

namespace tts::tacotron2 {

// One utterance of model.infer's output, cut to the frames it generated, float32 on the CPU.
struct GeneratedUtterance {
  int64_t frames = 0;       // 0: it generated nothing, and the tensors are empty
  torch::Tensor mel;        // [frames, n_mels], the postnet's
  torch::Tensor linear;     // [frames, n_fft/2+1] when the model predicts one, else undefined
  torch::Tensor stop;       // [frames] stop-token probabilities
  torch::Tensor alignment;  // [decoder steps, text steps] of the batch: the utterance's alone in
                            // a batch of one
};

// Item `index` of `output` (model.infer's, on any device).
GeneratedUtterance generated_utterance(const tacotron2::TacotronOutput& output, int64_t index);

struct RenderedAudio {
  std::vector<float> samples;
  int64_t frames = 0;          // frames generated
  int64_t vocoded_frames = 0;  // frames Griffin-Lim ran on: more than `frames` when padded

  bool padded() const { return vocoded_frames > frames; }
  // "stopped after 2 frame(s); padded to 5 frames for Griffin-Lim", for the caller's warning.
  std::string padding_note() const;
};

// Griffin-Lim of the utterance's linear spectrogram when it has one, else of its mel, padded
// first when too short (audio::padded_for_griffin_lim). Throws tts::Error for an utterance without
// frames.
RenderedAudio render_audio(const GeneratedUtterance& utterance,
                           const audio::AudioProcessor& processor);

// The plots of one utterance alone (synthesize --plot): its alignment, and its mel over its
// stop-token probabilities. Validation draws the same mel and stop rows (mel_panel, stop_curve)
// beside the target's and the teacher-forced ones.
struct UtterancePlots {
  report::Plot alignment;
  report::Plot mel;
};

// `what` names the utterance in the titles ("sentence 2"); `step` is the checkpoint's.
UtterancePlots utterance_plots(const GeneratedUtterance& utterance, int64_t step,
                               const std::string& what, const config::AudioOptions& audio,
                               double stop_threshold);

}  // namespace tts::tacotron2

// A vocoder stream (models/roles.h) for a network of convolutions that turns n mel frames into
// n * hop samples and sees a bounded number of frames on each side (its ReceptiveField): each
// chunk of frames is computed on a window with that context on both sides, or the utterance's own
// edge there, and cut to the chunk's samples. HiFi-GAN's generator streams through it.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tts/models/frame_windows.h"
#include "tts/models/roles.h"

namespace tts::models {

// Frames in, the network's output for the chunks made final out: a network that maps n frames
// [n, n_mels] to n * scale rows [n * scale, ...] (CPU float32) and sees `field` around each.
class WindowedNetwork {
 public:
  using Network = std::function<torch::Tensor(const torch::Tensor& frames)>;
  WindowedNetwork(Network network, int64_t n_mels, int64_t scale, const ReceptiveField& field,
                  ChunkPlan plan);
  // The rows of the chunks that the utterance's next `frames` ([n, n_mels]; `last`: its final
  // ones) make final, concatenated; undefined when none is.
  torch::Tensor push(const torch::Tensor& frames, bool last);
  // Frames pushed so far.
  int64_t received() const { return received_; }

 private:
  Network network_;
  int64_t n_mels_, scale_;
  FrameWindows windows_;
  int64_t left_;
  torch::Tensor kept_;    // the frames a later window may still read: [kept, n_mels]
  int64_t first_ = 0;     // the utterance's frame index of kept_'s first row
  int64_t received_ = 0;  // frames pushed so far
  bool ended_ = false;
};

// A vocoder stream of a network that turns n frames into n * hop samples.
class ConvolutionStream final : public VocoderStream {
 public:
  ConvolutionStream(WindowedNetwork::Network network, int64_t n_mels, int64_t hop,
                    const ReceptiveField& field, ChunkPlan plan)
      : windows_(std::move(network), n_mels, hop, field, plan) {}
  std::vector<float> push(const torch::Tensor& frames, bool last) override;

 private:
  WindowedNetwork windows_;
};

// Checks a pushed block of frames: [n, n_mels] float. Throws tts::Error naming `what` otherwise.
void check_stream_frames(const torch::Tensor& frames, int64_t n_mels, const std::string& what);

}  // namespace tts::models

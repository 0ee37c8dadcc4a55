#include "tts/models/convolution_stream.h"

#include <torch/torch.h>

#include "tts/core/error.h"

namespace tts::models {

void check_stream_frames(const torch::Tensor& frames, int64_t n_mels, const std::string& what) {
  TTS_CHECK(frames.dim() == 2 && frames.size(1) == n_mels,
            "{}: expected a mel [frames, {}], found [{}]", what, n_mels,
            fmt::join(frames.sizes(), ", "));
}

WindowedNetwork::WindowedNetwork(Network network, int64_t n_mels, int64_t scale,
                                 const ReceptiveField& field, ChunkPlan plan)
    : network_(std::move(network)),
      n_mels_(n_mels),
      scale_(scale),
      windows_(field.left(), field.right(), plan),
      left_(field.left()),
      kept_(torch::zeros({0, n_mels})) {}

torch::Tensor WindowedNetwork::push(const torch::Tensor& frames, bool last) {
  TTS_CHECK(!ended_, "vocoder stream: frames pushed after the last ones");
  check_stream_frames(frames, n_mels_, "vocoder stream");
  ended_ = last;
  if (frames.size(0) > 0) {
    kept_ = torch::cat({kept_, frames.to(torch::kCPU, torch::kFloat)}, 0);
    received_ += frames.size(0);
  }
  std::vector<torch::Tensor> rows;
  while (auto window = windows_.next(received_, last)) {
    const torch::Tensor input =
        kept_.narrow(0, window->input_begin - first_, window->input_end - window->input_begin);
    const torch::Tensor out = network_(input);
    TTS_CHECK(out.dim() >= 1 && out.size(0) == input.size(0) * scale_,
              "vocoder stream: the network gave {} rows for {} frames of {} rows each",
              out.dim() >= 1 ? out.size(0) : 0, input.size(0), scale_);
    rows.push_back(out.narrow(0, window->offset() * scale_, window->frames() * scale_));
  }
  // Frames no later window reads: those more than the left context before the next chunk.
  const int64_t keep_from = std::max<int64_t>(first_, windows_.done() - left_);
  if (keep_from > first_) {
    kept_ = kept_.narrow(0, keep_from - first_, kept_.size(0) - (keep_from - first_)).clone();
    first_ = keep_from;
  }
  if (rows.empty()) return torch::Tensor();
  return rows.size() == 1 ? rows[0].contiguous() : torch::cat(rows, 0);
}

std::vector<float> ConvolutionStream::push(const torch::Tensor& frames, bool last) {
  const torch::Tensor samples = windows_.push(frames, last);
  if (!samples.defined()) return {};
  const torch::Tensor flat = samples.reshape({-1}).contiguous();
  return {flat.data_ptr<float>(), flat.data_ptr<float>() + flat.numel()};
}

}  // namespace tts::models

#include "tts/models/plot_tensors.h"

#include <torch/torch.h>

#include "tts/core/error.h"

namespace tts::models {

report::Matrix matrix_of(const torch::Tensor& values) {
  TTS_CHECK(values.dim() == 2, "plot: expected a 2-D tensor, found one with {} dimension(s)",
            values.dim());
  auto t = values.detach().to(torch::kCPU, torch::kFloat).contiguous();
  return {std::vector<float>(t.data_ptr<float>(), t.data_ptr<float>() + t.numel()),
          static_cast<int>(t.size(0)), static_cast<int>(t.size(1))};
}

report::MelPanel mel_panel(const std::string& title, const torch::Tensor& frames) {
  return {title, matrix_of(frames)};
}

report::StopCurve stop_curve(const std::string& label, const torch::Tensor& values, bool dashed) {
  auto t = values.detach().to(torch::kCPU, torch::kFloat).contiguous().view(-1);
  return {label, std::vector<float>(t.data_ptr<float>(), t.data_ptr<float>() + t.numel()), dashed};
}

}  // namespace tts::models

#include "tts/model/precision.h"

#include <ATen/Context.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <exception>

#include "autocast.h"
#include "compat.h"
#include "tts/core/error.h"
#include "tts/model/layers.h"

namespace tts::model {

void apply_tf32(bool tf32) {
  at::globalContext().setAllowTF32CuBLAS(tf32);
  at::globalContext().setAllowTF32CuDNN(tf32);
}

void check_precision(config::Precision precision, const torch::Device& device) {
  if (precision == config::Precision::kFp32) return;
  std::string found;
  try {
    AutocastScope autocast(device, precision);
    torch::Tensor x = torch::ones({2, 2}, torch::TensorOptions().device(device));
    torch::Tensor y = torch::nn::functional::linear(x, x);
    if (y.scalar_type() == at::kBFloat16) return;
    found = fmt::format("a matrix product under autocast gave {}", c10::toString(y.scalar_type()));
  } catch (const std::exception& e) {
    found = fmt::format("a matrix product under autocast failed: {}", e.what());
  }
  throw UsageError(
      fmt::format("train.precision = bf16: libtorch {} cannot run bf16 autocast on {} ({}); use "
                  "train.precision: fp32",
                  TORCH_VERSION, device.str(), found));
}

AutocastScope::AutocastScope(const torch::Device& device, config::Precision precision) {
  if (precision != config::Precision::kBf16) return;
  type_ = device.type();
  was_enabled_ = compat::autocast_enabled(type_);
  previous_dtype_ = compat::autocast_dtype(type_);
  compat::set_autocast_dtype(type_, at::kBFloat16);
  compat::set_autocast_enabled(type_, true);
  at::autocast::increment_nesting();
  active_ = true;
}

AutocastScope::~AutocastScope() {
  if (!active_) return;
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  compat::set_autocast_enabled(type_, was_enabled_);
  compat::set_autocast_dtype(type_, previous_dtype_);
}

TacotronOutput at_least_float(const TacotronOutput& out) {
  TacotronOutput result = out;  // every other field (lengths, r) as it is
  for (torch::Tensor* t :
       {&result.mel, &result.mel_postnet, &result.gate, &result.alignments, &result.linear}) {
    *t = detail::at_least_float(*t);
  }
  return result;
}

TacotronOutput forward_in_precision(Tacotron2Impl& model, const torch::Tensor& text,
                                    const torch::Tensor& text_lengths, const torch::Tensor& mel,
                                    const torch::Tensor& mel_lengths, config::Precision precision) {
  TacotronOutput out;
  {
    AutocastScope autocast(text.device(), precision);
    out = model.forward(text, text_lengths, mel, mel_lengths);
  }
  return at_least_float(out);
}

}  // namespace tts::model

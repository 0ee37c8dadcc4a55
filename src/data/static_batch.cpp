#include "tts/data/static_batch.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include <string>

#include "tts/core/error.h"

namespace tts::data {

bool BatchShape::operator==(const BatchShape& other) const {
  return utterances == other.utterances && r == other.r && text == other.text &&
         frames == other.frames && n_mels == other.n_mels && n_linear == other.n_linear &&
         speakers == other.speakers;
}

std::string BatchShape::describe() const {
  return fmt::format("B {}, r {}, text {}, frames {}, mels {}{}{}", utterances, r, text, frames,
                     n_mels, n_linear > 0 ? fmt::format(", linear {}", n_linear) : std::string(),
                     speakers ? ", speakers" : "");
}

BatchShape shape_of(const Batch& batch) {
  TTS_CHECK(
      batch.text.defined() && batch.text.dim() == 2 && batch.mel.defined() && batch.mel.dim() == 3,
      "a batch without its [B, T] text and [B, T, n_mels] mel tensors");
  BatchShape shape;
  shape.utterances = batch.text.size(0);
  shape.r = batch.r;
  shape.text = batch.text.size(1);
  shape.frames = batch.mel.size(1);
  shape.n_mels = batch.mel.size(2);
  shape.n_linear = batch.linear.defined() ? batch.linear.size(2) : 0;
  shape.speakers = batch.speakers.defined();
  return shape;
}

Batch allocate_like(const Batch& batch, const torch::Device& device) {
  Batch out;
  auto in = batch.tensors();
  auto fields = out.tensors();
  for (size_t i = 0; i < fields.size(); ++i) {
    const torch::Tensor& t = *in[i].second;
    if (t.defined()) *fields[i].second = torch::zeros(t.sizes(), t.options().device(device));
  }
  out.counts = torch::zeros({4}, torch::dtype(torch::kInt64).device(device));
  out.r = batch.r;
  return out;
}

void copy_batch_into(Batch& target, const Batch& source, bool non_blocking) {
  const BatchShape want = shape_of(target);
  const BatchShape have = shape_of(source);
  TTS_CHECK(want == have, "static batch buffers of shape ({}) cannot take a batch of shape ({})",
            want.describe(), have.describe());
  TTS_CHECK(target.counts.defined(), "copy_batch_into: the target is not from allocate_like");
  // The host fields are the source's (whatever fields a Batch has); the tensors stay the
  // target's buffers and take the source's values. Everything is checked before anything is
  // written: a refused batch leaves the buffers as they were.
  auto from = source.tensors();
  std::vector<torch::Tensor> buffers;
  for (const auto& [name, buffer] : target.tensors()) {
    const torch::Tensor& value = *from[buffers.size()].second;
    TTS_CHECK(
        std::string(name) == "counts" || (buffer->defined() == value.defined() &&
                                          (!buffer->defined() || buffer->sizes() == value.sizes())),
        "static batch buffers: the {} tensors differ in shape", name);
    buffers.push_back(*buffer);
  }
  target = source;
  auto to = target.tensors();
  for (size_t i = 0; i < to.size(); ++i) {
    *to[i].second = buffers[i];
    if (std::string(to[i].first) == "counts") continue;  // below, from the host counts
    if (buffers[i].defined()) buffers[i].copy_(*from[i].second, non_blocking);
  }
  // From a fresh host tensor: a non-blocking copy may still be reading it after we return, so it
  // must not be a buffer this function reuses.
  const torch::Tensor counts =
      torch::tensor({source.real_frame_count, source.attention_pair_count,
                     source.global_real_frames, source.global_attention_pairs},
                    torch::kInt64);
  target.counts.copy_(counts, false);
}

}  // namespace tts::data

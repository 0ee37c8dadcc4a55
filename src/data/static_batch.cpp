#include "tts/data/static_batch.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include "tts/core/error.h"

namespace tts::data {

bool BatchShape::operator==(const BatchShape& other) const {
  return utterances == other.utterances && text == other.text && frames == other.frames &&
         n_mels == other.n_mels && n_linear == other.n_linear && speakers == other.speakers;
}

std::string BatchShape::describe() const {
  return fmt::format("B {}, text {}, frames {}, mels {}{}{}", utterances, text, frames, n_mels,
                     n_linear > 0 ? fmt::format(", linear {}", n_linear) : std::string(),
                     speakers ? ", speakers" : "");
}

BatchShape shape_of(const Batch& batch) {
  TTS_CHECK(
      batch.text.defined() && batch.text.dim() == 2 && batch.mel.defined() && batch.mel.dim() == 3,
      "a batch without its [B, T] text and [B, T, n_mels] mel tensors");
  BatchShape shape;
  shape.utterances = batch.text.size(0);
  shape.text = batch.text.size(1);
  shape.frames = batch.mel.size(1);
  shape.n_mels = batch.mel.size(2);
  shape.n_linear = batch.linear.defined() ? batch.linear.size(2) : 0;
  shape.speakers = batch.speakers.defined();
  return shape;
}

Batch allocate_like(const Batch& batch, const torch::Device& device) {
  auto like = [&](const torch::Tensor& t) {
    return t.defined() ? torch::zeros(t.sizes(), t.options().device(device)) : torch::Tensor();
  };
  Batch out;
  out.text = like(batch.text);
  out.text_lengths = like(batch.text_lengths);
  out.mel = like(batch.mel);
  out.mel_lengths = like(batch.mel_lengths);
  out.stop = like(batch.stop);
  out.linear = like(batch.linear);
  out.speakers = like(batch.speakers);
  out.counts = torch::zeros({4}, torch::dtype(torch::kInt64).device(device));
  return out;
}

void copy_batch_into(Batch& target, const Batch& source, bool non_blocking) {
  const BatchShape want = shape_of(target);
  const BatchShape have = shape_of(source);
  TTS_CHECK(want == have, "static batch buffers of shape ({}) cannot take a batch of shape ({})",
            want.describe(), have.describe());
  TTS_CHECK(target.counts.defined(), "copy_batch_into: the target is not from allocate_like");
  auto copy = [&](torch::Tensor& to, const torch::Tensor& from, const char* name) {
    TTS_CHECK(to.defined() == from.defined() && (!to.defined() || to.sizes() == from.sizes()),
              "static batch buffers: the {} tensors differ in shape", name);
    if (to.defined()) to.copy_(from, non_blocking);
  };
  copy(target.text, source.text, "text");
  copy(target.text_lengths, source.text_lengths, "text_lengths");
  copy(target.mel, source.mel, "mel");
  copy(target.mel_lengths, source.mel_lengths, "mel_lengths");
  copy(target.stop, source.stop, "stop");
  copy(target.linear, source.linear, "linear");
  copy(target.speakers, source.speakers, "speakers");
  target.ids = source.ids;
  target.text_length_values = source.text_length_values;
  target.mel_length_values = source.mel_length_values;
  target.real_frame_count = source.real_frame_count;
  target.attention_pair_count = source.attention_pair_count;
  target.global_real_frames = source.global_real_frames;
  target.global_attention_pairs = source.global_attention_pairs;
  // From a fresh host tensor: a non-blocking copy may still be reading it after we return, so it
  // must not be a buffer this function reuses.
  const torch::Tensor counts =
      torch::tensor({source.real_frame_count, source.attention_pair_count,
                     source.global_real_frames, source.global_attention_pairs},
                    torch::kInt64);
  target.counts.copy_(counts, false);
}

}  // namespace tts::data

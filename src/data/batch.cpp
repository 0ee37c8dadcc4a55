#include "tts/data/batch.h"

#include <fmt/ranges.h>
#include <torch/torch.h>

#include <algorithm>

#include "tts/core/error.h"
#include "tts/core/frames.h"
#include "tts/core/hash.h"

namespace tts::data {

int64_t Batch::padded_frames() const { return mel.size(0) * mel.size(1); }

std::vector<std::pair<const char*, torch::Tensor*>> Batch::tensors() {
  return {{"text", &text},         {"text_lengths", &text_lengths},
          {"mel", &mel},           {"mel_lengths", &mel_lengths},
          {"stop", &stop},         {"linear", &linear},
          {"speakers", &speakers}, {"utterance_keys", &utterance_keys},
          {"counts", &counts}};
}

std::vector<std::pair<const char*, const torch::Tensor*>> Batch::tensors() const {
  std::vector<std::pair<const char*, const torch::Tensor*>> out;
  for (const auto& [name, tensor] : const_cast<Batch*>(this)->tensors()) {
    out.emplace_back(name, tensor);
  }
  return out;
}

namespace {

// The batch with `f` applied to each of its defined tensors (undefined ones stay undefined).
template <typename F>
Batch map_tensors(const Batch& in, F f) {
  auto apply = [&](const torch::Tensor& t) { return t.defined() ? f(t) : torch::Tensor(); };
  Batch out = in;  // the host-side fields as they are
  for (const auto& field : out.tensors()) *field.second = apply(*field.second);
  return out;
}

}  // namespace

Batch Batch::to(const torch::Device& device, bool non_blocking) const {
  return map_tensors(*this, [&](const torch::Tensor& t) { return t.to(device, non_blocking); });
}

Batch Batch::pin_memory() const {
  return map_tensors(*this, [](const torch::Tensor& t) { return t.pin_memory(); });
}

Batch collate(std::vector<Example> examples, int n_frames_per_step, PadTo pad_to) {
  TTS_CHECK(!examples.empty(), "collate: no utterances to batch");
  TTS_CHECK(n_frames_per_step >= 1, "collate: n_frames_per_step must be >= 1, found {}",
            n_frames_per_step);
  std::stable_sort(examples.begin(), examples.end(), [](const Example& a, const Example& b) {
    return a.text.size() > b.text.size();
  });
  const int64_t batch = static_cast<int64_t>(examples.size());
  const bool with_linear = examples.front().linear.defined();
  const bool with_speakers = examples.front().speaker >= 0;
  const int64_t n_mels = examples.front().mel.size(1);
  const int64_t n_linear = with_linear ? examples.front().linear.size(1) : 0;
  int64_t max_text = 0;
  int64_t max_frames = 0;
  for (const auto& e : examples) {
    TTS_CHECK(!e.text.empty(), "utterance {}: empty text", e.id);
    TTS_CHECK(e.mel.dim() == 2 && e.mel.size(1) == n_mels && e.mel.size(0) > 0,
              "utterance {}: mel of shape [{}] in a batch of [frames, {}] mels", e.id,
              fmt::join(e.mel.sizes(), ", "), n_mels);
    TTS_CHECK(e.linear.defined() == with_linear,
              "utterance {}: linear targets present for some utterances of a batch only", e.id);
    if (with_linear) {
      TTS_CHECK(
          e.linear.dim() == 2 && e.linear.size(1) == n_linear && e.linear.size(0) == e.mel.size(0),
          "utterance {}: linear of shape [{}], expected [{}, {}]", e.id,
          fmt::join(e.linear.sizes(), ", "), e.mel.size(0), n_linear);
    }
    TTS_CHECK((e.speaker >= 0) == with_speakers,
              "utterance {}: a speaker row for some utterances of a batch only", e.id);
    max_text = std::max<int64_t>(max_text, static_cast<int64_t>(e.text.size()));
    max_frames = std::max<int64_t>(max_frames, e.mel.size(0));
  }
  const int64_t r = n_frames_per_step;
  TTS_CHECK(pad_to.text >= 0 && pad_to.frames >= 0 && pad_to.frames % r == 0,
            "collate: padding to {} symbols and {} frames, which must be >= 0 and a multiple of "
            "r = {}",
            pad_to.text, pad_to.frames, r);
  max_text = std::max(max_text, pad_to.text);
  const int64_t t_mel = std::max(padded_frames(max_frames, r), pad_to.frames);

  Batch out;
  out.r = r;
  out.text = torch::zeros({batch, max_text}, torch::kInt64);
  out.text_lengths = torch::empty({batch}, torch::kInt64);
  out.mel = torch::zeros({batch, t_mel, n_mels}, torch::kFloat32);
  out.mel_lengths = torch::empty({batch}, torch::kInt64);
  out.stop = torch::zeros({batch, t_mel}, torch::kFloat32);
  if (with_linear) out.linear = torch::zeros({batch, t_mel, n_linear}, torch::kFloat32);
  if (with_speakers) out.speakers = torch::empty({batch}, torch::kInt64);
  out.utterance_keys = torch::empty({batch}, torch::kInt64);
  auto utterance_keys = out.utterance_keys.accessor<int64_t, 1>();
  auto text = out.text.accessor<int64_t, 2>();
  auto text_lengths = out.text_lengths.accessor<int64_t, 1>();
  auto mel_lengths = out.mel_lengths.accessor<int64_t, 1>();
  for (int64_t i = 0; i < batch; ++i) {
    const Example& e = examples[i];
    const int64_t frames = e.mel.size(0);
    for (size_t j = 0; j < e.text.size(); ++j) text[i][static_cast<int64_t>(j)] = e.text[j];
    text_lengths[i] = static_cast<int64_t>(e.text.size());
    mel_lengths[i] = frames;
    out.mel[i].narrow(0, 0, frames).copy_(e.mel);
    if (with_linear) out.linear[i].narrow(0, 0, frames).copy_(e.linear);
    if (with_speakers) out.speakers[i] = e.speaker;
    out.stop[i].narrow(0, frames - 1, t_mel - frames + 1).fill_(1.0f);
    out.ids.push_back(e.id);
    utterance_keys[i] = utterance_key(e.id);
    out.text_length_values.push_back(static_cast<int64_t>(e.text.size()));
    out.mel_length_values.push_back(frames);
    out.real_frame_count += frames;
    out.attention_pair_count += decoder_steps(frames, r) * static_cast<int64_t>(e.text.size());
  }
  return out;
}

}  // namespace tts::data

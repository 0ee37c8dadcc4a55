// `tts-train forward` on a Tacotron-2 checkpoint: the teacher-forced forward in eval mode (the
// prenet's dropout as the checkpoint's config says: model.p_prenet_dropout 0 makes it
// deterministic), as NVIDIA's model.forward computes it.
#include <fmt/ranges.h>
#include <torch/torch.h>

#include "tts/core/error.h"
#include "tts/models/tacotron2/layers/network.h"
#include "tts/models/tacotron2/speaking/trained_model.h"
#include "tts/models/tacotron2/training/family.h"

namespace tts::tacotron2 {
namespace {

torch::Tensor lengths_or_full(const std::map<std::string, torch::Tensor>& inputs,
                              const std::string& name, int64_t batch, int64_t full) {
  auto found = inputs.find(name);
  if (found == inputs.end()) return torch::full({batch}, full, torch::kInt64);
  torch::Tensor lengths = found->second.round().to(torch::kInt64).reshape({-1});
  TTS_USAGE_CHECK(lengths.size(0) == batch && lengths.min().item<int64_t>() >= 1 &&
                      lengths.max().item<int64_t>() <= full,
                  "forward: input {}: expected {} lengths in [1, {}], found [{}]", name, batch,
                  full, fmt::join(lengths.sizes(), ", "));
  return lengths;
}

// The speaker rows of a model of several speakers: input `speakers` ([batch] rows of the
// checkpoint's speaker table, which inspect lists); undefined for a one-speaker model.
torch::Tensor speaker_rows(const std::map<std::string, torch::Tensor>& inputs,
                           const TrainedModel& trained, int64_t batch) {
  auto found = inputs.find("speakers");
  const int64_t rows = trained.model->n_speakers();
  if (rows == 0) {
    TTS_USAGE_CHECK(found == inputs.end(),
                    "forward: input speakers: {} is a one-speaker model (model.speakers: 0)",
                    trained.source);
    return {};
  }
  TTS_USAGE_CHECK(found != inputs.end(),
                  "forward: {} is a model of several speakers: give input speakers, [{}] rows of "
                  "its speaker table ({})",
                  trained.source, batch, fmt::join(trained.speakers, ", "));
  torch::Tensor ids = found->second.round().to(torch::kInt64).reshape({-1});
  TTS_USAGE_CHECK(
      ids.size(0) == batch && ids.min().item<int64_t>() >= 0 && ids.max().item<int64_t>() < rows,
      "forward: input speakers: expected {} rows in [0, {}), found [{}]", batch, rows,
      fmt::join(ids.sizes(), ", "));
  return ids;
}

std::map<std::string, torch::Tensor> run(const models::TrainedCheckpoint& read,
                                         const std::map<std::string, torch::Tensor>& inputs) {
  TrainedModel trained = trained_model(read, torch::kCPU);
  const int64_t n_mels = trained.config.audio.n_mels;
  torch::Tensor text = inputs.at("text");
  torch::Tensor mel = inputs.at("mel");
  // One utterance: text [T_text], mel ours [frames, n_mels]; a batch: NVIDIA's text [B, T_text]
  // and mel [B, n_mels, frames].
  const bool batched = text.dim() == 2;
  TTS_USAGE_CHECK(text.dim() == 1 || batched,
                  "forward: input text: expected symbol ids [T_text] or [batch, T_text], found "
                  "[{}]",
                  fmt::join(text.sizes(), ", "));
  if (!batched) {
    text = text.unsqueeze(0);
    TTS_USAGE_CHECK(mel.dim() == 2 && mel.size(1) == n_mels,
                    "forward: input mel: expected [frames, {}] for one utterance, found [{}]",
                    n_mels, fmt::join(mel.sizes(), ", "));
    mel = mel.unsqueeze(0);
  } else {
    TTS_USAGE_CHECK(mel.dim() == 3 && mel.size(0) == text.size(0) && mel.size(1) == n_mels,
                    "forward: input mel: expected [{}, {}, frames] (NVIDIA's layout, one per "
                    "text), found [{}]",
                    text.size(0), n_mels, fmt::join(mel.sizes(), ", "));
    mel = mel.transpose(1, 2);
  }
  const int64_t symbols = trained.model->n_symbols();
  torch::Tensor ids = text.round().to(torch::kInt64);
  TTS_USAGE_CHECK(ids.min().item<int64_t>() >= 0 && ids.max().item<int64_t>() < symbols,
                  "forward: input text: symbol ids must be in [0, {}) (the checkpoint's table)",
                  symbols);
  const int64_t batch = ids.size(0);
  torch::Tensor text_lengths = lengths_or_full(inputs, "text_lengths", batch, ids.size(1));
  torch::Tensor mel_lengths = lengths_or_full(inputs, "mel_lengths", batch, mel.size(1));
  // The decoder reads whole steps of r frames: pad to a multiple of r, cut the outputs back.
  const int64_t frames = mel.size(1);
  const int64_t r = trained.model->reduction_factor();
  const int64_t padded = (frames + r - 1) / r * r;
  if (padded != frames) mel = torch::constant_pad_nd(mel, {0, 0, 0, padded - frames});
  torch::NoGradGuard no_grad;
  const torch::Tensor speakers = speaker_rows(inputs, trained, batch);
  TacotronOutput out =
      trained.model->forward(ids, text_lengths, mel.contiguous(), mel_lengths, {}, speakers);
  out.mel = out.mel.narrow(1, 0, frames);
  out.mel_postnet = out.mel_postnet.narrow(1, 0, frames);
  out.gate = out.gate.narrow(1, 0, frames);
  if (!batched) {
    return {{"mel", out.mel[0]},
            {"mel_postnet", out.mel_postnet[0]},
            {"gate", out.gate[0]},
            {"alignments", out.alignments[0]}};
  }
  return {{"mel", out.mel.transpose(1, 2)},
          {"mel_postnet", out.mel_postnet.transpose(1, 2)},
          {"gate", out.gate},
          {"alignments", out.alignments}};
}

}  // namespace

models::ForwardRole forward_role() {
  models::ForwardRole role;
  role.inputs = {{"text", "symbol ids [T_text], or [batch, T_text] (NVIDIA's)"},
                 {"mel", "the target mel [frames, n_mels], or [batch, n_mels, frames] (NVIDIA's)"},
                 {"text_lengths", "[batch] texts' lengths (default: all of T_text)", false},
                 {"mel_lengths", "[batch] mels' lengths (default: all frames)", false},
                 {"speakers",
                  "[batch] speaker rows, for a model of several speakers (model.speakers; the "
                  "checkpoint's speaker table, as inspect lists it, in row order)",
                  false}};
  role.outputs = {
      {"mel", "the decoder's mel, in the input mel's layout"},
      {"mel_postnet", "the mel after the postnet, in the input mel's layout"},
      {"gate", "stop-token logits [frames], or [batch, frames]"},
      {"alignments", "attention weights [decoder steps, T_text], or [batch, steps, T_text]"}};
  role.run = run;
  return role;
}

}  // namespace tts::tacotron2

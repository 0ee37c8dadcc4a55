// Overfitting: a tiny Tacotron-2 learns two fixed synthetic utterances. Each symbol has its own
// random mel frame, held for 3 frames, so the targets can only be predicted by attending to the
// text in order: the loss must fall and the attention become near-diagonal (helped, as in a real
// run that uses it, by the guided attention loss).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "tts/config/config.h"
#include "tts/models/tacotron2/layers/network.h"
#include "tts/models/tacotron2/training/loss.h"

namespace {

constexpr int64_t kSymbols = 12;
constexpr int64_t kMels = 8;
constexpr int64_t kFramesPerSymbol = 3;

// Share of attention mass within `band` text positions of the diagonal, over valid steps.
double diagonal_share(const torch::Tensor& alignments, const torch::Tensor& text_lengths,
                      const torch::Tensor& decoder_lengths, int64_t band) {
  double total = 0;
  int64_t count = 0;
  for (int64_t b = 0; b < alignments.size(0); ++b) {
    int64_t n_text = text_lengths[b].item<int64_t>();
    int64_t n_steps = decoder_lengths[b].item<int64_t>();
    for (int64_t n = 0; n < n_steps; ++n) {
      int64_t center = n * n_text / n_steps;
      int64_t lo = std::max<int64_t>(0, center - band);
      int64_t hi = std::min<int64_t>(n_text, center + band + 1);
      total += alignments[b][n].narrow(0, lo, hi - lo).sum().item<double>();
      ++count;
    }
  }
  return total / static_cast<double>(count);
}

}  // namespace

TEST(Overfit, TinyModelLearnsTwoUtterancesWithDiagonalAttention) {
  torch::manual_seed(42);
  torch::set_num_threads(1);
  tts::config::ModelOptions o;
  o.symbols_embedding_dim = o.encoder_embedding_dim = 32;
  o.encoder_n_convolutions = 1;
  o.n_frames_per_step = 1;
  o.decoder_rnn_dim = o.attention_rnn_dim = 64;
  o.prenet_dim = 32;
  o.attention_dim = 32;
  o.attention_location_n_filters = 8;
  o.attention_location_kernel_size = 15;
  o.postnet_embedding_dim = 32;
  o.postnet_n_convolutions = 2;
  o.p_prenet_dropout = 0.2;
  tts::tacotron2::Tacotron2 model(o, kSymbols, kMels, 0);

  std::vector<std::vector<int64_t>> texts = {{1, 5, 2, 9, 3, 7, 4, 11}, {6, 2, 10, 8, 1, 3}};
  torch::Tensor symbol_frames = torch::randn({kSymbols, kMels});
  int64_t max_text = 8, max_frames = max_text * kFramesPerSymbol;
  torch::Tensor text = torch::zeros({2, max_text}, torch::kInt64);
  torch::Tensor mel = torch::zeros({2, max_frames, kMels});
  torch::Tensor stop = torch::zeros({2, max_frames});
  std::vector<int64_t> text_lengths, mel_lengths;
  for (int64_t b = 0; b < 2; ++b) {
    int64_t n = static_cast<int64_t>(texts[b].size());
    text_lengths.push_back(n);
    mel_lengths.push_back(n * kFramesPerSymbol);
    for (int64_t i = 0; i < n; ++i) {
      text[b][i] = texts[b][i];
      mel[b].narrow(0, i * kFramesPerSymbol, kFramesPerSymbol).copy_(symbol_frames[texts[b][i]]);
    }
    stop[b].narrow(0, n * kFramesPerSymbol - 1, max_frames - n * kFramesPerSymbol + 1).fill_(1);
  }
  torch::Tensor text_len = torch::tensor(text_lengths);
  torch::Tensor mel_len = torch::tensor(mel_lengths);
  tts::tacotron2::Targets targets{mel, mel_len, stop, {}};

  tts::tacotron2::LossOptions train = tts::tacotron2::loss_options({});
  train.guided_attention_weight = 1.0;
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(3e-3));
  double first = 0, last = 0;
  torch::Tensor alignments;
  for (int step = 0; step < 200; ++step) {
    tts::tacotron2::TacotronOutput out = model->forward(text, text_len, mel, mel_len);
    auto loss = tts::tacotron2::compute_loss(out, targets, text_len, train);
    optimizer.zero_grad();
    loss.total.backward();
    torch::nn::utils::clip_grad_norm_(model->parameters(), 1.0);
    optimizer.step();
    double value = loss.mel_postnet.item<double>();
    if (step == 0) first = value;
    last = value;
    alignments = out.alignments.detach();
  }
  EXPECT_LT(last, first / 5) << "mel (postnet) loss " << first << " -> " << last;
  double share = diagonal_share(alignments, text_len, mel_len, 1);
  EXPECT_GT(share, 0.7) << "attention mass near the diagonal; mel loss " << first << " -> " << last;
}

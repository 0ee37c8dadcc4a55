#include <gtest/gtest.h>
#include <torch/torch.h>

#include "tts/core/error.h"
#include "tts/core/frames.h"
#include "tts/models/tacotron2/layers/network.h"
#include "tts/models/tacotron2/training/alignment_metrics.h"

namespace {

using tts::tacotron2::alignment_scores;

torch::Tensor lengths(std::initializer_list<int64_t> values) {
  return torch::tensor(std::vector<int64_t>(values), torch::kLong);
}

// A [1, steps, tokens] alignment where decoder step s attends token token_of[s] only.
torch::Tensor hard_alignment(const std::vector<int64_t>& token_of, int64_t tokens) {
  auto a = torch::zeros({1, static_cast<int64_t>(token_of.size()), tokens});
  for (size_t s = 0; s < token_of.size(); ++s) a[0][static_cast<int64_t>(s)][token_of[s]] = 1.0;
  return a;
}

}  // namespace

TEST(AlignmentScores, APerfectDiagonalScoresOneOnBoth) {
  // Two decoder steps per token, each attending one token.
  auto a = hard_alignment({0, 0, 1, 1, 2, 2, 3, 3}, 4);
  auto s = alignment_scores(a, lengths({8}), lengths({4}));
  EXPECT_DOUBLE_EQ(s.diagonal, 1.0);
  EXPECT_DOUBLE_EQ(s.focus, 1.0);
  EXPECT_EQ(s.utterances, 1);
}

TEST(AlignmentScores, UniformAttentionScoresOneOverTheTokens) {
  auto a = torch::full({1, 6, 5}, 1.0 / 5);
  auto s = alignment_scores(a, lengths({6}), lengths({5}));
  EXPECT_NEAR(s.diagonal, 1.0 / 5, 1e-6);
  EXPECT_NEAR(s.focus, 1.0 / 5, 1e-6);
}

TEST(AlignmentScores, ASkippedTokenLowersTheDiagonalScoreNotTheFocusRate) {
  auto a = hard_alignment({0, 0, 1, 1, 3, 3}, 4);  // token 2 never attended
  auto s = alignment_scores(a, lengths({6}), lengths({4}));
  EXPECT_DOUBLE_EQ(s.diagonal, 3.0 / 4);
  EXPECT_DOUBLE_EQ(s.focus, 1.0);
}

TEST(AlignmentScores, PaddingStepsAndTokensAreMaskedByTheRealLengths) {
  // Item 0 is perfect over its 3 steps and 3 tokens; its padding holds weights that would count
  // as a skipped token (column 3) and as unfocused steps (rows 3 and 4) if not masked.
  auto a = torch::zeros({2, 5, 4});
  for (int64_t s = 0; s < 3; ++s) a[0][s][s] = 1.0;
  a[0][3].fill_(0.25);
  a[0][4].fill_(0.25);
  // Item 1 uses all 5 steps and 4 tokens, uniformly: 1/4 on both scores.
  a[1].fill_(0.25);
  auto s = alignment_scores(a, lengths({3, 5}), lengths({3, 4}));
  EXPECT_NEAR(s.diagonal, (1.0 + 0.25) / 2, 1e-6);
  EXPECT_NEAR(s.focus, (1.0 + 0.25) / 2, 1e-6);
  EXPECT_EQ(s.utterances, 2);
}

TEST(AlignmentScores, DecoderStepsRoundFramesUpToTheReductionFactor) {
  // The tensor form the scores are called with agrees with the scalar one of core/frames.h.
  auto steps = tts::tacotron2::decoder_steps(lengths({1, 6, 7}), 3);
  EXPECT_EQ(steps[0].item<int64_t>(), 1);
  EXPECT_EQ(steps[1].item<int64_t>(), 2);
  EXPECT_EQ(steps[2].item<int64_t>(), 3);
  for (int64_t frames : {1, 6, 7}) {
    auto one = tts::tacotron2::decoder_steps(lengths({frames}), 3)[0].item<int64_t>();
    EXPECT_EQ(one, tts::decoder_steps(frames, 3));
  }
  tts::tacotron2::TacotronOutput output;
  output.mel_lengths = lengths({1, 6, 7});
  output.r = 3;
  EXPECT_TRUE(torch::equal(output.decoder_lengths(), steps));
}

TEST(AlignmentScores, MismatchedLengthsAreAnError) {
  EXPECT_THROW(alignment_scores(torch::zeros({2, 3, 4}), lengths({3}), lengths({4, 4})),
               tts::Error);
}

// Tacotron-2 with a speaker embedding (model.speakers): zero rows compute exactly the one-speaker
// model's outputs, a speaker's learned row changes them, and the speaker ids are required by a
// model of several speakers and refused by a one-speaker model.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>
#include <vector>

#include "small_options.h"
#include "tts/config/config.h"
#include "tts/core/error.h"
#include "tts/models/tacotron2/layers/network.h"
#include "tts/train/family.h"

namespace {

using tts::config::ModelOptions;
using tts::tacotron2::Tacotron2;
using tts::tacotron2::TacotronOutput;

constexpr int64_t kSymbols = 30;
constexpr int64_t kMels = 10;

ModelOptions small_options(int speakers) {
  ModelOptions o = tacotron2_test::small_options();
  o.max_decoder_steps = 12;
  o.gate_threshold = 0.999;  // inference runs to max_decoder_steps
  o.p_encoder_dropout = o.p_prenet_dropout = o.p_attention_dropout = o.p_decoder_dropout =
      o.p_postnet_dropout = 0;
  o.speakers = speakers;
  o.speaker_embedding_dim = 6;
  return o;
}

// The model of `speakers` rows built from seed 5: the one-speaker model's parameters, then the
// speaker tensors, registered last.
Tacotron2 model_of(int speakers) {
  torch::manual_seed(5);
  Tacotron2 model(small_options(speakers), kSymbols, kMels, 0);
  model->eval();
  return model;
}

struct Inputs {
  torch::Tensor text, text_lengths, mel, mel_lengths;
};

Inputs inputs() {
  torch::manual_seed(11);
  Inputs in;
  in.text = torch::randint(1, kSymbols, {3, 9}, torch::kInt64);
  in.text[2].narrow(0, 6, 3).zero_();
  in.text_lengths = torch::tensor({9, 9, 6}, torch::kInt64);
  in.mel = torch::randn({3, 14, kMels});
  in.mel_lengths = torch::tensor({14, 11, 8}, torch::kInt64);
  return in;
}

void expect_equal(const TacotronOutput& a, const TacotronOutput& b) {
  EXPECT_TRUE(torch::equal(a.mel, b.mel));
  EXPECT_TRUE(torch::equal(a.mel_postnet, b.mel_postnet));
  EXPECT_TRUE(torch::equal(a.gate, b.gate));
  EXPECT_TRUE(torch::equal(a.alignments, b.alignments));
}

}  // namespace

TEST(Tacotron2Speakers, ZeroRowsComputeExactlyTheOneSpeakerModel) {
  torch::NoGradGuard no_grad;
  Tacotron2 one = model_of(0);
  Tacotron2 several = model_of(4);
  EXPECT_EQ(tts::train::count_parameters(*several) - tts::train::count_parameters(*one),
            4 * 6 + 6 * 16);
  EXPECT_DOUBLE_EQ(tts::tacotron2::parameter_count_of(small_options(4), kSymbols, kMels, 0, 0),
                   static_cast<double>(tts::train::count_parameters(*several)));
  // Every tensor of the one-speaker model, the same in the model of several speakers.
  const auto shared = several->named_parameters();
  for (const auto& item : one->named_parameters()) {
    ASSERT_NE(shared.find(item.key()), nullptr) << item.key();
    EXPECT_TRUE(torch::equal(item.value(), shared[item.key()])) << item.key();
  }
  EXPECT_EQ(one->named_parameters().find("speaker_embedding.weight"), nullptr);
  EXPECT_TRUE(torch::equal(shared["speaker_embedding.weight"], torch::zeros({4, 6})));

  const Inputs in = inputs();
  const torch::Tensor speakers = torch::tensor({3, 0, 1}, torch::kInt64);
  expect_equal(one->forward(in.text, in.text_lengths, in.mel, in.mel_lengths),
               several->forward(in.text, in.text_lengths, in.mel, in.mel_lengths, {}, speakers));
  const TacotronOutput free_one = one->infer(in.text, in.text_lengths);
  const TacotronOutput free_several = several->infer(in.text, in.text_lengths, {}, speakers);
  expect_equal(free_one, free_several);
  EXPECT_TRUE(torch::equal(free_one.mel_lengths, free_several.mel_lengths));
}

TEST(Tacotron2Speakers, EachSpeakersRowChangesItsUtterancesOnly) {
  torch::NoGradGuard no_grad;
  Tacotron2 model = model_of(3);
  model->named_parameters()["speaker_embedding.weight"].copy_(torch::randn({3, 6}));
  const Inputs in = inputs();
  auto mel_of = [&](std::vector<int64_t> ids) {
    return model
        ->forward(in.text, in.text_lengths, in.mel, in.mel_lengths, {},
                  torch::tensor(ids, torch::kInt64))
        .mel_postnet;
  };
  const torch::Tensor a = mel_of({0, 0, 0});
  const torch::Tensor b = mel_of({0, 2, 0});
  // Utterance 1 speaks with another voice; the others are computed as they were.
  EXPECT_FALSE(torch::allclose(a[1], b[1]));
  EXPECT_TRUE(torch::equal(a[0], b[0]));
  EXPECT_TRUE(torch::equal(a[2], b[2]));
  EXPECT_FALSE(torch::allclose(mel_of({1, 1, 1})[0], a[0]));
}

TEST(Tacotron2Speakers, SpeakerIdsAreRequiredBySeveralSpeakersAndRefusedByOne) {
  torch::NoGradGuard no_grad;
  const Inputs in = inputs();
  auto message = [](const auto& run) {
    try {
      run();
    } catch (const tts::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  Tacotron2 one = model_of(0);
  const std::string given = message([&] {
    one->forward(in.text, in.text_lengths, in.mel, in.mel_lengths, {},
                 torch::zeros({3}, torch::kInt64));
  });
  EXPECT_NE(given.find("one-speaker model (model.speakers: 0)"), std::string::npos) << given;
  Tacotron2 several = model_of(2);
  const std::string missing = message([&] { several->infer(in.text, in.text_lengths); });
  EXPECT_NE(missing.find("a model of 2 speakers (model.speakers) needs"), std::string::npos)
      << missing;
  const std::string shape = message(
      [&] { several->infer(in.text, in.text_lengths, {}, torch::zeros({2}, torch::kInt64)); });
  EXPECT_NE(shape.find("expected speaker ids int64 [3]"), std::string::npos) << shape;
}

TEST(Tacotron2Speakers, TheOptionsAreBounded) {
  ModelOptions options = small_options(0);
  options.validate();
  options.speakers = -1;
  EXPECT_THROW(options.validate(), tts::Error);
  options.speakers = tts::config::kMaxSpeakers + 1;
  EXPECT_THROW(options.validate(), tts::Error);
  options.speakers = tts::config::kMaxSpeakers;
  options.speaker_embedding_dim = 0;
  EXPECT_THROW(options.validate(), tts::Error);
}

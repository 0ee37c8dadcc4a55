// Tacotron-2 as a SpeechDecoder: the chunks of every plan, concatenated, are the sentence's
// postnet mel as model.infer gives it alone (up to rounding), with seams everywhere (one frame,
// odd sizes, one chunk), r = 1 and 2, either convolution padding, with a linear head; and
// sentences that join and leave a batch of fewer rows than sentences (continuous batching) are
// each spoken as alone.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "small_options.h"
#include "tts/models/keyed_dropout.h"
#include "tts/models/tacotron2/layers/network.h"
#include "tts/models/tacotron2/speaking/speech_decoder.h"

namespace {

using tts::models::ChunkPlan;

constexpr int64_t kSymbols = 30;
constexpr int64_t kMels = 10;
constexpr int64_t kLinear = 9;
constexpr int64_t kSeed = 1234;
constexpr int64_t kStep = 77;

struct Reference {
  torch::Tensor mel;  // [frames, n_mels]
  torch::Tensor linear;
};

tts::tacotron2::TrainedModel make_model(int r, bool zero_padding, bool linear) {
  tts::config::ModelOptions o = tacotron2_test::small_options();
  o.n_frames_per_step = r;
  o.max_decoder_steps = 40;
  o.zero_padding_in_convolutions = zero_padding;
  o.predict_linear = linear;
  o.cbhg_kernels = 3;
  o.cbhg_conv_channels = 8;
  o.cbhg_projection_dim = 12;
  o.cbhg_highway_layers = 2;
  o.cbhg_rnn_units = 8;
  torch::manual_seed(5);
  tts::tacotron2::TrainedModel trained;
  trained.config.model = o;
  trained.config.train.seed = kSeed;
  trained.step = kStep;
  trained.model = tts::tacotron2::Tacotron2(o, kSymbols, kMels, linear ? kLinear : 0);
  trained.model->eval();
  torch::NoGradGuard no_grad;
  // Stop tokens that fire at different steps for different texts.
  for (auto& p : trained.model->named_parameters()) {
    if (p.key() == "decoder.gate_layer.weight") p.value().normal_(0, 4.0);
    if (p.key() == "decoder.gate_layer.bias") p.value().fill_(-2.0);
  }
  return trained;
}

std::vector<int64_t> text_of(int64_t symbols, int64_t seed) {
  torch::manual_seed(seed);
  const torch::Tensor t = torch::randint(1, kSymbols, {symbols}, torch::kInt64);
  return {t.data_ptr<int64_t>(), t.data_ptr<int64_t>() + symbols};
}

// The sentence alone through model.infer, keyed as the decoder keys it.
Reference alone(tts::tacotron2::TrainedModel& trained, const std::vector<int64_t>& ids,
                const std::string& key) {
  torch::NoGradGuard no_grad;
  const tts::models::KeyedDropout dropout(kSeed, kStep, {key});
  tts::tacotron2::BatchContext context;
  context.dropout = &dropout;
  const auto out = trained.model->infer(
      torch::tensor(ids, torch::kInt64).unsqueeze(0),
      torch::full({1}, static_cast<int64_t>(ids.size()), torch::kInt64), context);
  const int64_t frames = out.mel_lengths[0].item<int64_t>();
  Reference ref{out.mel_postnet[0].narrow(0, 0, frames)};
  if (out.linear.defined()) ref.linear = out.linear[0].narrow(0, 0, frames);
  return ref;
}

struct Spoken {
  std::map<size_t, std::vector<torch::Tensor>> chunks;
  std::map<size_t, tts::models::DecodedUtterance> records;
  int64_t most_rows = 0;
};

Spoken speak(tts::tacotron2::TrainedModel trained, const std::vector<std::vector<int64_t>>& texts,
             const std::vector<std::string>& keys, ChunkPlan plan, int64_t rows) {
  auto decoder = tts::tacotron2::speech_decoder(std::move(trained), {rows, plan});
  for (size_t i = 0; i < texts.size(); ++i) decoder->add({texts[i], keys[i], -1});
  Spoken spoken;
  int guard = 0;
  while (!decoder->idle() && ++guard < 10000) {
    for (auto& chunk : decoder->step()) {
      spoken.chunks[chunk.utterance].push_back(chunk.mel);
      if (chunk.last) spoken.records[chunk.utterance] = decoder->take(chunk.utterance);
    }
    spoken.most_rows = std::max(spoken.most_rows, decoder->decoding());
  }
  EXPECT_TRUE(decoder->idle());
  return spoken;
}

}  // namespace

TEST(SpeechDecoder, ChunksOfEveryPlanAreTheSentencesMelAlone) {
  const std::vector<ChunkPlan> plans{ChunkPlan::whole(),     {1, 1}, {3, 3}, {5, 7},
                                     ChunkPlan::streaming(), {2, 64}};
  for (int r : {1, 2}) {
    for (bool zero_padding : {true, false}) {
      for (bool linear : {false, true}) {
        SCOPED_TRACE("r " + std::to_string(r) + (zero_padding ? ", zero padding" : ", NVIDIA's") +
                     (linear ? ", linear head" : ""));
        tts::tacotron2::TrainedModel trained = make_model(r, zero_padding, linear);
        // A sentence of several chunks, whose stop token fires before max_decoder_steps where one
        // of the first texts tried does.
        std::vector<int64_t> ids;
        Reference ref;
        for (int64_t seed = 3;
             seed < 200 && !(ref.mel.defined() && ref.mel.size(0) > 6 && ref.mel.size(0) < 40 * r);
             ++seed) {
          ids = text_of(5 + seed % 7, seed);
          ref = alone(trained, ids, "a sentence");
        }
        ASSERT_GT(ref.mel.size(0), 6) << "the test wants several chunks";
        for (const ChunkPlan& plan : plans) {
          SCOPED_TRACE(plan.describe());
          Spoken spoken = speak(trained, {ids}, {"a sentence"}, plan, 1);
          ASSERT_EQ(spoken.records.size(), 1u);
          const torch::Tensor mel = torch::cat(spoken.chunks[0], 0);
          ASSERT_EQ(mel.size(0), ref.mel.size(0));
          EXPECT_TRUE(torch::allclose(mel, ref.mel, 1e-5, 1e-5))
              << (mel - ref.mel).abs().max().item<float>();
          if (!plan.is_whole() && plan.first == 1) {
            EXPECT_GE(spoken.chunks[0].size(), static_cast<size_t>(ref.mel.size(0)) / 2);
          }
          EXPECT_TRUE(torch::equal(spoken.records[0].mel, mel));
          if (linear) {
            ASSERT_TRUE(spoken.records[0].linear.defined());
            EXPECT_TRUE(torch::allclose(spoken.records[0].linear, ref.linear, 1e-4, 1e-5));
          }
        }
      }
    }
  }
}

TEST(SpeechDecoder, SentencesJoinAndLeaveTheBatchAndEachIsSpokenAsAlone) {
  tts::tacotron2::TrainedModel trained = make_model(1, true, false);
  std::vector<std::vector<int64_t>> texts;
  std::vector<std::string> keys;
  for (int i = 0; i < 5; ++i) {
    texts.push_back(text_of(4 + 3 * i, 10 + i));
    keys.push_back("sentence " + std::to_string(i));
  }
  std::vector<Reference> refs;
  std::set<int64_t> lengths;
  for (size_t i = 0; i < texts.size(); ++i) {
    refs.push_back(alone(trained, texts[i], keys[i]));
    lengths.insert(refs.back().mel.size(0));
  }
  ASSERT_GT(lengths.size(), 1u) << "sentences should stop at different steps: " << *lengths.begin();
  for (const ChunkPlan& plan : {ChunkPlan::whole(), ChunkPlan{3, 6}}) {
    SCOPED_TRACE(plan.describe());
    Spoken spoken = speak(trained, texts, keys, plan, 2);
    EXPECT_EQ(spoken.most_rows, 2);
    ASSERT_EQ(spoken.records.size(), texts.size());
    for (size_t i = 0; i < texts.size(); ++i) {
      const torch::Tensor mel = torch::cat(spoken.chunks[i], 0);
      ASSERT_EQ(mel.size(0), refs[i].mel.size(0)) << i;
      EXPECT_TRUE(torch::allclose(mel, refs[i].mel, 1e-5, 1e-5))
          << i << ": " << (mel - refs[i].mel).abs().max().item<float>();
      EXPECT_EQ(spoken.records[i].alignment.size(1), static_cast<int64_t>(texts[i].size()));
    }
  }
}

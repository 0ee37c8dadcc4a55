// Rendering a generated utterance (validation's sample, `tts-train synthesize`): cutting it from
// model.infer's output, and Griffin-Lim of a spectrum too short for one STFT frame.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "tts/audio/audio_processor.h"
#include "tts/config/config.h"
#include "tts/core/error.h"
#include "tts/models/tacotron2/speaking/render.h"

using namespace tts::tacotron2;

TEST(Render, AShortGeneratedSpectrogramIsPaddedUntilGriffinLimCanRenderIt) {
  tts::config::AudioOptions audio;  // n_fft 1024, hop 256: 5 frames make one STFT frame
  tts::audio::AudioProcessor processor(audio);
  auto two_frames = torch::full({2, audio.n_mels}, -3.0f);
  two_frames[1].fill_(-1.0f);
  EXPECT_THROW(processor.mel_to_wav(two_frames), tts::Error);  // what killed the one-step run

  auto padded = tts::audio::padded_for_griffin_lim(two_frames, audio);
  ASSERT_EQ(padded.size(0), 5);
  EXPECT_TRUE(torch::equal(padded.slice(0, 0, 2), two_frames));
  EXPECT_TRUE(torch::all(padded.slice(0, 2) == -3.0f).item<bool>());  // the quietest value
  std::vector<float> samples = processor.mel_to_wav(padded);
  EXPECT_GE(samples.size(), static_cast<size_t>(audio.n_fft));

  auto long_enough = torch::zeros({7, audio.n_mels});
  EXPECT_EQ(tts::audio::padded_for_griffin_lim(long_enough, audio).size(0), 7);
  EXPECT_THROW(tts::audio::padded_for_griffin_lim(torch::zeros({0, audio.n_mels}), audio),
               tts::Error);
}

namespace {

// What model.infer returns for a batch of two: item 0 stopped after 2 frames, item 1 after 6.
tts::tacotron2::TacotronOutput inferred(const tts::config::AudioOptions& audio, bool linear) {
  tts::tacotron2::TacotronOutput output;
  output.mel_postnet = torch::full({2, 6, audio.n_mels}, -4.0f);
  output.gate = torch::full({2, 6}, -5.0f);
  output.gate.select(1, 1).fill_(5.0f);
  output.alignments = torch::full({2, 3, 4}, 0.25f);
  if (linear) output.linear = torch::full({2, 6, audio.n_linear()}, -4.0f);
  output.mel_lengths = torch::tensor({int64_t{2}, int64_t{6}});
  return output;
}

}  // namespace

TEST(Render, AGeneratedUtteranceIsCutToItsFrames) {
  tts::config::AudioOptions audio;
  GeneratedUtterance first = generated_utterance(inferred(audio, false), 0);
  EXPECT_EQ(first.frames, 2);
  EXPECT_EQ(first.mel.sizes(), (std::vector<int64_t>{2, audio.n_mels}));
  EXPECT_FALSE(first.linear.defined());
  ASSERT_EQ(first.stop.size(0), 2);
  EXPECT_GT(first.stop[1].item<float>(), 0.99f);  // a probability, not the logit
  EXPECT_EQ(first.alignment.sizes(), (std::vector<int64_t>{3, 4}));

  GeneratedUtterance second = generated_utterance(inferred(audio, true), 1);
  EXPECT_EQ(second.frames, 6);
  EXPECT_EQ(second.linear.sizes(), (std::vector<int64_t>{6, audio.n_linear()}));
}

TEST(Render, AudioOfAShortUtteranceIsPaddedAndSaysSo) {
  tts::config::AudioOptions audio;
  tts::audio::AudioProcessor processor(audio);
  for (bool linear : {false, true}) {
    RenderedAudio short_one =
        render_audio(generated_utterance(inferred(audio, linear), 0), processor);
    EXPECT_TRUE(short_one.padded());
    EXPECT_EQ(short_one.vocoded_frames, 5);
    EXPECT_EQ(short_one.padding_note(),
              "stopped after 2 frame(s); padded to 5 frames for Griffin-Lim");
    EXPECT_GE(short_one.samples.size(), static_cast<size_t>(audio.n_fft));

    RenderedAudio long_one =
        render_audio(generated_utterance(inferred(audio, linear), 1), processor);
    EXPECT_FALSE(long_one.padded());
    EXPECT_EQ(long_one.vocoded_frames, 6);
  }
}

TEST(Render, AnUtteranceWithoutFramesIsAnError) {
  tts::config::AudioOptions audio;
  tts::tacotron2::TacotronOutput output = inferred(audio, false);
  output.mel_lengths[0] = 0;
  GeneratedUtterance empty = generated_utterance(output, 0);
  EXPECT_EQ(empty.frames, 0);
  EXPECT_THROW(render_audio(empty, tts::audio::AudioProcessor(audio)), tts::Error);
}

TEST(Render, PlotsOfOneUtteranceShowItsAlignmentMelAndStopToken) {
  tts::config::AudioOptions audio;
  UtterancePlots plots =
      utterance_plots(generated_utterance(inferred(audio, false), 1), 7, "sentence 1", audio, 0.5);
  EXPECT_FALSE(plots.alignment.png.empty());
  EXPECT_EQ(plots.alignment.regions.count("heatmap"), 1u);
  EXPECT_EQ(plots.mel.regions.count("panel0"), 1u);
  EXPECT_EQ(plots.mel.regions.count("stop"), 1u);
}

// Side work of a training step (plots, samples, TensorBoard, metrics) never ends a run: the unit
// parts here, the whole runs in test_train_side_work.cpp.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <stdexcept>

#include "tts/audio/audio_processor.h"
#include "tts/config/config.h"
#include "tts/core/error.h"
#include "tts/train/metrics.h"
#include "tts/train/validation.h"

TEST(SideWork, AFailureIsReportedNotThrown) {
  bool ran = false;
  EXPECT_TRUE(tts::train::side_work("nothing", 3, [&] { ran = true; }));
  EXPECT_TRUE(ran);
  EXPECT_FALSE(tts::train::side_work("a plot", 3, [] { throw tts::Error("disk full"); }));
  EXPECT_FALSE(tts::train::side_work("a plot", 3, [] { throw std::runtime_error("bad"); }));
}

TEST(SideWork, AShortGeneratedSpectrogramIsPaddedUntilGriffinLimCanRenderIt) {
  tts::config::AudioOptions audio;  // n_fft 1024, hop 256: 5 frames make one STFT frame
  tts::audio::AudioProcessor processor(audio);
  auto two_frames = torch::full({2, audio.n_mels}, -3.0f);
  two_frames[1].fill_(-1.0f);
  EXPECT_THROW(processor.mel_to_wav(two_frames), tts::Error);  // what killed the one-step run

  auto padded = tts::train::padded_for_vocoder(two_frames, audio);
  ASSERT_EQ(padded.size(0), 5);
  EXPECT_TRUE(torch::equal(padded.slice(0, 0, 2), two_frames));
  EXPECT_TRUE(torch::all(padded.slice(0, 2) == -3.0f).item<bool>());  // the quietest value
  std::vector<float> samples = processor.mel_to_wav(padded);
  EXPECT_GE(samples.size(), static_cast<size_t>(audio.n_fft));

  auto long_enough = torch::zeros({7, audio.n_mels});
  EXPECT_EQ(tts::train::padded_for_vocoder(long_enough, audio).size(0), 7);
  EXPECT_THROW(tts::train::padded_for_vocoder(torch::zeros({0, audio.n_mels}), audio), tts::Error);
}

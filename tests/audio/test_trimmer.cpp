// Silence trimming against a direct (frame-by-frame) implementation of librosa.effects.trim's
// rule written here, plus the all-silence and edge cases. The librosa indices of the reference
// chirps are checked in test_reference.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "audio_test_util.h"
#include "tts/audio/audio_processor.h"
#include "tts/audio/trimmer.h"
#include "tts/core/error.h"

namespace tts::audio {
namespace {

// librosa.effects.trim spelled out: RMS of zero-padded centred frames, dB re the loudest frame.
TrimRange direct_trim(const std::vector<float>& y, double top_db, int frame, int hop) {
  const int n = static_cast<int>(y.size());
  const int frames = 1 + (n + 2 * (frame / 2) - frame) / hop;
  std::vector<double> rms(frames);
  for (int t = 0; t < frames; ++t) {
    double sum = 0;
    for (int j = 0; j < frame; ++j) {
      const int i = t * hop + j - frame / 2;
      if (i >= 0 && i < n) sum += static_cast<double>(y[i]) * y[i];
    }
    rms[t] = std::sqrt(sum / frame);
  }
  const double ref = *std::max_element(rms.begin(), rms.end());
  int first = -1, last = -1;
  for (int t = 0; t < frames; ++t) {
    double db = 20 * std::log10(std::max(rms[t], 1e-5)) - 20 * std::log10(std::max(ref, 1e-5));
    if (db > -top_db) {
      if (first < 0) first = t;
      last = t;
    }
  }
  return {static_cast<int64_t>(first) * hop, std::min<int64_t>(n, (last + 1) * hop)};
}

std::vector<float> tone_in_silence(int lead, int tone, int tail, double noise_level) {
  std::mt19937 rng(3);
  std::normal_distribution<double> noise(0.0, noise_level);
  std::vector<float> y(lead + tone + tail);
  for (size_t i = 0; i < y.size(); ++i) {
    y[i] = static_cast<float>(noise(rng));
    if (static_cast<int>(i) >= lead && static_cast<int>(i) < lead + tone) {
      y[i] += static_cast<float>(0.5 * std::sin(0.07 * i));
    }
  }
  return y;
}

TEST(Trimmer, MatchesTheDirectRuleOnToneInNoise) {
  for (double top_db : {20.0, 40.0, 60.0}) {
    for (double noise : {0.0, 1e-4, 1e-3}) {
      std::vector<float> y = tone_in_silence(10000, 20000, 7000, noise);
      TrimRange got = Trimmer(top_db, 2048, 512).find(y);
      TrimRange want = direct_trim(y, top_db, 2048, 512);
      EXPECT_EQ(got.start, want.start) << top_db << " dB, noise " << noise;
      EXPECT_EQ(got.end, want.end) << top_db << " dB, noise " << noise;
      EXPECT_LT(got.start, 10000);
      EXPECT_GT(got.end, 30000);
    }
  }
}

TEST(Trimmer, OddFrameAndHopSizes) {
  std::vector<float> y = tone_in_silence(3001, 5003, 2999, 1e-4);
  TrimRange got = Trimmer(30.0, 1001, 257).find(y);
  TrimRange want = direct_trim(y, 30.0, 1001, 257);
  EXPECT_EQ(got.start, want.start);
  EXPECT_EQ(got.end, want.end);
}

TEST(Trimmer, KeepsEverythingWhenThereIsNoSilence) {
  std::vector<float> y = testing::sine(300.0, 1.0, 22050, 0.5);
  TrimRange range = Trimmer(60.0, 2048, 512).find(y);
  EXPECT_EQ(range.start, 0);
  EXPECT_EQ(range.end, static_cast<int64_t>(y.size()));
}

TEST(Trimmer, AllSilenceIsAnErrorNotAnEmptyRange) {
  Trimmer trimmer(60.0, 2048, 512);
  try {
    trimmer.find(std::vector<float>(22050, 0.f));
    FAIL() << "all zeros must throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("all silence"), std::string::npos) << e.what();
  }
  EXPECT_THROW(trimmer.find(std::vector<float>(22050, 1e-7f)), Error);
  EXPECT_THROW(trimmer.find({}), Error);
}

}  // namespace
TEST(AudioProcessorTrimming, SilenceAndClipsTooShortAfterTrimmingAreUnusableWithACategory) {
  config::AudioOptions options;  // trim on, trim_frame_length 2048, hop 512
  options.n_fft = options.win_length = 4096;
  AudioProcessor processor(options);
  try {
    processor.compute(std::vector<float>(22050, 0.0f), false);
    FAIL() << "silence gave features";
  } catch (const UnusableAudio& e) {
    EXPECT_EQ(e.category(), "silent") << e.what();
  }
  // A 100-sample click in 2 s of silence: trimming keeps about one trimming frame, < n_fft.
  std::vector<float> click(44100, 0.0f);
  for (int i = 0; i < 100; ++i) click[22000 + i] = 0.5f * std::sin(0.3f * i);
  try {
    processor.compute(click, false);
    FAIL() << "a click gave features";
  } catch (const UnusableAudio& e) {
    EXPECT_EQ(e.category(), "too short") << e.what();
    EXPECT_NE(std::string(e.what()).find("after trimming (of 44100)"), std::string::npos)
        << e.what();
  }
}

}  // namespace tts::audio

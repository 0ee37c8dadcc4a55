// The analysis window: periodic Hann, centred zero padding to n_fft.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "tts/audio/window.h"
#include "tts/core/error.h"

namespace tts::audio {
namespace {

TEST(HannWindow, IsPeriodicHannWhenWinEqualsNfft) {
  torch::Tensor w = hann_window(1024, 1024);
  ASSERT_EQ(w.size(0), 1024);
  EXPECT_EQ(w.dtype(), torch::kFloat32);
  for (int n : {0, 1, 100, 256, 512, 1023}) {
    EXPECT_NEAR(w[n].item<float>(), 0.5 - 0.5 * std::cos(2 * M_PI * n / 1024), 1e-7) << n;
  }
  // Periodic: the first sample is 0, the last is not (a symmetric window would end at 0 too).
  EXPECT_EQ(w[0].item<float>(), 0.f);
  EXPECT_GT(w[1023].item<float>(), 0.f);
  EXPECT_FLOAT_EQ(w[512].item<float>(), 1.f);
}

TEST(HannWindow, ShorterWindowsAreCentredWithZeros) {
  // Rayhane's win 1100 in n_fft 2048: 474 zeros on each side.
  torch::Tensor w = hann_window(1100, 2048);
  ASSERT_EQ(w.size(0), 2048);
  EXPECT_EQ(w.slice(0, 0, 474).abs().sum().item<float>(), 0.f);
  EXPECT_EQ(w.slice(0, 474 + 1100).abs().sum().item<float>(), 0.f);
  EXPECT_NEAR(w[474 + 1].item<float>(), 0.5 - 0.5 * std::cos(2 * M_PI / 1100), 1e-7);
  EXPECT_FLOAT_EQ(w[474 + 550].item<float>(), 1.f);
  // An odd difference puts the extra zero on the right (librosa.util.pad_center).
  torch::Tensor odd = hann_window(3, 6);
  EXPECT_EQ(odd[0].item<float>(), 0.f);
  EXPECT_EQ(odd[1].item<float>(), 0.f);  // periodic Hann of 3 starts at 0
  EXPECT_FLOAT_EQ(odd[2].item<float>(), 0.75f);
  EXPECT_FLOAT_EQ(odd[3].item<float>(), 0.75f);
  EXPECT_EQ(odd[4].item<float>(), 0.f);
  EXPECT_EQ(odd[5].item<float>(), 0.f);
}

TEST(HannWindow, RejectsWindowsLongerThanNfft) {
  EXPECT_THROW(hann_window(1025, 1024), Error);
  EXPECT_THROW(hann_window(0, 1024), Error);
}

}  // namespace
}  // namespace tts::audio

// The STFT against a naive DFT computed here in double precision, for odd sizes (n_fft 400 /
// 512 / 800, win_length < n_fft) and both padding modes; the inverse; the GPU path.
#include <gtest/gtest.h>
#include <torch/cuda.h>

#include <complex>
#include <random>

#include "audio_test_util.h"
#include "tts/audio/stft.h"
#include "tts/core/error.h"

namespace tts::audio {
namespace {

// |DFT| of librosa-style frames: centred padding by n_fft/2 (numpy "reflect" excludes the edge
// sample; "constant" pads zeros), periodic Hann of win centred in n_fft.
torch::Tensor naive_magnitude(const std::vector<double>& x, int n_fft, int hop, int win,
                              bool reflect) {
  const int n = static_cast<int>(x.size());
  const int pad = n_fft / 2;
  auto sample = [&](int i) {  // index into the unpadded signal
    if (i >= 0 && i < n) return x[i];
    if (!reflect) return 0.0;
    return i < 0 ? x[-i] : x[2 * n - 2 - i];
  };
  std::vector<double> window(n_fft, 0.0);
  const int left = (n_fft - win) / 2;
  for (int i = 0; i < win; ++i) window[left + i] = 0.5 - 0.5 * std::cos(2 * M_PI * i / win);
  const int frames = 1 + (n + 2 * pad - n_fft) / hop;
  const int bins = n_fft / 2 + 1;
  torch::Tensor out = torch::zeros({frames, bins}, torch::kFloat64);
  auto acc = out.accessor<double, 2>();
  for (int t = 0; t < frames; ++t) {
    for (int k = 0; k < bins; ++k) {
      std::complex<double> sum = 0;
      for (int j = 0; j < n_fft; ++j) {
        sum += window[j] * sample(t * hop + j - pad) *
               std::polar(1.0, -2 * M_PI * static_cast<double>(k) * j / n_fft);
      }
      acc[t][k] = std::abs(sum);
    }
  }
  return out;
}

struct Case {
  int n_fft, hop, win;
  std::string pad_mode;
};

class StftSizes : public ::testing::TestWithParam<Case> {};

TEST_P(StftSizes, MagnitudeMatchesNaiveDft) {
  const Case c = GetParam();
  std::mt19937 rng(7);
  std::normal_distribution<double> noise(0.0, 0.3);
  std::vector<double> x(3001);
  for (size_t i = 0; i < x.size(); ++i) x[i] = noise(rng) + 0.5 * std::sin(0.05 * i);
  torch::Tensor signal = torch::tensor(x, torch::kFloat64).to(torch::kFloat32);
  Stft stft(c.n_fft, c.hop, c.win, /*center=*/true, c.pad_mode);
  torch::Tensor magnitude = stft.magnitude(signal);
  torch::Tensor expected = naive_magnitude(x, c.n_fft, c.hop, c.win, c.pad_mode == "reflect");
  ASSERT_EQ(magnitude.sizes(), expected.sizes());
  EXPECT_EQ(magnitude.size(0), stft.n_frames(static_cast<int64_t>(x.size())));
  EXPECT_LE(testing::relative_error(magnitude, expected), 1e-5);
  // Power is the magnitude raised element-wise.
  EXPECT_LE(testing::relative_error(stft.magnitude(signal, 2.0), expected.square()), 1e-5);
}

INSTANTIATE_TEST_SUITE_P(OddSizes, StftSizes,
                         ::testing::Values(Case{400, 100, 400, "reflect"},
                                           Case{400, 160, 320, "constant"},
                                           Case{512, 128, 400, "reflect"},
                                           Case{800, 200, 551, "constant"},
                                           Case{800, 275, 800, "reflect"}));

TEST(Stft, InverseReconstructsTheSignal) {
  std::vector<float> x = testing::sine(440.0, 0.5, 22050, 0.5);
  torch::Tensor signal = torch::from_blob(x.data(), {static_cast<int64_t>(x.size())}).clone();
  for (const std::string& pad_mode : {"reflect", "constant"}) {
    Stft stft(1024, 256, 800, true, pad_mode);
    torch::Tensor back = stft.inverse(stft.forward(signal), signal.size(0));
    EXPECT_LE(testing::relative_error(back, signal), 1e-5) << pad_mode;
  }
}

TEST(Stft, FrameCountsAndLengthsAgree) {
  Stft stft(1024, 256, 1024, true, "reflect");
  EXPECT_EQ(stft.n_frames(22050), 1 + 22050 / 256);
  for (int64_t frames : {5, 86, 300}) EXPECT_EQ(stft.n_frames(stft.n_samples(frames)), frames);
  Stft odd(401, 100, 401, true, "constant");
  for (int64_t frames : {5, 86}) EXPECT_EQ(odd.n_frames(odd.n_samples(frames)), frames);
}

TEST(Stft, RejectsSignalsShorterThanOneFrame) {
  Stft stft(1024, 256, 1024, true, "reflect");
  EXPECT_THROW(stft.forward(torch::zeros({1000})), Error);
}

TEST(Stft, GpuMatchesCpu) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  std::vector<float> x = testing::sine(1000.0, 1.0, 22050, 0.5);
  torch::Tensor signal = torch::from_blob(x.data(), {static_cast<int64_t>(x.size())}).clone();
  Stft stft(2048, 275, 1100, true, "constant");
  torch::Tensor cpu = stft.magnitude(signal, 2.0);
  torch::Tensor gpu = stft.magnitude(signal.to(torch::kCUDA), 2.0);
  EXPECT_TRUE(gpu.is_cuda());
  EXPECT_LE(testing::relative_error(gpu.cpu(), cpu), 1e-5);
}

}  // namespace
}  // namespace tts::audio

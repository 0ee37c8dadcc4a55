// The STFT against a naive DFT computed here in double precision, for odd sizes (n_fft 400 /
// 512 / 800, win_length < n_fft) and both padding modes; the CPU (FFTW) and torch::stft paths
// against each other; the inverse; the GPU path.
#include <gtest/gtest.h>
#include <torch/cuda.h>

#include <complex>
#include <random>
#include <thread>
#include <vector>

#include "audio_test_util.h"
#include "tts/audio/stft.h"
#include "tts/core/error.h"

namespace tts::audio {
namespace {

// |DFT| of librosa-style frames: centred padding by n_fft/2 (numpy config::PadMode::kReflect
// excludes the edge sample; config::PadMode::kConstant pads zeros), periodic Hann of win centred in
// n_fft.
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
  config::PadMode pad_mode;
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
  torch::Tensor expected =
      naive_magnitude(x, c.n_fft, c.hop, c.win, c.pad_mode == config::PadMode::kReflect);
  ASSERT_EQ(magnitude.sizes(), expected.sizes());
  EXPECT_EQ(magnitude.size(0), stft.n_frames(static_cast<int64_t>(x.size())));
  EXPECT_LE(testing::relative_error(magnitude, expected), 1e-5);
  // Power is the magnitude raised element-wise.
  EXPECT_LE(testing::relative_error(stft.magnitude(signal, 2.0), expected.square()), 1e-5);
}

INSTANTIATE_TEST_SUITE_P(OddSizes, StftSizes,
                         ::testing::Values(Case{400, 100, 400, config::PadMode::kReflect},
                                           Case{400, 160, 320, config::PadMode::kConstant},
                                           Case{512, 128, 400, config::PadMode::kReflect},
                                           Case{800, 200, 551, config::PadMode::kConstant},
                                           Case{800, 275, 800, config::PadMode::kReflect}));

// A speech-like test signal: noise plus a sweep, `n` samples.
std::vector<float> test_signal(int64_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> noise(0.f, 0.05f);
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    x[i] = noise(rng) + 0.5f * static_cast<float>(std::sin(1e-6 * static_cast<double>(i * i)));
  }
  return x;
}

// magnitude() on the CPU runs FFTW; forward() is torch::stft (the path tensors on a GPU take).
// Both configurations of the issue, odd sizes, both pad modes, powers 1, 2 and 1.5, and centre
// off: the two paths agree to well under the 1e-5 tolerance against librosa.
TEST(Stft, FftwPathMatchesTorchStftPath) {
  const std::vector<Case> cases = {
      {1024, 256, 1024, config::PadMode::kReflect}, {2048, 275, 1100, config::PadMode::kConstant},
      {400, 160, 320, config::PadMode::kConstant},  {512, 128, 400, config::PadMode::kReflect},
      {801, 200, 551, config::PadMode::kReflect},   {2048, 300, 2048, config::PadMode::kConstant}};
  std::vector<float> x = test_signal(22050 * 3 + 17, 3);
  torch::Tensor signal = torch::from_blob(x.data(), {static_cast<int64_t>(x.size())}).clone();
  for (const Case& c : cases) {
    for (bool center : {true, false}) {
      Stft stft(c.n_fft, c.hop, c.win, center, c.pad_mode);
      for (double power : {1.0, 2.0, 1.5}) {
        torch::Tensor fftw = stft.magnitude(signal, power);
        torch::Tensor reference = stft.forward(signal).abs().pow(power);
        ASSERT_EQ(fftw.sizes(), reference.sizes()) << c.n_fft;
        EXPECT_EQ(fftw.size(0), stft.n_frames(signal.size(0)));
        EXPECT_LE(testing::relative_error(fftw, reference), 2e-6)
            << "n_fft " << c.n_fft << " hop " << c.hop << " win " << c.win << " " << c.pad_mode
            << " center " << center << " power " << power;
      }
      // The raw-memory overload writes the same values.
      torch::Tensor out = torch::empty({stft.n_frames(signal.size(0)), stft.n_bins()});
      stft.magnitude(x.data(), static_cast<int64_t>(x.size()), 1.0, out.data_ptr<float>());
      EXPECT_TRUE(torch::equal(out, stft.magnitude(signal, 1.0))) << c.n_fft;
    }
  }
}

TEST(Stft, FftwPathTakesOtherDtypesAndShortSignals) {
  // float64 input is converted; a signal of exactly n_fft samples is one frame uncentred.
  std::vector<float> x = test_signal(1024, 5);
  torch::Tensor signal = torch::from_blob(x.data(), {1024}).clone();
  Stft uncentred(1024, 256, 1024, false, config::PadMode::kReflect);
  EXPECT_EQ(uncentred.magnitude(signal).size(0), 1);
  EXPECT_LE(testing::relative_error(uncentred.magnitude(signal.to(torch::kFloat64)),
                                    uncentred.forward(signal).abs()),
            2e-6);
  EXPECT_THROW(uncentred.magnitude(signal.slice(0, 0, 1000)), Error);
  EXPECT_THROW(uncentred.magnitude(torch::zeros({2, 1024})), Error);
}

// Preprocessing computes features on worker threads: plans for new sizes are made under a lock,
// and concurrent calls give what one thread gives.
TEST(Stft, FftwPathIsThreadSafe) {
  std::vector<float> x = test_signal(40000, 9);
  torch::Tensor signal = torch::from_blob(x.data(), {static_cast<int64_t>(x.size())}).clone();
  const std::vector<int> sizes = {1536, 1000, 1536, 1000, 1200, 1200, 1536, 1000};
  std::vector<torch::Tensor> results(sizes.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < sizes.size(); ++i) {
    threads.emplace_back([&, i] {
      Stft stft(sizes[i], 200, sizes[i], true, config::PadMode::kReflect);
      for (int r = 0; r < 5; ++r) results[i] = stft.magnitude(signal, 1.0);
    });
  }
  for (auto& t : threads) t.join();
  for (size_t i = 0; i < sizes.size(); ++i) {
    Stft stft(sizes[i], 200, sizes[i], true, config::PadMode::kReflect);
    EXPECT_TRUE(torch::equal(results[i], stft.magnitude(signal, 1.0))) << sizes[i];
  }
}

TEST(Stft, InverseReconstructsTheSignal) {
  std::vector<float> x = testing::sine(440.0, 0.5, 22050, 0.5);
  torch::Tensor signal = torch::from_blob(x.data(), {static_cast<int64_t>(x.size())}).clone();
  for (config::PadMode pad_mode : {config::PadMode::kReflect, config::PadMode::kConstant}) {
    Stft stft(1024, 256, 800, true, pad_mode);
    torch::Tensor back = stft.inverse(stft.forward(signal), signal.size(0));
    EXPECT_LE(testing::relative_error(back, signal), 1e-5) << pad_mode;
  }
}

TEST(Stft, FrameCountsAndLengthsAgree) {
  Stft stft(1024, 256, 1024, true, config::PadMode::kReflect);
  EXPECT_EQ(stft.n_frames(22050), 1 + 22050 / 256);
  for (int64_t frames : {5, 86, 300}) EXPECT_EQ(stft.n_frames(stft.n_samples(frames)), frames);
  Stft odd(401, 100, 401, true, config::PadMode::kConstant);
  for (int64_t frames : {5, 86}) EXPECT_EQ(odd.n_frames(odd.n_samples(frames)), frames);
}

TEST(Stft, RejectsSignalsShorterThanOneFrame) {
  Stft stft(1024, 256, 1024, true, config::PadMode::kReflect);
  EXPECT_THROW(stft.forward(torch::zeros({1000})), Error);
}

TEST(Stft, GpuMatchesCpu) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  std::vector<float> x = testing::sine(1000.0, 1.0, 22050, 0.5);
  torch::Tensor signal = torch::from_blob(x.data(), {static_cast<int64_t>(x.size())}).clone();
  Stft stft(2048, 275, 1100, true, config::PadMode::kConstant);
  torch::Tensor cpu = stft.magnitude(signal, 2.0);
  torch::Tensor gpu = stft.magnitude(signal.to(torch::kCUDA), 2.0);
  EXPECT_TRUE(gpu.is_cuda());
  EXPECT_LE(testing::relative_error(gpu.cpu(), cpu), 1e-5);
}

}  // namespace
}  // namespace tts::audio

// The mel filterbank against properties derived independently of librosa: the published scale
// formulas, equal mel spacing of the filter centres, triangles that sum to one between the
// second and the second-to-last edge (norm none), unit area in Hz (Slaney norm), for both scales
// and odd FFT sizes. The exact librosa numbers are checked in test_reference.cpp.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "tts/audio/mel_filterbank.h"
#include "tts/core/error.h"

namespace tts::audio {
namespace {

TEST(MelScale, MatchesThePublishedFormulas) {
  // HTK: 2595 log10(1 + f/700) (values from Python's math module).
  EXPECT_NEAR(hz_to_mel(1000.0, true), 999.9855371396244, 1e-9);
  EXPECT_NEAR(hz_to_mel(8000.0, true), 2840.023046708319, 1e-9);
  EXPECT_NEAR(mel_to_hz(1000.0, true), 1000.021816457287, 1e-9);
  // Slaney: 3 mels per 200 Hz below 1 kHz, then 27 mels per factor 6.4.
  EXPECT_DOUBLE_EQ(hz_to_mel(200.0, false), 3.0);
  EXPECT_DOUBLE_EQ(hz_to_mel(1000.0, false), 15.0);
  EXPECT_NEAR(hz_to_mel(6400.0, false), 42.0, 1e-12);
  EXPECT_NEAR(mel_to_hz(42.0, false), 6400.0, 1e-9);
  for (bool htk : {false, true}) {
    for (double hz : {0.0, 55.0, 999.0, 1001.0, 7600.0, 11025.0}) {
      EXPECT_NEAR(mel_to_hz(hz_to_mel(hz, htk), htk), hz, 1e-9 * (1 + hz));
    }
  }
}

struct Case {
  int sample_rate, n_fft, n_mels;
  double fmin, fmax;
  config::MelScale scale;
};

class Filterbank : public ::testing::TestWithParam<Case> {
 protected:
  // Filter edges, computed here from the scale alone.
  std::vector<double> edges() const {
    const Case c = GetParam();
    const bool htk = c.scale == config::MelScale::kHtk;
    std::vector<double> e;
    for (int i = 0; i < c.n_mels + 2; ++i) {
      e.push_back(
          mel_to_hz(hz_to_mel(c.fmin, htk) +
                        (hz_to_mel(c.fmax, htk) - hz_to_mel(c.fmin, htk)) * i / (c.n_mels + 1),
                    htk));
    }
    return e;
  }
};

TEST_P(Filterbank, UnnormalizedTrianglesSumToOneInsideTheRange) {
  const Case c = GetParam();
  MelFilterbank bank(c.sample_rate, c.n_fft, c.n_mels, c.fmin, c.fmax, c.scale,
                     config::MelNorm::kNone);
  const torch::Tensor basis = bank.basis().to(torch::kFloat64);
  ASSERT_EQ(basis.size(0), c.n_mels);
  ASSERT_EQ(basis.size(1), c.n_fft / 2 + 1);
  const std::vector<double> e = edges();
  const double bin_hz = static_cast<double>(c.sample_rate) / c.n_fft;
  torch::Tensor column_sums = basis.sum(0);
  int checked = 0;
  for (int k = 0; k <= c.n_fft / 2; ++k) {
    const double f = k * bin_hz;
    if (f >= e[1] && f <= e[c.n_mels]) {
      EXPECT_NEAR(column_sums[k].item<double>(), 1.0, 1e-6) << "bin " << k;
      ++checked;
    }
    if (f < e[0] || f > e.back()) {
      EXPECT_EQ(column_sums[k].item<double>(), 0.0) << "bin " << k;
    }
  }
  EXPECT_GT(checked, 10);
  // Each filter is a triangle rising from edge m to m+1, falling to m+2, peaking at 1.
  for (int m = 0; m < c.n_mels; ++m) {
    for (int k = 0; k <= c.n_fft / 2; ++k) {
      const double f = k * bin_hz;
      double expected = 0.0;
      if (f > e[m] && f <= e[m + 1]) expected = (f - e[m]) / (e[m + 1] - e[m]);
      if (f > e[m + 1] && f < e[m + 2]) expected = (e[m + 2] - f) / (e[m + 2] - e[m + 1]);
      ASSERT_NEAR(basis[m][k].item<double>(), expected, 1e-6) << "filter " << m << " bin " << k;
    }
  }
}

TEST_P(Filterbank, SlaneyNormGivesUnitAreaInHz) {
  const Case c = GetParam();
  MelFilterbank none(c.sample_rate, c.n_fft, c.n_mels, c.fmin, c.fmax, c.scale,
                     config::MelNorm::kNone);
  MelFilterbank slaney(c.sample_rate, c.n_fft, c.n_mels, c.fmin, c.fmax, c.scale,
                       config::MelNorm::kSlaney);
  const std::vector<double> e = edges();
  for (int m = 0; m < c.n_mels; ++m) {
    // A triangle of height 2/(width) over `width` Hz has area 1.
    const double scale = 2.0 / (e[m + 2] - e[m]);
    torch::Tensor expected = none.basis()[m].to(torch::kFloat64) * scale;
    EXPECT_LE((slaney.basis()[m].to(torch::kFloat64) - expected).abs().max().item<double>(),
              1e-6 * scale)
        << "filter " << m;
  }
}

INSTANTIATE_TEST_SUITE_P(
    ScalesAndSizes, Filterbank,
    ::testing::Values(Case{22050, 1024, 80, 0.0, 8000.0, config::MelScale::kSlaney},
                      Case{22050, 2048, 80, 55.0, 7600.0, config::MelScale::kSlaney},
                      Case{16000, 400, 40, 20.0, 8000.0, config::MelScale::kHtk},
                      Case{16000, 512, 64, 0.0, 8000.0, config::MelScale::kSlaney},
                      Case{22050, 800, 80, 0.0, 11025.0, config::MelScale::kHtk}));

TEST(MelFilterbank, AppliesToTimeMajorSpectrograms) {
  MelFilterbank bank(22050, 1024, 80, 0.0, 8000.0, config::MelScale::kSlaney,
                     config::MelNorm::kSlaney);
  torch::Tensor spectrum = torch::rand({7, 513});
  torch::Tensor mel = bank.apply(spectrum);
  ASSERT_EQ(mel.sizes(), (std::vector<int64_t>{7, 80}));
  EXPECT_NEAR(mel[3][10].item<float>(), (bank.basis()[10] * spectrum[3]).sum().item<float>(), 1e-5);
  EXPECT_THROW(bank.apply(torch::rand({513, 7})), Error);
}

TEST(MelFilterbank, InversesReproduceTheMelSpectrogram) {
  MelFilterbank bank(22050, 1024, 80, 0.0, 8000.0, config::MelScale::kSlaney,
                     config::MelNorm::kSlaney);
  torch::Tensor linear = torch::rand({20, 513}).square();
  torch::Tensor mel = bank.apply(linear);
  for (config::MelInverse method : {config::MelInverse::kPinv, config::MelInverse::kNnls}) {
    torch::Tensor back = bank.to_linear(mel, method);
    ASSERT_EQ(back.sizes(), linear.sizes());
    EXPECT_GE(back.min().item<float>(), 0.f) << method;
    // The mel of the estimate is close to the mel it came from.
    EXPECT_LE(((bank.apply(back) - mel).norm() / mel.norm()).item<double>(), 0.05) << method;
  }
}

}  // namespace
}  // namespace tts::audio

// Griffin-Lim round trips: a magnitude re-analysed from the reconstruction is close to the
// target, by spectral convergence ||S' - S|| / ||S||.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "audio_test_util.h"
#include "tts/audio/audio_io.h"
#include "tts/audio/audio_processor.h"
#include "tts/audio/griffin_lim.h"

namespace tts::audio {
namespace {

// Bounds on spectral convergence, set about 1.5x above what was measured on the reference chirps
// (libtorch 1.13.1 CPU): 0.031 for 60 iterations on the magnitude; through the mel target and
// back, 0.056 for NVIDIA's (magnitude mel) and 0.142 for Rayhane's (power mel, where relative
// errors double).
constexpr double kSpectralConvergenceBound = 0.05;
struct RoundTripCase {
  std::string name;
  double bound;
};

torch::Tensor chirp(const config::AudioOptions& options) {
  std::vector<float> y = read_audio(testing::data_path("chirp_nvidia.wav"), options);
  return torch::from_blob(y.data(), {static_cast<int64_t>(y.size())}).clone();
}

TEST(GriffinLim, ReconstructsAChirpMagnitude) {
  config::AudioOptions options;
  Stft stft(options);
  torch::Tensor target = stft.magnitude(chirp(options));
  GriffinLim griffin_lim(stft, 60);
  torch::Tensor wav = griffin_lim.reconstruct(target);
  EXPECT_EQ(wav.size(0), stft.n_samples(target.size(0)));
  const double convergence = spectral_convergence(stft.magnitude(wav), target);
  EXPECT_LT(convergence, kSpectralConvergenceBound) << convergence;
  // More iterations do not make it worse; random phases alone are far off.
  const double more =
      spectral_convergence(stft.magnitude(GriffinLim(stft, 120).reconstruct(target)), target);
  EXPECT_LE(more, convergence * 1.05);
  EXPECT_GT(spectral_convergence(stft.magnitude(GriffinLim(stft, 1).reconstruct(target)), target),
            convergence);
}

TEST(GriffinLim, IsReproducible) {
  config::AudioOptions options;
  Stft stft(options);
  torch::Tensor target = stft.magnitude(chirp(options).slice(0, 0, 8192));
  GriffinLim griffin_lim(stft, 5);
  EXPECT_TRUE(torch::equal(griffin_lim.reconstruct(target), griffin_lim.reconstruct(target)));
}

// The whole inverse path: mel target -> waveform -> mel target again, for both configurations.
class MelRoundTrip : public ::testing::TestWithParam<RoundTripCase> {};

TEST_P(MelRoundTrip, MelOfTheReconstructionIsCloseToTheTarget) {
  config::AudioOptions options = testing::reference_options(GetParam().name);
  options.griffin_lim_power = 1.0;  // keep the level so the two mels are comparable
  AudioProcessor processor(options);
  Features features = processor.compute_file(testing::data_path(GetParam().name + ".wav"), false);
  std::vector<float> wav = processor.mel_to_wav(features.mel);
  config::AudioOptions untrimmed = options;
  untrimmed.trim = false;
  Features again = AudioProcessor(untrimmed).compute(wav, false);
  ASSERT_EQ(again.mel.sizes(), features.mel.sizes());
  const Compression& compression = processor.compression();
  const double convergence =
      spectral_convergence(compression.decompress(again.mel), compression.decompress(features.mel));
  EXPECT_LT(convergence, GetParam().bound) << convergence;
}

INSTANTIATE_TEST_SUITE_P(Configurations, MelRoundTrip,
                         ::testing::Values(RoundTripCase{"chirp_nvidia", 0.08},
                                           RoundTripCase{"chirp_rayhane", 0.2}));

}  // namespace
}  // namespace tts::audio

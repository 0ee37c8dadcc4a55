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

// Bounds measured on the reference chirps (see the values in the failure messages), with margin.
constexpr double kSpectralConvergenceBound = 0.2;
constexpr double kMelRoundTripBound = 0.3;

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
class MelRoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(MelRoundTrip, MelOfTheReconstructionIsCloseToTheTarget) {
  config::AudioOptions options = testing::reference_options(GetParam());
  options.griffin_lim_power = 1.0;  // keep the level so the two mels are comparable
  AudioProcessor processor(options);
  Features features = processor.compute_file(testing::data_path(GetParam() + ".wav"), false);
  std::vector<float> wav = processor.mel_to_wav(features.mel);
  config::AudioOptions untrimmed = options;
  untrimmed.trim = false;
  Features again = AudioProcessor(untrimmed).compute(wav, false);
  ASSERT_EQ(again.mel.sizes(), features.mel.sizes());
  const Compression& compression = processor.compression();
  const double convergence =
      spectral_convergence(compression.decompress(again.mel), compression.decompress(features.mel));
  EXPECT_LT(convergence, kMelRoundTripBound) << convergence;
}

INSTANTIATE_TEST_SUITE_P(Configurations, MelRoundTrip,
                         ::testing::Values("chirp_nvidia", "chirp_rayhane"));

}  // namespace
}  // namespace tts::audio

// The pipeline against librosa 0.10.2 references (tests/data/audio/README.md): mel basis and
// STFT magnitude within 1e-5 relative, compressed mel and linear targets within 1e-3 absolute,
// trim indices exact, for NVIDIA's and Rayhane's configurations.
#include <gtest/gtest.h>

#include "audio_test_util.h"
#include "tts/audio/audio_io.h"
#include "tts/audio/audio_processor.h"

namespace tts::audio {
namespace {

using testing::data_path;
using testing::load_npy;

class Reference : public ::testing::TestWithParam<std::string> {
 protected:
  std::string name() const { return GetParam(); }
  config::AudioOptions options() const { return testing::reference_options(name()); }
  std::string file(const std::string& what) const { return data_path(name() + "." + what); }
};

TEST_P(Reference, MelBasisMatchesLibrosa) {
  MelFilterbank filterbank(options());
  torch::Tensor expected = load_npy(file("mel_basis.npy"));
  ASSERT_EQ(filterbank.basis().sizes(), expected.sizes());
  EXPECT_LE(testing::relative_error(filterbank.basis(), expected), 1e-5);
}

TEST_P(Reference, TrimIndicesMatchLibrosaExactly) {
  config::AudioOptions o = options();
  std::vector<float> y = read_audio(file("wav"), o);
  TrimRange range = Trimmer(o.trim_top_db, o.trim_frame_length, o.trim_hop_length).find(y);
  torch::Tensor expected = load_npy(file("trim_index.npy"));
  EXPECT_EQ(range.start, static_cast<int64_t>(expected[0].item<float>()));
  EXPECT_EQ(range.end, static_cast<int64_t>(expected[1].item<float>()));
}

TEST_P(Reference, MagnitudeMatchesLibrosa) {
  config::AudioOptions o = options();
  std::vector<float> y = read_audio(file("wav"), o);
  TrimRange range = Trimmer(o.trim_top_db, o.trim_frame_length, o.trim_hop_length).find(y);
  std::vector<float> x(y.begin() + range.start, y.begin() + range.end);
  PreEmphasis(o.preemphasis).apply(x);
  torch::Tensor signal = torch::from_blob(x.data(), {static_cast<int64_t>(x.size())}).clone();
  torch::Tensor magnitude = Stft(o).magnitude(signal, o.magnitude_power);
  torch::Tensor expected = load_npy(file("magnitude.npy")).t();  // librosa is [bins, frames]
  ASSERT_EQ(magnitude.sizes(), expected.sizes());
  EXPECT_LE(testing::relative_error(magnitude, expected), 1e-5);
}

TEST_P(Reference, CompressedTargetsMatchLibrosa) {
  AudioProcessor processor(options());
  Features features = processor.compute_file(file("wav"), /*with_linear=*/true);
  torch::Tensor mel = load_npy(file("mel.npy")).t();
  torch::Tensor linear = load_npy(file("linear.npy")).t();
  ASSERT_EQ(features.mel.sizes(), mel.sizes());
  ASSERT_EQ(features.linear.sizes(), linear.sizes());
  EXPECT_LE(testing::max_abs_error(features.mel, mel), 1e-3);
  EXPECT_LE(testing::max_abs_error(features.linear, linear), 1e-3);
  torch::Tensor trim = load_npy(file("trim_index.npy"));
  EXPECT_EQ(features.n_samples, static_cast<int64_t>((trim[1] - trim[0]).item<float>()));
}

TEST_P(Reference, LinearIsUndefinedUnlessRequested) {
  AudioProcessor processor(options());
  Features features = processor.compute_file(file("wav"), /*with_linear=*/false);
  EXPECT_TRUE(features.mel.defined());
  EXPECT_FALSE(features.linear.defined());
}

INSTANTIATE_TEST_SUITE_P(Librosa, Reference, ::testing::Values("chirp_nvidia", "chirp_rayhane"));

}  // namespace
}  // namespace tts::audio

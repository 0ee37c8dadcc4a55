// The settings a mel carries outside a store: the file `synthesize` writes beside STEM.mel.npy,
// read back by what vocode checks, bounded and refused by name when it does not load.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "../support/scratch.h"
#include "tts/config/config.h"
#include "tts/core/error.h"
#include "tts/core/fs.h"
#include "tts/data/feature_store.h"
#include "tts/formats/npy.h"
#include "tts/inference/mel_files.h"

namespace {

std::string write_mel(const std::string& dir, const std::string& name) {
  const std::vector<float> mel(80 * 3, 0.f);
  const std::string path = dir + "/" + name;
  tts::formats::write_npy(path, mel.data(), {3, 80});
  return path;
}

}  // namespace

TEST(MelFiles, AMelsSettingsFileIsReadBackAndNamed) {
  const std::string dir = tts::test::fresh_dir("mel_settings");
  const std::string mel = write_mel(dir, "hello.mel.npy");
  EXPECT_FALSE(tts::inference::mel_settings_of(mel).has_value());
  const tts::config::Config config = tts::config::parse_config("", "test", {"audio.fmax=7000"});
  tts::data::write_mel_settings(mel, config);
  EXPECT_EQ(tts::data::mel_settings_path(mel), dir + "/hello.mel.yaml");
  std::string from;
  const auto settings = tts::inference::mel_settings_of(mel, &from);
  ASSERT_TRUE(settings.has_value());
  EXPECT_EQ(settings->fmax, 7000.0);
  EXPECT_EQ(settings->n_mels, config.audio.n_mels);
  EXPECT_EQ(from, dir + "/hello.mel.yaml");
}

// Only the file write_mel_settings wrote counts: any other STEM.yaml beside a mel is not its
// settings. One that was written so and then broken or bloated is refused by name.
TEST(MelFiles, ABrokenOrHugeSettingsFileIsRefusedByName) {
  const std::string dir = tts::test::fresh_dir("mel_settings_bad");
  const std::string mel = write_mel(dir, "bad.mel.npy");
  tts::write_file_atomic(dir + "/bad.mel.yaml", "audio:\n  fmax: 7000\n");
  EXPECT_FALSE(tts::inference::mel_settings_of(mel).has_value());
  const std::string mark = "# the settings the mel beside this file was made with (tts-train)\n";
  tts::write_file_atomic(dir + "/bad.mel.yaml", mark + "audio:\n  n_fft: many\n");
  try {
    tts::inference::mel_settings_of(mel);
    ADD_FAILURE() << "a settings file that does not load was accepted";
  } catch (const tts::Error& e) {
    EXPECT_NE(std::string(e.what()).find(dir + "/bad.mel.yaml: the settings of " + mel),
              std::string::npos)
        << e.what();
  }
  tts::write_file_atomic(dir + "/bad.mel.yaml", mark + "# " + std::string(100 * 1024, 'x') + "\n");
  try {
    tts::inference::mel_settings_of(mel);
    ADD_FAILURE() << "a huge settings file was read";
  } catch (const tts::Error& e) {
    EXPECT_NE(std::string(e.what()).find("far more than a mel's settings"), std::string::npos)
        << e.what();
  }
}

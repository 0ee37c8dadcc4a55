// The new-voice vocoder recipe (docs/training.md, "Fine-tuning the vocoder on a voice's GTA mels")
// through the CLI, at tiny sizes: a Tacotron-2 trained a few steps (tiny.yaml) writes its
// teacher-forced mels with `gta`, and a HiFi-GAN trained on ground-truth mels fine-tunes on them
// with `train --init-from`, from our checkpoint or from jik876's files (as they are, or
// converted), alike.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <string>

#include "train_fixture.h"

using tts::test::CliResult;
using tts::test::kAtDefaults;
using tts::test::run_cli;

namespace {

const std::string kHifigan = std::string(TTS_SOURCE_DIR) + "/configs/hifigan_small.yaml";

class VocoderFineTuning : public tts::test::TrainFixture {
 protected:
  static std::string vocoder(const std::string& run, const std::string& store,
                             const std::string& extra) {
    CliResult result = run_cli("train --config " + kHifigan + " --data " + root_ + "/" + store +
                                   " --out " + root_ + "/" + run + " " + extra + kAtDefaults,
                               true);
    EXPECT_EQ(result.exit_code, 0) << result.output;
    return result.output;
  }
};

}  // namespace

TEST_F(VocoderFineTuning, HifiganFineTunesOnGtaMelsFromOurCheckpointOrJik876sFiles) {
  // The acoustic model, and its ground-truth-aligned mels beside the corpus's audio.
  train("tacotron", "--max-steps 2" + kAtDefaults);
  CliResult gta = run_cli("gta --checkpoint " + root_ + "/tacotron --data " + feats_ + " --out " +
                              root_ + "/gta --wavs " + root_ + "/corpus",
                          true);
  ASSERT_EQ(gta.exit_code, 0) << gta.output;
  // A vocoder trained on the ground truth (the corpus preprocessed with its waveforms).
  CliResult gt = run_cli("preprocess --config " + kHifigan + " --input " + root_ +
                             "/corpus --output " + root_ + "/gt --workers 2",
                         true);
  ASSERT_EQ(gt.exit_code, 0) << gt.output;
  vocoder("base", "gt", "--max-steps 2");

  // Fine-tuned from our checkpoint: every tensor taken, a fresh step count and optimizer.
  const std::string ours =
      vocoder("from_ours", "gta", "--max-steps 2 --init-from " + root_ + "/base");
  EXPECT_NE(ours.find("warm start"), std::string::npos) << ours;
  const auto base = tensor_norms("base");
  const auto tuned = tensor_norms("from_ours");
  ASSERT_EQ(tuned.size(), base.size());
  int generator = 0;
  for (const auto& [name, norm] : base) {
    if (name.rfind("generator.", 0) != 0 || name.find("weight_v") == std::string::npos) continue;
    ++generator;
    // Two small steps from the base's weights: near them, not where training started.
    EXPECT_NEAR(tuned.at(name), norm, 0.02 * norm) << name;
  }
  EXPECT_GT(generator, 5);
  EXPECT_NE(tuned, base) << "the fine-tuning steps changed nothing";

  // jik876's files of the same weights fine-tune to the same weights: the generator file given
  // as it is (the do_ file beside it gives the discriminators), or both converted first.
  const std::string jik = root_ + "/jik876";
  CliResult exported = run_cli("convert --to hifigan " + root_ + "/base --out " + jik, true);
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  const std::string direct =
      vocoder("from_g_file", "gta", "--max-steps 2 --init-from " + jik + "/g_00000002");
  EXPECT_NE(direct.find("(jik876/hifi-gan files)"), std::string::npos) << direct;
  EXPECT_NE(direct.find("discriminators from " + jik + "/do_00000002"), std::string::npos)
      << direct;
  expect_same_parameters("from_ours", "from_g_file", 0.0);
  CliResult imported =
      run_cli("convert --from hifigan " + jik + "/g_00000002 --do " + jik +
                  "/do_00000002 --hparams " + jik + "/config.json --out " + root_ + "/jik876.pt",
              true);
  ASSERT_EQ(imported.exit_code, 0) << imported.output;
  vocoder("from_converted", "gta", "--max-steps 2 --init-from " + root_ + "/jik876.pt");
  expect_same_parameters("from_ours", "from_converted", 0.0);
  // Without the do_ file the discriminators start as initialized, and the log says so.
  std::filesystem::remove(jik + "/do_00000002");
  const std::string alone =
      vocoder("from_g_alone", "gta", "--max-steps 1 --init-from " + jik + "/g_00000002");
  EXPECT_NE(alone.find("no do_00000002 beside it: the discriminators start as initialized"),
            std::string::npos)
      << alone;
}

// gta as a pipeline stage, through the CLI on a small espeak-ng corpus preprocessed with tiny.yaml
// (a store that keeps no waveforms, as the README's): one command makes a store a vocoder trains
// on; the mels are the same on a rerun and for any worker count; a rerun keeps what the same
// checkpoint made and recomputes what another made; --wavs is checked before anything is written.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <string>

#include "train_fixture.h"
#include "tts/core/fs.h"
#include "tts/formats/npy.h"

namespace fs = std::filesystem;
using tts::test::CliResult;
using tts::test::kAtDefaults;
using tts::test::run_cli;

namespace {

class GtaCommand : public tts::test::TrainFixture {
 protected:
  static CliResult gta(const std::string& run, const std::string& out, const std::string& extra) {
    return run_cli("gta --checkpoint " + root_ + "/" + run + " --data " + feats_ + " --out " +
                       root_ + "/" + out + " " + extra,
                   true);
  }
  static torch::Tensor mel(const std::string& out, const std::string& id) {
    tts::formats::NpyArray array = tts::formats::read_npy(root_ + "/" + out + "/" + id + ".npy");
    return torch::tensor(array.data).reshape(array.shape);
  }
  static std::vector<std::string> ids(const std::string& out) {
    std::vector<std::string> found;
    for (const auto& entry : fs::directory_iterator(root_ + "/" + out)) {
      if (entry.path().extension() == ".npy") found.push_back(entry.path().stem().string());
    }
    std::sort(found.begin(), found.end());
    return found;
  }
  static double largest_difference(const std::string& a, const std::string& b) {
    double worst = 0;
    for (const std::string& id : ids(a)) {
      torch::Tensor x = mel(a, id);
      worst = std::max(worst, ((x - mel(b, id)).abs().max() / x.abs().max()).item<double>());
    }
    return worst;
  }
};

}  // namespace

TEST_F(GtaCommand, MakesAVocoderStoreFromTheCorpusInOneCommandAndRedoesOnlyWhatIsStale) {
  train("run", "--max-steps 2" + kAtDefaults);
  const std::string corpus = "--wavs " + root_ + "/corpus";
  CliResult made = gta("run", "store", corpus);
  ASSERT_EQ(made.exit_code, 0) << made.output;
  EXPECT_NE(made.output.find("16 ground-truth-aligned mels written"), std::string::npos)
      << made.output;
  for (const char* file : {"features.yaml", "gta.yaml", "filelist.txt"}) {
    EXPECT_TRUE(fs::exists(root_ + "/store/" + file)) << file;
  }
  const std::string provenance = tts::read_file(root_ + "/store/gta.yaml");
  EXPECT_NE(provenance.find("step: 2"), std::string::npos) << provenance;
  EXPECT_NE(provenance.find("prenet_dropout: keyed"), std::string::npos) << provenance;
  // A vocoder trains on it as it is.
  CliResult vocoder = run_cli("train --config " + std::string(TTS_SOURCE_DIR) +
                                  "/configs/hifigan_small.yaml --data " + root_ + "/store --out " +
                                  root_ + "/vocoder --max-steps 1 --set logging.samples=false",
                              true);
  EXPECT_EQ(vocoder.exit_code, 0) << vocoder.output;

  // The same checkpoint again: everything kept.
  CliResult again = gta("run", "store", corpus);
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("0 ground-truth-aligned mels written to " + root_ +
                              "/store, 16 "
                              "already there"),
            std::string::npos)
      << again.output;
  // Keyed prenet dropout: a fresh folder, and two workers, give the same mels.
  ASSERT_EQ(gta("run", "fresh", corpus).exit_code, 0);
  EXPECT_EQ(largest_difference("store", "fresh"), 0.0);
  ASSERT_EQ(gta("run", "two_workers", corpus + " --nproc-per-node 2").exit_code, 0);
  EXPECT_LT(largest_difference("store", "two_workers"), 1e-5);
  // Off: no prenet dropout, other mels, the same on a rerun.
  ASSERT_EQ(gta("run", "off", corpus + " --prenet-dropout off").exit_code, 0);
  ASSERT_EQ(gta("run", "off_again", corpus + " --prenet-dropout off").exit_code, 0);
  EXPECT_EQ(largest_difference("off", "off_again"), 0.0);
  EXPECT_GT(largest_difference("store", "off"), 1e-3);

  // A later checkpoint: the old mels are stale, every one is computed again.
  train("run", "--max-steps 3 --resume" + kAtDefaults);
  CliResult stale = gta("run", "store", corpus);
  ASSERT_EQ(stale.exit_code, 0) << stale.output;
  EXPECT_NE(stale.output.find("holds the mels of another checkpoint or mode"), std::string::npos)
      << stale.output;
  EXPECT_NE(stale.output.find("16 ground-truth-aligned mels written"), std::string::npos)
      << stale.output;
  EXPECT_NE(tts::read_file(root_ + "/store/gta.yaml").find("step: 3"), std::string::npos);
}

TEST_F(GtaCommand, ChecksTheCorpusBeforeWritingAnything) {
  train("checked", "--max-steps 1" + kAtDefaults);
  CliResult missing = gta("checked", "nowhere", "--wavs " + root_ + "/no_such_corpus");
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_NE(
      missing.output.find("--wavs " + root_ + "/no_such_corpus: expected the ljspeech corpus"),
      std::string::npos)
      << missing.output;

  // A corpus that lacks one utterance's audio: named, and no mel written.
  const std::string partial = root_ + "/partial_corpus";
  fs::create_directories(partial + "/wavs");
  fs::copy_file(root_ + "/corpus/metadata.csv", partial + "/metadata.csv");
  std::string named;
  for (const auto& entry : fs::directory_iterator(root_ + "/corpus/wavs")) {
    if (named.empty()) {
      named = entry.path().stem().string();
      continue;
    }
    fs::copy_file(entry.path(), partial + "/wavs/" + entry.path().filename().string());
  }
  CliResult lacking = gta("checked", "partial", "--wavs " + partial);
  EXPECT_EQ(lacking.exit_code, 2) << lacking.output;
  EXPECT_NE(lacking.output.find(named + ": "), std::string::npos) << lacking.output;
  EXPECT_FALSE(fs::exists(root_ + "/partial/" + named + ".npy"));
  EXPECT_TRUE(!fs::exists(root_ + "/partial") || ids("partial").empty());

  // Without --wavs, the corpus the store records (features.yaml) is read: a vocoder store in one
  // command.
  CliResult recorded = gta("checked", "recorded", "");
  ASSERT_EQ(recorded.exit_code, 0) << recorded.output;
  EXPECT_NE(recorded.output.find("the audio comes from the corpus " + feats_ + " was made from: " +
                                 fs::absolute(root_ + "/corpus").lexically_normal().string() +
                                 " (ljspeech)"),
            std::string::npos)
      << recorded.output;
  for (const char* file : {"features.yaml", "filelist.txt"}) {
    EXPECT_TRUE(fs::exists(root_ + "/recorded/" + file)) << file;
  }

  // A store that does not record its corpus (an older version's) gives the mels alone, and says
  // how to get a store.
  const std::string unrecorded = root_ + "/unrecorded_feats";
  fs::copy(feats_, unrecorded, fs::copy_options::recursive);
  std::string yaml = tts::read_file(unrecorded + "/features.yaml");
  const size_t line = yaml.find("corpus: {");
  ASSERT_NE(line, std::string::npos) << yaml;
  yaml.erase(line, yaml.find('\n', line) + 1 - line);
  tts::write_file_atomic(unrecorded + "/features.yaml", yaml);
  CliResult alone = run_cli(
      "gta --checkpoint " + root_ + "/checked --data " + unrecorded + " --out " + root_ + "/alone",
      true);
  ASSERT_EQ(alone.exit_code, 0) << alone.output;
  EXPECT_NE(alone.output.find("give --wavs CORPUS"), std::string::npos) << alone.output;
  EXPECT_FALSE(fs::exists(root_ + "/alone/features.yaml"));
  EXPECT_EQ(ids("alone").size(), 16u);
}

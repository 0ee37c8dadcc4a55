// HiFi-GAN trained for real through the CLI (configs/hifigan_small.yaml) on a small espeak-ng
// corpus preprocessed with its waveforms: both promises for a GAN step (two optimizers, two
// reducers): 2 and 3 Gloo ranks give the parameters of 1 rank with the whole batch, a resumed run
// ends as an uninterrupted one; the run's artifacts; and the mel check of a store made for
// another vocoder.
#include <gtest/gtest.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "cli_test_util.h"

namespace fs = std::filesystem;
using tts::test::CliResult;
using tts::test::run_cli;

namespace {

const std::string kSmall = std::string(TTS_SOURCE_DIR) + "/configs/hifigan_small.yaml";
// Validation and checkpoints only at the end: the runs compared stop at the same step.
const std::string kQuiet =
    " --set train.val_interval=1000 --set train.checkpoint_interval=1000 --set "
    "logging.samples=false";

class HifiganTraining : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = tts::test::fresh_dir("hifigan_training_" + std::to_string(getpid()));
    const std::string corpus = root_ + "/corpus";
    const std::string make = "MAX_CHARS=60 " + std::string(TTS_SOURCE_DIR) +
                             "/scripts/make_corpus.sh " + corpus + " 14 >/dev/null";
    ASSERT_EQ(std::system(make.c_str()), 0);
    feats_ = root_ + "/feats";
    CliResult result = run_cli("preprocess --config " + kSmall + " --input " + corpus +
                                   " --output " + feats_ + " --workers 2",
                               true);
    ASSERT_EQ(result.exit_code, 0) << result.output;
  }

  static std::string train(const std::string& run, const std::string& extra, int expected = 0) {
    CliResult result = run_cli("train --config " + kSmall + " --data " + feats_ + " --out " +
                                   root_ + "/" + run + " " + extra,
                               true);
    EXPECT_EQ(result.exit_code, expected) << result.output;
    return result.output;
  }

  static std::map<std::string, double> tensor_norms(const std::string& run) {
    CliResult result = run_cli("inspect --json " + root_ + "/" + run + "/checkpoints/latest");
    EXPECT_EQ(result.exit_code, 0) << result.output;
    YAML::Node json = YAML::Load(result.output);
    std::map<std::string, double> norms;
    for (const auto& tensor : json["tensors"]) {
      norms[tensor["name"].as<std::string>()] = tensor["l2"].as<double>();
    }
    return norms;
  }

  static void expect_same_parameters(const std::string& a, const std::string& b, double tolerance) {
    auto first = tensor_norms(a);
    auto second = tensor_norms(b);
    ASSERT_EQ(first.size(), second.size());
    int generator = 0, discriminators = 0;
    for (const auto& [name, norm] : first) {
      ASSERT_TRUE(second.count(name)) << name;
      generator += name.rfind("generator.", 0) == 0;
      discriminators += name.rfind("mpd.", 0) == 0 || name.rfind("msd.", 0) == 0;
      const double scale = std::max(std::abs(norm), 1e-12);
      EXPECT_LE(std::abs(norm - second[name]) / scale, tolerance)
          << name << ": " << norm << " vs " << second[name];
    }
    // Both networks' weights and both optimizers' moments are compared.
    EXPECT_GT(generator, 10) << "no generator tensors among " << first.size();
    EXPECT_GT(discriminators, 50) << "no discriminator tensors among " << first.size();
  }

  static inline std::string root_;
  static inline std::string feats_;
};

}  // namespace

TEST_F(HifiganTraining, TwoAndThreeRanksGiveTheParametersOfOneRankWithTheWholeBatch) {
  train("one_rank", "--max-steps 3 --set train.batch_size=6" + kQuiet);
  const std::string two =
      train("two_ranks", "--max-steps 3 --nproc-per-node 2 --set train.batch_size=3" + kQuiet);
  EXPECT_NE(two.find("global batch 6"), std::string::npos) << two;
  EXPECT_NE(two.find("all 2 workers finished"), std::string::npos) << two;
  expect_same_parameters("one_rank", "two_ranks", 2e-5);
  const std::string three =
      train("three_ranks", "--max-steps 3 --nproc-per-node 3 --set train.batch_size=2" + kQuiet);
  EXPECT_NE(three.find("all 3 workers finished"), std::string::npos) << three;
  expect_same_parameters("one_rank", "three_ranks", 2e-5);
}

TEST_F(HifiganTraining, AResumedRunEndsAsAnUninterruptedOne) {
  train("straight", "--max-steps 6" + kQuiet);
  train("resumed", "--max-steps 3" + kQuiet);
  const std::string output = train("resumed", "--max-steps 6 --resume" + kQuiet);
  EXPECT_NE(output.find("resumed from"), std::string::npos) << output;
  expect_same_parameters("straight", "resumed", 0.0);
}

TEST_F(HifiganTraining, LogsBothUpdatesAndWritesSamplesPlotsAndValidation) {
  const std::string output =
      train("artifacts", "--max-steps 4 --set train.val_interval=4 --set train.log_interval=2");
  EXPECT_NE(output.find("HiFi-GAN, generator"), std::string::npos) << output;
  EXPECT_NE(output.find("validation mel L1"), std::string::npos) << output;
  const std::string run = root_ + "/artifacts";
  EXPECT_TRUE(fs::exists(run + "/samples/step_4.wav"));
  EXPECT_TRUE(fs::exists(run + "/samples/step_4_real.wav"));
  EXPECT_TRUE(fs::exists(run + "/plots/step_4_mel.png"));
  std::ifstream metrics(run + "/metrics.jsonl");
  std::string line;
  bool train_record = false, val_record = false;
  while (std::getline(metrics, line)) {
    YAML::Node record = YAML::Load(line);
    const std::string kind = record["kind"].as<std::string>();
    if (kind == "train") {
      train_record = true;
      for (const char* key :
           {"loss", "discriminator_loss", "mel_l1", "adversarial_loss", "feature_matching_loss",
            "grad_norm", "grad_norm_generator", "lr", "lr_generator"}) {
        ASSERT_TRUE(record[key]) << key << " missing from " << line;
        EXPECT_TRUE(std::isfinite(record[key].as<double>())) << key << " in " << line;
      }
    }
    if (kind == "val") {
      val_record = true;
      EXPECT_GT(record["mel_l1"].as<double>(), 0.0) << line;
    }
  }
  EXPECT_TRUE(train_record);
  EXPECT_TRUE(val_record);
  // The report shows HiFi-GAN's own metrics, both optimizers, its plot and samples.
  const std::string html = tts::test::report_sections(run);
  tts::test::expect_vocoder_report(html);
  for (const char* series : {"generator loss", "validation mel L1", "discriminator_loss",
                             "adversarial_loss", "feature_matching_loss", "mel L1, training",
                             "mel L1, validation", "discriminator", "generator"}) {
    EXPECT_NE(html.find("data-series=\"" + std::string(series) + "\""), std::string::npos)
        << series;
  }
  EXPECT_NE(html.find("HiFi-GAN"), std::string::npos);
}

TEST_F(HifiganTraining, AConfigOrStoreWithoutWaveformsOrWithOtherMelsIsRefusedWithTheFix) {
  // A vocoder config that keeps no waveforms is refused before anything runs.
  const std::string no_waves = train("no_waves", "--max-steps 1 --set audio.waveforms=false", 2);
  EXPECT_NE(no_waves.find("audio.waveforms"), std::string::npos) << no_waves;
  EXPECT_FALSE(fs::exists(root_ + "/no_waves/checkpoints"));
  // A Tacotron-2 store (no waveforms kept) cannot train a vocoder: the fix is named.
  const std::string corpus = root_ + "/corpus";
  const std::string tiny = std::string(TTS_SOURCE_DIR) + "/configs/tiny.yaml";
  CliResult made = run_cli("preprocess --config " + tiny + " --input " + corpus + " --output " +
                               root_ + "/tacotron_feats --workers 2",
                           true);
  ASSERT_EQ(made.exit_code, 0) << made.output;
  CliResult refused = run_cli("train --config " + kSmall + " --data " + root_ +
                                  "/tacotron_feats --out " + root_ + "/on_tacotron_store",
                              true);
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.output.find("keep no waveforms"), std::string::npos) << refused.output;
  // The store remembers its corpus (features.yaml), so the fixes run as they are written.
  const std::string recorded =
      fs::absolute(corpus).lexically_normal().string() + " --corpus ljspeech";
  EXPECT_NE(refused.output.find("re-run tts-train preprocess --config CFG --input " + recorded +
                                " --output VFEATS"),
            std::string::npos)
      << refused.output;
  EXPECT_NE(refused.output.find("tts-train gta --checkpoint RUN --data " + root_ +
                                "/tacotron_feats --out GTA --wavs " + recorded),
            std::string::npos)
      << refused.output;
  // A vocoder config whose mels differ from the store's: the mismatched key is named.
  const std::string other = train("other_mels", "--max-steps 1 --set audio.fmax=11025", 2);
  EXPECT_NE(other.find("audio.fmax=8000"), std::string::npos) << other;
  // CUDA graphs: refused with the model's reason (the family has not stated that a replay
  // repeats its step: its batches have no static buffers yet), before the device's.
  const std::string graphs =
      train("graphs", "--max-steps 1 --set train.length_buckets=4 --set train.cuda_graphs=true", 2);
  EXPECT_NE(graphs.find("this model's does not yet"), std::string::npos) << graphs;
  EXPECT_NE(graphs.find("or set train.cuda_graphs: false"), std::string::npos) << graphs;
}

TEST_F(HifiganTraining, VocodeAndSynthesizeCheckTheMelsThenSpeakWithTheVocoder) {
  train("vocoder", "--max-steps 2" + kQuiet);
  const std::string vocoder = root_ + "/vocoder";
  // A store's mel, [frames, n_mels]: frames x hop samples at the vocoder's rate.
  std::string mel;
  for (const auto& entry : fs::directory_iterator(feats_ + "/mels")) {
    mel = entry.path().string();
    break;
  }
  ASSERT_FALSE(mel.empty());
  CliResult vocoded = run_cli(
      "vocode --checkpoint " + vocoder + " --mel " + mel + " --out " + root_ + "/a.wav", true);
  ASSERT_EQ(vocoded.exit_code, 0) << vocoded.output;
  EXPECT_NE(vocoded.output.find("mel frames"), std::string::npos) << vocoded.output;
  EXPECT_TRUE(fs::exists(root_ + "/a.wav"));

  // --out by the rule every command shares (cli/outputs.h), each refusal (exit 2) before
  // anything is written: with several mels --out is a folder; two mels of one name would write
  // one WAV; an extension vocode does not write; a missing folder above --out; an input as output.
  const std::string outs = root_ + "/outs";
  fs::create_directories(outs + "/a");
  fs::create_directories(outs + "/b");
  fs::copy_file(mel, outs + "/a/x.npy");
  fs::copy_file(mel, outs + "/b/x.npy");
  fs::copy_file(mel, outs + "/b/y.npy");
  const std::string vocode = "vocode --checkpoint " + vocoder;
  const std::string two = vocode + " --mel " + outs + "/a/x.npy --mel " + outs + "/b/x.npy";
  for (const auto& [args, expected] : std::vector<std::pair<std::string, std::string>>{
           {two + " --out " + outs + "/both.wav", "with 2 mels --out is a folder"},
           {two + " --out " + outs + "/both.npy", "with 2 mels --out is a folder"},
           {two + " --out " + outs + "/voc", "--mel " + outs + "/a/x.npy and --mel " + outs +
                                                 "/b/x.npy would both write " + outs +
                                                 "/voc/x.wav; nothing was written"},
           {vocode + " --mel " + mel + " --out " + outs + "/x.mp3",
            "give a file ending in .wav or .npy"},
           {vocode + " --mel " + mel + " --out " + outs + "/no/x.wav",
            "no folder " + outs + "/no to write " + outs + "/no/x.wav in"},
           {vocode + " --mel " + mel + " --out " + outs + "/no/voc",
            "no folder " + outs + "/no to create it in"},
           {vocode + " --mel " + outs + "/a/x.npy --out " + outs + "/a/x.npy",
            "would overwrite its input"}}) {
    CliResult refused = run_cli(args, true);
    EXPECT_EQ(refused.exit_code, 2) << args << "\n" << refused.output;
    EXPECT_NE(refused.output.find(expected), std::string::npos) << refused.output;
  }
  for (const char* written : {"both.wav", "both.npy", "voc", "x.mp3", "no"}) {
    EXPECT_FALSE(fs::exists(outs + "/" + written)) << written;
  }
  CliResult folder = run_cli(
      vocode + " --mel " + outs + "/a/x.npy --mel " + outs + "/b/y.npy --out " + outs + "/voc",
      true);
  EXPECT_EQ(folder.exit_code, 0) << folder.output;
  EXPECT_TRUE(fs::exists(outs + "/voc/x.wav"));
  EXPECT_TRUE(fs::exists(outs + "/voc/y.wav"));
  CliResult help = run_cli("vocode --help");
  for (const char* kind : {"hifigan", "wavenet"}) {
    EXPECT_NE(help.output.find(kind), std::string::npos) << help.output;
  }

  // The same mel in a folder whose features.yaml says another fmax: refused, both values and the
  // fix named, nothing written.
  const std::string other = root_ + "/other_store";
  fs::create_directories(other + "/mels");
  fs::copy_file(mel, other + "/mels/x.npy");
  {
    std::ifstream in(feats_ + "/features.yaml");
    std::stringstream text;
    text << in.rdbuf();
    std::string yaml = text.str();
    const size_t at = yaml.find("fmax: 8000");
    ASSERT_NE(at, std::string::npos) << yaml;
    yaml.replace(at, 10, "fmax: 7600");
    std::ofstream(other + "/features.yaml") << yaml;
  }
  CliResult refused = run_cli("vocode --checkpoint " + vocoder + " --mel " + other +
                                  "/mels/x.npy --out " + root_ + "/b.wav",
                              true);
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.output.find("audio.fmax"), std::string::npos) << refused.output;
  EXPECT_NE(refused.output.find("7600"), std::string::npos) << refused.output;
  EXPECT_NE(refused.output.find("noise"), std::string::npos) << refused.output;
  EXPECT_FALSE(fs::exists(root_ + "/b.wav"));

  // A bare .npy is vocoded with a warning that it could not be checked; NVIDIA's [n_mels, frames]
  // layout is read too.
  const std::string bare = root_ + "/bare";
  fs::create_directories(bare);
  fs::copy_file(mel, bare + "/x.npy");
  CliResult warned = run_cli(
      "vocode --checkpoint " + vocoder + " --mel " + bare + "/x.npy --out " + root_ + "/c.wav",
      true);
  EXPECT_EQ(warned.exit_code, 0) << warned.output;
  EXPECT_NE(warned.output.find("cannot be checked"), std::string::npos) << warned.output;

  // A Tacotron-2 checkpoint given as the vocoder is refused with where it belongs.
  const std::string tiny = std::string(TTS_SOURCE_DIR) + "/configs/tiny.yaml";
  CliResult made = run_cli("preprocess --config " + tiny + " --input " + root_ + "/corpus" +
                               " --output " + root_ + "/taco_feats --workers 2",
                           true);
  ASSERT_EQ(made.exit_code, 0) << made.output;
  CliResult tacotron = run_cli("train --config " + tiny + " --data " + root_ +
                                   "/taco_feats --out " + root_ + "/taco --max-steps 1",
                               true);
  ASSERT_EQ(tacotron.exit_code, 0) << tacotron.output;
  CliResult wrong = run_cli(
      "vocode --checkpoint " + root_ + "/taco --mel " + mel + " --out " + root_ + "/d.wav", true);
  EXPECT_NE(wrong.exit_code, 0);
  EXPECT_NE(wrong.output.find("not a vocoder"), std::string::npos) << wrong.output;

  // synthesize --vocoder: tiny.yaml's mels are the vocoder's (the same check as vocode's).
  CliResult spoken = run_cli("synthesize --checkpoint " + root_ + "/taco --vocoder " + vocoder +
                                 " --text \"Hello there.\" --out " + root_ + "/hello.wav",
                             true);
  EXPECT_EQ(spoken.exit_code, 0) << spoken.output;
  EXPECT_TRUE(fs::exists(root_ + "/hello.wav"));
}

// jik876's files carry training on: both AdamW states (moments and steps), the step and the epoch
// come through convert --to and --from, so a run resumed from the imported files continues exactly
// as the original run resumes, from the middle of an epoch (our do_ files say how far into it:
// jik876's own do not, and its train.py restarts the epoch). With fresh moments the next update
// would differ.
TEST_F(HifiganTraining, ContinuesTrainingFromJik876sFilesAsTheOriginalResumes) {
  const std::string first = train("jik_source", "--max-steps 2" + kQuiet);
  ASSERT_NE(first.find("3 steps per epoch"), std::string::npos) << first;
  const std::string jik = root_ + "/jik_files";
  CliResult exported = run_cli("convert --to hifigan " + root_ + "/jik_source --out " + jik, true);
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  fs::create_directories(root_ + "/jik_continued/checkpoints");
  CliResult imported = run_cli("convert --from hifigan " + jik + "/g_00000002 --do " + jik +
                                   "/do_00000002 --hparams " + jik + "/config.json --out " + root_ +
                                   "/jik_continued/checkpoints/step_00000002.pt",
                               true);
  ASSERT_EQ(imported.exit_code, 0) << imported.output;
  EXPECT_NE(imported.output.find("both AdamW states"), std::string::npos) << imported.output;
  EXPECT_NE(imported.output.find("--resume"), std::string::npos) << imported.output;
  train("jik_source", "--max-steps 5 --resume" + kQuiet);
  const std::string output = train("jik_continued", "--max-steps 5 --resume" + kQuiet);
  EXPECT_NE(output.find("resumed from"), std::string::npos) << output;
  expect_same_parameters("jik_source", "jik_continued", 0.0);
}

TEST_F(HifiganTraining, ConvertsToJik876sFilesAndBackWithTheSameWeights) {
  train("to_convert", "--max-steps 2" + kQuiet);
  // jik876's format is a folder of files: a file-like --out is refused, nothing made.
  CliResult file_like =
      run_cli("convert --to hifigan " + root_ + "/to_convert --out " + root_ + "/jik.pt", true);
  EXPECT_EQ(file_like.exit_code, 2) << file_like.output;
  EXPECT_NE(file_like.output.find("convert --to hifigan writes a folder"), std::string::npos)
      << file_like.output;
  EXPECT_NE(file_like.output.find("--out " + root_ + "/jik/"), std::string::npos)
      << file_like.output;
  EXPECT_FALSE(fs::exists(root_ + "/jik.pt"));
  const std::string jik = root_ + "/jik876";
  CliResult exported = run_cli("convert --to hifigan " + root_ + "/to_convert --out " + jik, true);
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  for (const char* file : {"/g_00000002", "/do_00000002", "/config.json"}) {
    EXPECT_TRUE(fs::exists(jik + file)) << file;
  }
  const std::string back = root_ + "/back/imported.pt";
  fs::create_directories(root_ + "/back");
  CliResult imported = run_cli("convert --from hifigan " + jik + "/g_00000002 --do " + jik +
                                   "/do_00000002 --hparams " + jik + "/config.json --out " + back,
                               true);
  ASSERT_EQ(imported.exit_code, 0) << imported.output;
  CliResult original = run_cli("inspect --json " + root_ + "/to_convert/checkpoints/latest");
  CliResult again = run_cli("inspect --json " + back);
  ASSERT_EQ(again.exit_code, 0) << again.output;
  YAML::Node a = YAML::Load(original.output), b = YAML::Load(again.output);
  std::map<std::string, double> norms;
  for (const auto& t : a["tensors"]) norms[t["name"].as<std::string>()] = t["l2"].as<double>();
  size_t compared = 0;
  for (const auto& t : b["tensors"]) {
    const std::string name = t["name"].as<std::string>();
    ASSERT_TRUE(norms.count(name)) << name;
    EXPECT_EQ(norms[name], t["l2"].as<double>()) << name;
    ++compared;
  }
  EXPECT_EQ(compared, norms.size());
  // The imported checkpoint fine-tunes, and the generator alone imports with --config.
  train("fine_tuned", "--max-steps 1 --init-from " + back + kQuiet);
  CliResult generator_only = run_cli("convert --from hifigan " + jik + "/g_00000002 --config " +
                                         kSmall + " --out " + root_ + "/back/g_only.pt",
                                     true);
  EXPECT_EQ(generator_only.exit_code, 0) << generator_only.output;
  EXPECT_NE(generator_only.output.find("newly initialized"), std::string::npos);
  // Sizes that do not fit are named.
  CliResult wrong =
      run_cli("convert --from hifigan " + jik + "/g_00000002 --config " + kSmall +
                  " --set hifigan.upsample_initial_channel=64 --out " + root_ + "/back/wrong.pt",
              true);
  EXPECT_NE(wrong.exit_code, 0);
  EXPECT_NE(wrong.output.find("conv_pre"), std::string::npos) << wrong.output;
}

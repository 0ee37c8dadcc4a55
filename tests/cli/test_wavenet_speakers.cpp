// A WaveNet with global (speaker) conditioning (wavenet.gin_channels, a speaker embedding of
// wavenet.n_speakers rows) trained for real through the CLI on a small espeak-ng corpus of two
// voices in VCTK's layout: 2 ranks give the weights of 1 rank with the whole batch, a resumed run
// ends as an uninterrupted one, the checkpoint names its speakers, vocode speaks by name, r9y9's
// layout keeps the embedding, a warm start copies rows by name, and what does not fit is refused
// by name.
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "cli_test_util.h"
#include "tts/audio/audio_io.h"
#include "tts/checkpoint/checkpoint.h"
#include "tts/formats/npy.h"

namespace fs = std::filesystem;
using tts::test::CliResult;
using tts::test::run_cli;

namespace {

const std::string kSmall = std::string(TTS_SOURCE_DIR) + "/configs/wavenet_small.yaml";
const std::string kQuiet =
    " --set train.val_interval=1000 --set train.checkpoint_interval=1000 --set "
    "logging.samples=false";
// Three rows for the store's two speakers: the third stays as initialized.
const std::string kSpeakers = " --set wavenet.gin_channels=8 --set wavenet.n_speakers=3";
const char* const kEmbedding = "wavenet.embed_speakers.weight";

class WavenetSpeakers : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = tts::test::fresh_dir("wavenet_speakers_" + std::to_string(getpid()));
    const std::string corpus = root_ + "/corpus";
    // 5 utterances per voice: 8 for training and one of each voice for validation.
    const std::string make = "LAYOUT=vctk VOICES=\"en-us+f3 en-gb+m2\" MAX_CHARS=60 " +
                             std::string(TTS_SOURCE_DIR) + "/scripts/make_corpus.sh " + corpus +
                             " 5 >/dev/null";
    ASSERT_EQ(std::system(make.c_str()), 0);
    feats_ = root_ + "/feats";
    CliResult result = run_cli("preprocess --config " + kSmall + " --corpus vctk --input " +
                                   corpus + " --output " + feats_ + " --workers 2",
                               true);
    ASSERT_EQ(result.exit_code, 0) << result.output;
  }

  static std::string train(const std::string& run, const std::string& extra, int expected = 0,
                           const std::string& env = "") {
    CliResult result =
        tts::test::run_shell(env + TTS_CLI_PATH + " train --config " + kSmall + " --data " +
                             feats_ + " --out " + root_ + "/" + run + " " + extra + " 2>&1");
    EXPECT_EQ(result.exit_code, expected) << result.output;
    return result.output;
  }

  static std::string latest(const std::string& run) {
    return root_ + "/" + run + "/checkpoints/latest";
  }

  static std::map<std::string, double> tensor_norms(const std::string& checkpoint) {
    CliResult result = run_cli("inspect --json " + checkpoint);
    EXPECT_EQ(result.exit_code, 0) << result.output;
    YAML::Node json = YAML::Load(result.output);
    std::map<std::string, double> norms;
    for (const auto& tensor : json["tensors"]) {
      norms[tensor["name"].as<std::string>()] = tensor["l2"].as<double>();
    }
    return norms;
  }

  // Every tensor's norm within `tolerance` of the other run's, relative to the larger of the norm
  // and `floor`; the speaker embedding is among them.
  static void expect_same_parameters(const std::string& a, const std::string& b, double tolerance,
                                     double floor = 1e-12) {
    auto first = tensor_norms(latest(a));
    auto second = tensor_norms(latest(b));
    ASSERT_EQ(first.size(), second.size());
    ASSERT_TRUE(first.count(kEmbedding));
    for (const auto& [name, norm] : first) {
      ASSERT_TRUE(second.count(name)) << name;
      const double scale = std::max(std::abs(norm), floor);
      EXPECT_LE(std::abs(norm - second[name]) / scale, tolerance)
          << name << ": " << norm << " vs " << second[name];
    }
  }

  // A mel of the store's first utterance cut to `frames` frames, in a folder with the store's
  // features.yaml (vocode checks its settings): a short clip vocodes in a moment.
  static std::string short_mel(int64_t frames) {
    const std::string dir = root_ + "/short";
    fs::create_directories(dir + "/mels");
    fs::copy_file(feats_ + "/features.yaml", dir + "/features.yaml",
                  fs::copy_options::overwrite_existing);
    std::string mel;
    for (const auto& entry : fs::directory_iterator(feats_ + "/mels")) {
      mel = entry.path().string();
      break;
    }
    tts::formats::NpyArray array = tts::formats::read_npy(mel);
    const std::string out = dir + "/mels/clip.npy";
    tts::formats::write_npy(out, array.data.data(), {frames, array.shape[1]});
    return out;
  }

  static std::vector<float> read_wav(const std::string& path) {
    int rate = 0;
    return tts::audio::read_audio(path, tts::config::AudioOptions{}, &rate);
  }

  static inline std::string root_;
  static inline std::string feats_;
};

}  // namespace

// As test_wavenet_training.cpp's promise without speakers (its comment says why the one-rank run
// accumulates two micro-batches with one intra-op thread): the rows of the speakers each rank's
// utterances name add up to the one rank's.
TEST_F(WavenetSpeakers, TwoRanksGiveTheWeightsOfOneRankWithTheWholeBatch) {
  const std::string two =
      train("two_ranks",
            "--max-steps 2 --nproc-per-node 2 --set train.batch_size=2" + kSpeakers + kQuiet);
  EXPECT_NE(two.find("all 2 workers finished"), std::string::npos) << two;
  EXPECT_NE(two.find("2 of 3 speaker rows used"), std::string::npos) << two;
  train("accumulated",
        "--max-steps 2 --set train.batch_size=2 --set train.accumulate=2" + kSpeakers + kQuiet, 0,
        "OMP_NUM_THREADS=1 ");
  expect_same_parameters("accumulated", "two_ranks", 5e-5, 1e-3);
}

TEST_F(WavenetSpeakers, AResumedRunEndsAsAnUninterruptedOne) {
  train("straight", "--max-steps 4" + kSpeakers + kQuiet);
  train("resumed", "--max-steps 2" + kSpeakers + kQuiet);
  const std::string output = train("resumed", "--max-steps 4 --resume" + kSpeakers + kQuiet);
  EXPECT_NE(output.find("resumed from"), std::string::npos) << output;
  expect_same_parameters("straight", "resumed", 0.0);
}

TEST_F(WavenetSpeakers, VocodeSpeaksAVoiceByItsNameAndRefusesOthers) {
  train("voices", "--max-steps 2" + kSpeakers + kQuiet);
  CliResult json = run_cli("inspect --json " + latest("voices"));
  ASSERT_EQ(json.exit_code, 0) << json.output;
  EXPECT_EQ(YAML::Load(json.output)["speakers"].as<std::vector<std::string>>(),
            (std::vector<std::string>{"en-gb_m2", "en-us_f3"}));
  const std::string mel = short_mel(12);
  const std::string vocode = "vocode --checkpoint " + root_ + "/voices --mel " + mel + " --out ";
  CliResult first = run_cli(vocode + root_ + "/m2.wav --speaker en-gb_m2", true);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  CliResult second = run_cli(vocode + root_ + "/f3.wav --speaker en-us_f3", true);
  ASSERT_EQ(second.exit_code, 0) << second.output;
  const std::vector<float> m2 = read_wav(root_ + "/m2.wav"), f3 = read_wav(root_ + "/f3.wav");
  ASSERT_EQ(m2.size(), 12u * 256);
  ASSERT_EQ(f3.size(), m2.size());
  EXPECT_NE(m2, f3) << "the speaker's row conditions every layer";
  CliResult missing = run_cli(vocode + root_ + "/none.wav", true);
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_NE(missing.output.find("choose one with --speaker NAME: en-gb_m2, en-us_f3"),
            std::string::npos)
      << missing.output;
  CliResult unknown = run_cli(vocode + root_ + "/none.wav --speaker nobody", true);
  EXPECT_EQ(unknown.exit_code, 2) << unknown.output;
  EXPECT_NE(unknown.output.find("'nobody' is not one"), std::string::npos) << unknown.output;
  EXPECT_FALSE(fs::exists(root_ + "/none.wav"));
}

TEST_F(WavenetSpeakers, TooFewRowsAreRefusedAndNoConditioningTrainsOneVoiceSayingSo) {
  const std::string few = train(
      "few", "--max-steps 1 --set wavenet.gin_channels=8 --set wavenet.n_speakers=1" + kQuiet, 2);
  EXPECT_NE(few.find("the store has 2 speakers but wavenet.n_speakers is 1: set "
                     "wavenet.n_speakers to at least 2"),
            std::string::npos)
      << few;
  const std::string one = train("one_voice", "--max-steps 1" + kQuiet);
  EXPECT_NE(
      one.find(
          "warning: the store has 2 speakers, trained as one voice (wavenet.gin_channels: -1)"),
      std::string::npos)
      << one;
  EXPECT_EQ(tensor_norms(latest("one_voice")).count(kEmbedding), 0u);
  CliResult refused = run_cli("vocode --checkpoint " + root_ + "/one_voice --mel " + short_mel(4) +
                                  " --speaker en_m3 --out " + root_ + "/one.wav",
                              true);
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find("one-speaker vocoder"), std::string::npos) << refused.output;
}

// r9y9's checkpoints keep the embedding's rows but no names: row i is the speaker of the store's
// id i (names in order, as a run from scratch numbers them); an import has no speaker table, so
// vocode takes a row number, and a run started from it names the rows after its store's speakers.
TEST_F(WavenetSpeakers, R9y9sLayoutKeepsTheSpeakerEmbeddingRowByRow) {
  train("to_convert", "--max-steps 2" + kSpeakers + kQuiet);
  const std::string r9y9 = root_ + "/r9y9";
  CliResult exported = run_cli("convert --to wavenet " + root_ + "/to_convert --out " + r9y9, true);
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  EXPECT_NE(exported.output.find("row 0: en-gb_m2, row 1: en-us_f3"), std::string::npos)
      << exported.output;
  // The moving average's file: `forward` reads the average of both checkpoints.
  const std::string back = root_ + "/imported.pt";
  CliResult imported =
      run_cli("convert --from wavenet " + r9y9 + "/checkpoint_step000000002_ema.pth --hparams " +
                  r9y9 + "/hparams.json --config " + kSmall + " --out " + back,
              true);
  ASSERT_EQ(imported.exit_code, 0) << imported.output;
  auto original = tensor_norms(latest("to_convert"));
  auto again = tensor_norms(back);
  ASSERT_TRUE(again.count("ema.embed_speakers.weight"));
  EXPECT_EQ(again["ema.embed_speakers.weight"], original["ema.embed_speakers.weight"]);
  // Value parity, row by row: three windows spoken as rows 1, 0 and 2 give the same logits.
  const std::string arrays = root_ + "/arrays";
  fs::create_directories(arrays);
  const std::vector<float> speaker{1, 0, 2};
  tts::formats::write_npy(arrays + "/audio.npy", std::vector<float>(3 * 512, 0.1f).data(),
                          {3, 512});
  tts::formats::write_npy(arrays + "/mel.npy", std::vector<float>(3 * 80 * 2, -4.0f).data(),
                          {3, 80, 2});
  tts::formats::write_npy(arrays + "/speaker.npy", speaker.data(), {3});
  for (const std::string name : {"original", "imported"}) {
    const std::string file = name == "original" ? latest("to_convert") : back;
    CliResult rows =
        run_cli("forward --checkpoint " + file + " --input audio=" + arrays +
                    "/audio.npy --input mel=" + arrays + "/mel.npy --input speaker=" + arrays +
                    "/speaker.npy --output logits=" + arrays + "/" + name + ".npy",
                true);
    ASSERT_EQ(rows.exit_code, 0) << rows.output;
  }
  const std::vector<float> logits = tts::formats::read_npy(arrays + "/original.npy").data;
  EXPECT_EQ(logits, tts::formats::read_npy(arrays + "/imported.npy").data);
  const size_t per_window = logits.size() / 3;
  EXPECT_NE(std::vector<float>(logits.begin(), logits.begin() + per_window),
            std::vector<float>(logits.begin() + per_window, logits.begin() + 2 * per_window))
      << "rows 1 and 0 condition the windows differently";
  // No names in the import: vocode takes a row number; a name is refused saying so.
  const std::string vocode = "vocode --checkpoint " + back + " --mel " + short_mel(4) + " --out ";
  CliResult by_row = run_cli(vocode + root_ + "/row.wav --speaker 1", true);
  EXPECT_EQ(by_row.exit_code, 0) << by_row.output;
  CliResult by_name = run_cli(vocode + root_ + "/name.wav --speaker en-us_f3", true);
  EXPECT_EQ(by_name.exit_code, 2) << by_name.output;
  EXPECT_NE(by_name.output.find("give --speaker a row number in [0, 3)"), std::string::npos)
      << by_name.output;
  // Fine-tuned on the store, its rows are the store's speakers by id.
  const std::string tuned =
      train("fine_tuned", "--max-steps 1 --init-from " + back + kSpeakers + kQuiet);
  EXPECT_NE(tuned.find("2 of 3 speaker rows used"), std::string::npos) << tuned;
  CliResult inspect = run_cli("inspect --json " + latest("fine_tuned"));
  EXPECT_EQ(YAML::Load(inspect.output)["speakers"].as<std::vector<std::string>>(),
            (std::vector<std::string>{"en-gb_m2", "en-us_f3"}));
}

// A warm start from a checkpoint with a speaker table copies each speaker's row by name, whatever
// its row there; a speaker the checkpoint lacks keeps its initialization; the log says which.
TEST_F(WavenetSpeakers, AWarmStartCopiesSpeakerRowsByName) {
  train("named", "--max-steps 1" + kSpeakers + kQuiet);
  const std::string file = tts::checkpoint::checkpoint_files(root_ + "/named/checkpoints").front();
  tts::checkpoint::Checkpoint checkpoint = tts::checkpoint::load_checkpoint(file);
  ASSERT_EQ(checkpoint.speakers, (std::vector<std::string>{"en-gb_m2", "en-us_f3"}));
  checkpoint.speakers = {"en-us_f3", "someone"};
  tts::checkpoint::write_checkpoint(file, checkpoint);
  const std::string output =
      train("renamed", "--max-steps 1 --init-from " + file + kSpeakers + kQuiet);
  EXPECT_NE(output.find("speaker embedding remapped by speaker (1 of the model's 2 speakers copied "
                        "from the checkpoint's 2; new, as initialized: en-gb_m2)"),
            std::string::npos)
      << output;
  auto rows = [](const tts::checkpoint::Checkpoint& c) {
    for (const auto& [name, tensor] : c.tensors) {
      if (name == kEmbedding) return tensor;
    }
    return torch::Tensor();
  };
  const torch::Tensor before = rows(checkpoint);
  const torch::Tensor after = rows(tts::checkpoint::load_checkpoint(
      tts::checkpoint::checkpoint_files(root_ + "/renamed/checkpoints").front()));
  ASSERT_TRUE(before.defined() && after.defined());
  // en-us_f3: row 0 of the checkpoint, row 1 of the model, one Adam step (lr 1e-3) apart.
  EXPECT_LT((after[1] - before[0]).abs().max().item<double>(), 2e-3);
  EXPECT_GT((after[1] - before[1]).abs().max().item<double>(), 1e-2);
}

// synthesize --vocoder with a WaveNet of several speakers: it speaks as --speaker's voice (a
// Tacotron-2 of the same voices, tiny.yaml: the same audio settings), or as --vocoder-speaker.
TEST_F(WavenetSpeakers, SynthesizeGivesTheVoiceToTheVocoderToo) {
  train("for_synthesis", "--max-steps 1" + kSpeakers + kQuiet);
  const std::string tiny = std::string(TTS_SOURCE_DIR) + "/configs/tiny.yaml";
  CliResult store = run_cli("preprocess --config " + tiny + " --corpus vctk --input " + root_ +
                                "/corpus --output " + root_ + "/tacotron_feats --workers 2",
                            true);
  ASSERT_EQ(store.exit_code, 0) << store.output;
  CliResult tacotron =
      run_cli("train --config " + tiny + " --data " + root_ + "/tacotron_feats --out " + root_ +
                  "/tacotron --max-steps 1 --set model.speakers=2 --set "
                  "model.max_decoder_steps=6" +
                  kQuiet,
              true);
  ASSERT_EQ(tacotron.exit_code, 0) << tacotron.output;
  const std::string synthesize = "synthesize --checkpoint " + root_ + "/tacotron --vocoder " +
                                 root_ + "/for_synthesis --text \"Hi.\" --out " + root_;
  CliResult same = run_cli(synthesize + "/same.wav --speaker en-gb_m2", true);
  ASSERT_EQ(same.exit_code, 0) << same.output;
  CliResult other =
      run_cli(synthesize + "/other.wav --speaker en-gb_m2 --vocoder-speaker en-us_f3", true);
  ASSERT_EQ(other.exit_code, 0) << other.output;
  const std::vector<float> a = read_wav(root_ + "/same.wav"), b = read_wav(root_ + "/other.wav");
  ASSERT_FALSE(a.empty());
  EXPECT_EQ(a.size(), b.size()) << "the same mel";
  EXPECT_NE(a, b) << "another voice of the vocoder";
  CliResult unknown =
      run_cli(synthesize + "/none.wav --speaker en-gb_m2 --vocoder-speaker nobody", true);
  EXPECT_EQ(unknown.exit_code, 2) << unknown.output;
  EXPECT_NE(unknown.output.find("'nobody' is not one"), std::string::npos) << unknown.output;
}

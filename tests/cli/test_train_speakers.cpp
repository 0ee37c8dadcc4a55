// A model of several speakers (model.speakers) trained for real through the CLI on a small
// espeak-ng corpus of three voices in VCTK's layout: W ranks x B give 1 rank x W*B, a resumed run
// ends as an uninterrupted one, the checkpoint names its speakers, synthesize speaks by name, and
// what does not fit is refused by name.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "train_fixture.h"
#include "tts/checkpoint/checkpoint.h"
#include "tts/core/fs.h"
#include "tts/formats/npy.h"

namespace fs = std::filesystem;
using tts::test::CliResult;
using tts::test::kAtDefaults;
using tts::test::kTiny;
using tts::test::run_cli;

namespace {

// The corpus's espeak-ng voices; the store names its speakers after them (en-us_f3, ...).
const std::string kVoices = "en-us+f3 en-gb+m2 en+m3";
const std::string kSpeakers = " --set model.speakers=3";

class TrainSpeakers : public tts::test::TrainFixture {
 protected:
  static void SetUpTestSuite() {
    make_store("train_speakers_", "LAYOUT=vctk VOICES=\"" + kVoices + "\"", "6", " --corpus vctk");
  }

  static std::string checkpoint_of(const std::string& run) {
    return root_ + "/" + run + "/checkpoints/latest";
  }
};

}  // namespace

TEST_F(TrainSpeakers, TwoRanksGiveTheParametersOfOneRankWithTheWholeBatch) {
  train("one_rank", "--max-steps 4 --set train.batch_size=6" + kSpeakers + kAtDefaults);
  std::string two = train("two_ranks", "--max-steps 4 --nproc-per-node 2 --set train.batch_size=3" +
                                           kSpeakers + kAtDefaults);
  EXPECT_NE(two.find("all 2 workers finished"), std::string::npos) << two;
  EXPECT_NE(two.find("3 of 3 speaker rows used"), std::string::npos) << two;
  // The speakers' rows trained: no longer the zeros they started as.
  const auto norms = tensor_norms("one_rank");
  ASSERT_EQ(norms.count("speaker_embedding.weight"), 1u);
  EXPECT_GT(norms.at("speaker_embedding.weight"), 0.0);
  ASSERT_EQ(norms.count("speaker_projection.weight"), 1u);
  // tiny.yaml's tolerance for the ranks' float rounding (test_train_distributed.cpp).
  expect_same_parameters("one_rank", "two_ranks", 5e-6);
}

TEST_F(TrainSpeakers, AResumedRunEndsWithTheParametersOfAnUninterruptedOne) {
  train("straight", "--max-steps 6" + kSpeakers + kAtDefaults);
  train("resumed", "--max-steps 3" + kSpeakers + kAtDefaults);
  std::string output = train("resumed", "--max-steps 6 --resume" + kSpeakers + kAtDefaults);
  EXPECT_NE(output.find("resumed from"), std::string::npos) << output;
  expect_same_parameters("straight", "resumed", 0.0);
}

TEST_F(TrainSpeakers, SynthesizeSpeaksAVoiceByItsNameAndRefusesOthers) {
  train("voices", "--max-steps 1" + kSpeakers + kAtDefaults);
  const std::string checkpoint = checkpoint_of("voices");
  CliResult inspect = run_cli("inspect " + checkpoint, true);
  EXPECT_EQ(inspect.exit_code, 0) << inspect.output;
  EXPECT_NE(inspect.output.find("3: en-gb_m2, en-us_f3, en_m3"), std::string::npos)
      << inspect.output;
  CliResult json = run_cli("inspect --json " + checkpoint);
  ASSERT_EQ(json.exit_code, 0) << json.output;
  EXPECT_EQ(YAML::Load(json.output)["speakers"].as<std::vector<std::string>>(),
            (std::vector<std::string>{"en-gb_m2", "en-us_f3", "en_m3"}));
  const std::string wav = root_ + "/hello.wav";
  CliResult spoken = run_cli("synthesize --checkpoint " + checkpoint +
                                 " --text \"Hello there.\" --speaker en-gb_m2 --out " + wav,
                             true);
  EXPECT_EQ(spoken.exit_code, 0) << spoken.output;
  EXPECT_TRUE(fs::exists(wav));
  CliResult missing =
      run_cli("synthesize --checkpoint " + checkpoint + " --text \"Hi.\" --out " + wav, true);
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_NE(missing.output.find("choose one with --speaker NAME: en-gb_m2, en-us_f3, en_m3"),
            std::string::npos)
      << missing.output;
  CliResult unknown = run_cli(
      "synthesize --checkpoint " + checkpoint + " --text \"Hi.\" --speaker nobody --out " + wav,
      true);
  EXPECT_EQ(unknown.exit_code, 2) << unknown.output;
  EXPECT_NE(unknown.output.find("'nobody' is not one"), std::string::npos) << unknown.output;
}

TEST_F(TrainSpeakers, TooFewRowsAreRefusedAndNoRowsTrainOneVoiceSayingSo) {
  CliResult few = run_cli("train --config " + kTiny + " --data " + feats_ + " --out " + root_ +
                              "/few --max-steps 1 --set model.speakers=2" + kAtDefaults,
                          true);
  EXPECT_EQ(few.exit_code, 2) << few.output;
  EXPECT_NE(few.output.find("the store has 3 speakers but model.speakers is 2"), std::string::npos)
      << few.output;
  const std::string one = train("one_voice", "--max-steps 1" + kAtDefaults);
  // A warning, with the key to set.
  EXPECT_NE(one.find("warning: the store has 3 speakers, trained as one voice (model.speakers: 0); "
                     "set model.speakers: 3"),
            std::string::npos)
      << one;
  EXPECT_EQ(tensor_norms("one_voice").count("speaker_embedding.weight"), 0u);
  CliResult refused = run_cli("synthesize --checkpoint " + checkpoint_of("one_voice") +
                                  " --text \"Hi.\" --speaker en_m3 --out " + root_ + "/one.wav",
                              true);
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find("one-speaker model"), std::string::npos) << refused.output;
}

// A resumed run reads its rows through the checkpoint's table, whatever its order; a store speaker
// the table lacks is refused by name.
TEST_F(TrainSpeakers, AResumeMapsTheStoresSpeakersThroughTheCheckpointsTable) {
  train("table", "--max-steps 1" + kSpeakers + kAtDefaults);
  const std::string file = tts::checkpoint::checkpoint_files(root_ + "/table/checkpoints").front();
  tts::checkpoint::Checkpoint checkpoint = tts::checkpoint::load_checkpoint(file);
  ASSERT_EQ(checkpoint.speakers, (std::vector<std::string>{"en-gb_m2", "en-us_f3", "en_m3"}));
  checkpoint.speakers = {"en_m3", "en-gb_m2", "someone"};
  tts::checkpoint::write_checkpoint(file, checkpoint);
  const std::string resume = "train --config " + kTiny + " --data " + feats_ + " --out " + root_ +
                             "/table --resume --max-steps 2" + kSpeakers + kAtDefaults;
  CliResult refused = run_cli(resume, true);
  EXPECT_NE(refused.exit_code, 0) << refused.output;
  EXPECT_NE(refused.output.find("the store has 1 speaker(s) the checkpoint's speaker table lacks: "
                                "en-us_f3"),
            std::string::npos)
      << refused.output;
  checkpoint.speakers = {"en_m3", "en-us_f3", "en-gb_m2"};
  tts::checkpoint::write_checkpoint(file, checkpoint);
  CliResult resumed = run_cli(resume, true);
  EXPECT_EQ(resumed.exit_code, 0) << resumed.output;
  CliResult inspect = run_cli("inspect " + checkpoint_of("table"), true);
  EXPECT_NE(inspect.output.find("3: en_m3, en-us_f3, en-gb_m2"), std::string::npos)
      << inspect.output;
}

// A warm start into a model of several speakers: from a one-speaker checkpoint every row stays
// zero (the model starts as the checkpoint computes); from one of several speakers each speaker's
// row is copied by name and the speakers it lacks start at zero; both are logged.
TEST_F(TrainSpeakers, AWarmStartCopiesSpeakerRowsByNameOrLeavesThemZero) {
  train("solo", "--max-steps 1" + kAtDefaults);
  const std::string from_one = train(
      "from_one", "--max-steps 1 --init-from " + checkpoint_of("solo") + kSpeakers + kAtDefaults);
  EXPECT_NE(from_one.find("speaker embedding: none in the checkpoint, every row zero"),
            std::string::npos)
      << from_one;
  const std::string file =
      tts::checkpoint::checkpoint_files(root_ + "/from_one/checkpoints").front();
  tts::checkpoint::Checkpoint checkpoint = tts::checkpoint::load_checkpoint(file);
  checkpoint.speakers = {"en_m3", "en-gb_m2", "someone"};
  tts::checkpoint::write_checkpoint(file, checkpoint);
  const std::string from_several =
      train("from_several",
            "--max-steps 1 --init-from " + file + " --set model.speakers=4" + kAtDefaults);
  EXPECT_NE(from_several.find("speaker embedding remapped by speaker (2 of the model's 3 speakers "
                              "copied from the checkpoint's 3; new, zero: 'en-us_f3')"),
            std::string::npos)
      << from_several;
}

// `forward` on a model of several speakers takes each utterance's row (input speakers), requires
// it, and keeps it within the table's rows.
TEST_F(TrainSpeakers, ForwardTakesTheSpeakerRowsAsAnInput) {
  train("forward", "--max-steps 1" + kSpeakers + kAtDefaults);
  const std::string dir = root_ + "/forward_arrays";
  fs::create_directories(dir);
  const std::vector<float> text = {5, 6, 7, 8};
  tts::formats::write_npy(dir + "/text.npy", text.data(), {4});
  const std::vector<float> mel(12 * 80, 0.5f);
  tts::formats::write_npy(dir + "/mel.npy", mel.data(), {12, 80});
  const std::vector<float> row = {2}, outside = {3};
  tts::formats::write_npy(dir + "/row.npy", row.data(), {1});
  tts::formats::write_npy(dir + "/outside.npy", outside.data(), {1});
  const std::string command = "forward --checkpoint " + checkpoint_of("forward") +
                              " --input text=" + dir + "/text.npy --input mel=" + dir +
                              "/mel.npy --output mel_postnet=" + dir + "/out.npy";
  CliResult spoken = run_cli(command + " --input speakers=" + dir + "/row.npy", true);
  EXPECT_EQ(spoken.exit_code, 0) << spoken.output;
  EXPECT_TRUE(fs::exists(dir + "/out.npy"));
  CliResult missing = run_cli(command, true);
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_NE(missing.output.find("give input speakers"), std::string::npos) << missing.output;
  CliResult beyond = run_cli(command + " --input speakers=" + dir + "/outside.npy", true);
  EXPECT_EQ(beyond.exit_code, 2) << beyond.output;
  EXPECT_NE(beyond.output.find("expected 1 rows in [0, 3)"), std::string::npos) << beyond.output;
}

// gta of a model of several speakers reads a VCTK-layout corpus (--corpus) and speaks each
// utterance with its own speaker's row, through the checkpoint's table: swapping two names in the
// table changes exactly those two speakers' mels.
TEST_F(TrainSpeakers, GtaSpeaksEachUtteranceWithItsOwnSpeakersRow) {
  train("gta", "--max-steps 3" + kSpeakers + kAtDefaults);
  auto gta = [&](const std::string& out) {
    CliResult result = run_cli("gta --checkpoint " + checkpoint_of("gta") + " --data " + feats_ +
                                   " --out " + root_ + "/" + out + " --wavs " + root_ +
                                   "/corpus --corpus vctk --prenet-dropout off",
                               true);
    EXPECT_EQ(result.exit_code, 0) << result.output;
    return result.output;
  };
  gta("gta_store");
  // The VCTK recordings are what the vocoder's store pairs with each mel.
  const std::string filelist = tts::read_file(root_ + "/gta_store/filelist.txt");
  EXPECT_NE(filelist.find("/corpus/wav48/en_m3/en_m3_001.wav|"), std::string::npos) << filelist;
  EXPECT_EQ(tts::read_file(root_ + "/gta_store/speakers.tsv").substr(0, 5), "name\t");

  const std::string file = tts::checkpoint::checkpoint_files(root_ + "/gta/checkpoints").front();
  tts::checkpoint::Checkpoint checkpoint = tts::checkpoint::load_checkpoint(file);
  ASSERT_EQ(checkpoint.speakers, (std::vector<std::string>{"en-gb_m2", "en-us_f3", "en_m3"}));
  checkpoint.speakers = {"en-us_f3", "en-gb_m2", "en_m3"};
  tts::checkpoint::write_checkpoint(file, checkpoint);
  gta("gta_swapped");
  int same = 0, changed = 0;
  for (const auto& entry : fs::directory_iterator(root_ + "/gta_store")) {
    if (entry.path().extension() != ".npy") continue;
    const std::string name = entry.path().filename().string();
    const auto a = tts::formats::read_npy(entry.path().string());
    const auto b = tts::formats::read_npy(root_ + "/gta_swapped/" + name);
    if (name.rfind("en_m3_", 0) == 0) {
      EXPECT_EQ(a.data, b.data) << name;
      ++same;
    } else {
      EXPECT_NE(a.data, b.data) << name;
      ++changed;
    }
  }
  EXPECT_EQ(same, 6);
  EXPECT_EQ(changed, 12);
}

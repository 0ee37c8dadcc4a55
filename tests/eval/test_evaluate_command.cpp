// `tts-train evaluate` run as the real executable on folders of the tests/data/eval fixtures.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "../cli/cli_test_util.h"
#include "eval_test_util.h"
#include "tts/core/fs.h"
#include "tts/formats/json_reader.h"

namespace tts::eval {
namespace {

namespace fsys = std::filesystem;
using test::asr_python;
using test::run_cli;
using test::run_shell;

void copy_fixture(const std::string& stem, const std::string& to) {
  fsys::copy_file(testing::fixture(stem + ".wav"), to, fsys::copy_options::overwrite_existing);
}

struct Folders {
  std::string root, reference, synthesized, out;
};

// reference/{u1: us_f3, u2: us_f3_slow, only_ref}, synthesized/{u1: us_f3, u2: gb_m2, only_syn}.
Folders make_folders(const std::string& name) {
  Folders f;
  f.root = test::fresh_dir(name);
  f.reference = f.root + "/reference";
  f.synthesized = f.root + "/synthesized";
  f.out = f.root + "/out";
  fsys::create_directories(f.reference);
  fsys::create_directories(f.synthesized);
  copy_fixture("us_f3", f.reference + "/u1.wav");
  copy_fixture("us_f3_slow", f.reference + "/u2.wav");
  copy_fixture("gb_m2", f.reference + "/only_ref.wav");
  copy_fixture("us_f3", f.synthesized + "/u1.wav");
  copy_fixture("gb_m2", f.synthesized + "/u2.wav");
  copy_fixture("gb_m2", f.synthesized + "/only_syn.wav");
  std::ofstream(f.root + "/speakers.tsv") << "u1\tfemale\nu2\tmale\n";
  return f;
}

std::string args_of(const Folders& f) {
  return "evaluate --reference " + f.reference + " --synthesized " + f.synthesized + " --out " +
         f.out;
}

double number_of(const formats::JsonValue& object, const char* key) {
  const formats::JsonValue* value = object.find(key);
  EXPECT_NE(value, nullptr) << key;
  EXPECT_EQ(value ? value->kind : formats::JsonValue::Kind::kNull,
            formats::JsonValue::Kind::kNumber)
      << key;
  return value ? testing::number(*value) : NAN;
}

TEST(EvaluateCommand, SameAudioZeroOtherVoiceAboveZeroAndTheReportHoldsIt) {
  const Folders f = make_folders("report");
  const test::CliResult result =
      run_cli(args_of(f) + " --speakers " + f.root + "/speakers.tsv", true);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("1 ids only in --reference"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("only_ref"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("only_syn"), std::string::npos) << result.output;

  const formats::JsonValue report = formats::read_json_file(f.out + "/evaluate.json");
  const formats::JsonValue* utterances = report.find("utterances");
  ASSERT_NE(utterances, nullptr);
  ASSERT_EQ(utterances->items.size(), 2u);
  const formats::JsonValue& same = utterances->items[0];
  const formats::JsonValue& other = utterances->items[1];
  EXPECT_EQ(same.find("id")->text, "u1");
  EXPECT_EQ(other.find("id")->text, "u2");
  EXPECT_EQ(same.find("speaker")->text, "female");
  EXPECT_EQ(number_of(same, "mcd_db"), 0.0);
  EXPECT_EQ(number_of(same, "vde"), 0.0);
  EXPECT_EQ(number_of(same, "f0_rmse_hz"), 0.0);
  EXPECT_GT(number_of(same, "frames"), 100.0);
  EXPECT_GT(number_of(other, "mcd_db"), 5.0);  // a female US voice against a male British one
  EXPECT_GT(number_of(other, "f0_rmse_hz"), 20.0);
  EXPECT_GT(number_of(other, "vde"), 0.0);
  EXPECT_EQ(same.find("cer"), nullptr);  // no --asr

  const formats::JsonValue* summary = report.find("summary");
  ASSERT_NE(summary, nullptr);
  EXPECT_EQ(number_of(*summary, "utterances"), 2.0);
  EXPECT_NEAR(number_of(*summary, "mcd_db"), number_of(other, "mcd_db") / 2, 1e-9);
  const formats::JsonValue* speakers = report.find("speakers");
  ASSERT_NE(speakers, nullptr);
  ASSERT_NE(speakers->find("male"), nullptr);
  EXPECT_NEAR(number_of(*speakers->find("male"), "mcd_db"), number_of(other, "mcd_db"), 1e-9);
  EXPECT_EQ(number_of(*speakers->find("female"), "mcd_db"), 0.0);
  ASSERT_EQ(report.find("reference_only")->items.size(), 1u);
  EXPECT_EQ(report.find("reference_only")->items[0].text, "only_ref");
  ASSERT_EQ(report.find("synthesized_only")->items.size(), 1u);
  EXPECT_EQ(report.find("synthesized_only")->items[0].text, "only_syn");

  const std::string tsv = tts::read_file(f.out + "/evaluate.tsv");
  EXPECT_EQ(tsv.rfind("id\tspeaker\tmcd_db\tf0_rmse_hz\tvde\tframes\tcer\n", 0), 0u) << tsv;
  EXPECT_NE(tsv.find("\nu1\tfemale\t0.000000\t"), std::string::npos) << tsv;
  EXPECT_NE(tsv.find("\nmean:male\tmale\t"), std::string::npos) << tsv;
  EXPECT_NE(tsv.find("\nmean\t\t"), std::string::npos) << tsv;
}

TEST(EvaluateCommand, NoCommonIdIsAnErrorNamingBothSides) {
  const Folders f = make_folders("disjoint");
  fsys::remove(f.synthesized + "/u1.wav");
  fsys::remove(f.synthesized + "/u2.wav");
  const test::CliResult result = run_cli(args_of(f), true);
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_NE(result.output.find("no id has a clip in both folders"), std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("only_syn"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("3 in --reference"), std::string::npos) << result.output;
  EXPECT_FALSE(fsys::exists(f.out + "/evaluate.json"));
}

TEST(EvaluateCommand, GarbageClipIsNamed) {
  const Folders f = make_folders("garbage");
  std::ofstream(f.synthesized + "/u2.wav") << "this is not audio, only text named .wav\n";
  const test::CliResult result = run_cli(args_of(f), true);
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_NE(result.output.find("synthesized/u2.wav"), std::string::npos) << result.output;
  EXPECT_FALSE(fsys::exists(f.out + "/evaluate.json"));
}

TEST(EvaluateCommand, SymlinkOutOfTheFolderAndTwoClipsOfOneIdAreRefused) {
  const Folders f = make_folders("links");
  fsys::remove(f.synthesized + "/u2.wav");
  fsys::create_symlink(testing::fixture("gb_m2.wav"), f.synthesized + "/u2.wav");
  test::CliResult result = run_cli(args_of(f), true);
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_NE(result.output.find("u2.wav: a symlink to"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("outside the folder"), std::string::npos) << result.output;

  fsys::remove(f.synthesized + "/u2.wav");
  copy_fixture("gb_m2", f.synthesized + "/u2.wav");
  copy_fixture("gb_m2", f.synthesized + "/u1.flac.tmp");
  fsys::rename(f.synthesized + "/u1.flac.tmp", f.synthesized + "/u1.FLAC");
  result = run_cli(args_of(f), true);
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_NE(result.output.find("two clips of id u1"), std::string::npos) << result.output;
}

TEST(EvaluateCommand, UsageErrorsExitTwo) {
  const Folders f = make_folders("usage");
  for (const std::string& args :
       {std::string("evaluate --synthesized ") + f.synthesized,
        "evaluate --reference " + f.root + "/missing --synthesized " + f.synthesized,
        args_of(f) + " --asr pocketsphinx", args_of(f) + " --asr whisper --text x"}) {
    const test::CliResult result = run_cli(args, true);
    EXPECT_EQ(result.exit_code, 2) << args << "\n" << result.output;
  }
  const test::CliResult missing =
      run_cli("evaluate --reference " + f.root + "/missing --synthesized " + f.synthesized, true);
  EXPECT_NE(missing.output.find("expected a folder of audio clips"), std::string::npos)
      << missing.output;
  const test::CliResult bad_table = run_cli(
      args_of(f) + " --speakers " + test::write_temp("speakers_bad.tsv", "u1 female\n"), true);
  EXPECT_EQ(bad_table.exit_code, 1) << bad_table.output;
  EXPECT_NE(bad_table.output.find("speakers_bad.tsv line 1"), std::string::npos)
      << bad_table.output;
}

TEST(EvaluateCommand, RecognizerThatCannotRunIsNamedWithTheFix) {
  const Folders f = make_folders("no_asr");
  const std::string text = test::write_temp("texts_no_asr.txt", "u1\tThe quick brown fox.\n");
  const test::CliResult result =
      run_cli(args_of(f) + " --text " + text + " --asr pocketsphinx --asr-python " + f.root +
                  "/no-such-python",
              true);
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_NE(result.output.find("no-such-python"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("pip install pocketsphinx"), std::string::npos) << result.output;
  EXPECT_FALSE(fsys::exists(f.out + "/evaluate.json"));
}

// The recognizer is optional at run time; this test runs wherever a Python has pocketsphinx.
TEST(EvaluateCommand, AsrGivesACharacterErrorRate) {
  const std::string python = asr_python();
  if (python.empty()) {
    GTEST_SKIP() << "no Python with the pocketsphinx package (TTS_ASR_PYTHON, .deps/torch-2.11.0 "
                    "of scripts/setup.sh --torch pip, python3): --asr cannot run here";
  }
  const Folders f = make_folders("asr");
  const std::string text = test::write_temp(
      "texts.txt", "u1|The quick brown fox jumps over the lazy dog.\nu2\tThe quick brown fox.\n");
  const test::CliResult result =
      run_cli(args_of(f) + " --text " + text + " --asr pocketsphinx --asr-python " + python, true);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const formats::JsonValue report = formats::read_json_file(f.out + "/evaluate.json");
  for (const auto& u : report.find("utterances")->items) {
    const double cer = number_of(u, "cer");
    EXPECT_GE(cer, 0.0);
    EXPECT_EQ(number_of(u, "cer_chars"), u.find("id")->text == "u1" ? 43.0 : 19.0);
    ASSERT_NE(u.find("transcript"), nullptr);
  }
  EXPECT_EQ(report.find("settings")->find("asr")->text, "pocketsphinx");
}

}  // namespace
}  // namespace tts::eval

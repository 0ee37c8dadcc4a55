// metadata.csv parsing: LJSpeech's format and the ways real files break it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tts/core/error.h"
#include "tts/data/ljspeech.h"

using tts::data::parse_ljspeech_metadata;

TEST(LJSpeechMetadata, UsesTheNormalizedColumnAndKeepsQuotesAndPunctuation) {
  auto metadata = parse_ljspeech_metadata(
      "LJ001-0001|Printing, in the only sense|Printing, in the only sense\n"
      "LJ002-0013|till, 1808, the lowest point was touched|till, eighteen oh eight, the lowest "
      "point was touched\n"
      "LJ002-0195|a \"run on the key,\" which|a \"run on the key,\" which\n");
  ASSERT_TRUE(metadata.problems.empty());
  ASSERT_EQ(metadata.entries.size(), 3u);
  EXPECT_EQ(metadata.entries[0].id, "LJ001-0001");
  EXPECT_EQ(metadata.entries[0].line, 1);
  EXPECT_EQ(metadata.entries[1].text, "till, eighteen oh eight, the lowest point was touched");
  EXPECT_EQ(metadata.entries[2].text, "a \"run on the key,\" which");
}

TEST(LJSpeechMetadata, FallsBackToTheRawColumn) {
  auto metadata = parse_ljspeech_metadata(
      "A|raw only\n"
      "B|raw text|\n"
      "C|raw text|   \n");
  ASSERT_TRUE(metadata.problems.empty());
  ASSERT_EQ(metadata.entries.size(), 3u);
  EXPECT_EQ(metadata.entries[0].text, "raw only");
  EXPECT_EQ(metadata.entries[1].text, "raw text");
  EXPECT_EQ(metadata.entries[2].text, "raw text");
}

TEST(LJSpeechMetadata, BlankLinesBomAndWindowsLineEndsAreAccepted) {
  auto metadata = parse_ljspeech_metadata(
      "\xEF\xBB\xBFLJ001-0001|One.|One.\r\n"
      "\r\n"
      "   \n"
      "LJ001-0002|Two.|Two.\r\n"
      "LJ001-0003|Three.|Three.");  // no final newline
  ASSERT_TRUE(metadata.problems.empty());
  ASSERT_EQ(metadata.entries.size(), 3u);
  EXPECT_EQ(metadata.entries[0].id, "LJ001-0001");
  EXPECT_EQ(metadata.entries[0].text, "One.");
  EXPECT_EQ(metadata.entries[1].line, 4);
  EXPECT_EQ(metadata.entries[2].text, "Three.");
}

TEST(LJSpeechMetadata, WrongColumnCountsAreReportedWithLineAndExcerpt) {
  auto metadata = parse_ljspeech_metadata(
      "LJ001-0001|ok|ok\n"
      "just some text without separators\n"
      "LJ001-0002|a|b|c\n"
      "LJ001-0003|pipes | inside | text | too\n");
  ASSERT_EQ(metadata.entries.size(), 1u);
  ASSERT_EQ(metadata.problems.size(), 3u);
  EXPECT_EQ(metadata.problems[0].line, 2);
  EXPECT_EQ(metadata.problems[0].id, "just some text without separators");
  EXPECT_NE(metadata.problems[0].reason.find("found 1"), std::string::npos);
  EXPECT_NE(metadata.problems[0].reason.find("malformed line"), std::string::npos);
  EXPECT_EQ(metadata.problems[1].line, 3);
  EXPECT_NE(metadata.problems[1].reason.find("found 4"), std::string::npos);
  EXPECT_EQ(metadata.problems[2].line, 4);
  EXPECT_NE(metadata.problems[2].reason.find("found 5"), std::string::npos);
}

TEST(LJSpeechMetadata, LongMalformedLinesAreShortenedInTheIdColumn) {
  std::string line(200, 'x');
  auto metadata = parse_ljspeech_metadata(line + "\n");
  ASSERT_EQ(metadata.problems.size(), 1u);
  EXPECT_EQ(metadata.problems[0].id, std::string(40, 'x') + "...");
}

TEST(LJSpeechMetadata, EmptyUnsafeAndDuplicateIds) {
  auto metadata = parse_ljspeech_metadata(
      "|no id|no id\n"
      "../etc/passwd|escape|escape\n"
      "has space|x|x\n"
      "LJ001-0001|first|first\n"
      "LJ001-0001|second|second\n");
  ASSERT_EQ(metadata.entries.size(), 1u);
  EXPECT_EQ(metadata.entries[0].text, "first");
  ASSERT_EQ(metadata.problems.size(), 4u);
  EXPECT_NE(metadata.problems[0].reason.find("empty"), std::string::npos);
  EXPECT_NE(metadata.problems[1].reason.find("cannot name a file"), std::string::npos);
  EXPECT_NE(metadata.problems[2].reason.find("cannot name a file"), std::string::npos);
  EXPECT_EQ(metadata.problems[3].id, "LJ001-0001");
  EXPECT_EQ(metadata.problems[3].line, 5);
  EXPECT_NE(metadata.problems[3].reason.find("duplicate id: first on line 4"), std::string::npos);
}

TEST(LJSpeechMetadata, EmptyTranscriptIsAnEntryForTheCleanerToJudge) {
  auto metadata = parse_ljspeech_metadata("A||\n");
  ASSERT_EQ(metadata.entries.size(), 1u);
  EXPECT_EQ(metadata.entries[0].text, "");
}

TEST(LJSpeechMetadata, ReadingAMissingCorpusNamesTheFileAndTheFix) {
  std::string dir = std::string(TTS_TEST_TMP_DIR) + "/no_such_corpus";
  try {
    tts::data::read_ljspeech_metadata(dir);
    FAIL() << "expected tts::Error";
  } catch (const tts::Error& e) {
    std::string message = e.what();
    EXPECT_NE(message.find(dir + "/metadata.csv"), std::string::npos) << message;
    EXPECT_NE(message.find("--input"), std::string::npos) << message;
  }
}

// wavs/ID.wav, .flac, .ogg or .opus: the one that exists; none or two are named as the problem.
TEST(LJSpeechAudio, FindsTheOneAudioFileOfAnIdByItsExtension) {
  const std::string dir = std::string(TTS_TEST_TMP_DIR) + "/ljspeech_audio";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/wavs");
  tts::data::AudioLookup none = tts::data::find_ljspeech_audio(dir, "A");
  EXPECT_EQ(none.path, dir + "/wavs/A.wav");
  EXPECT_NE(none.problem.find("missing audio: no file '" + dir + "/wavs/A.wav' (nor .flac"),
            std::string::npos)
      << none.problem;
  for (const char* extension : {".wav", ".flac", ".ogg", ".opus"}) {
    const std::string id = std::string("B") + (extension + 1);
    std::ofstream(dir + "/wavs/" + id + extension) << "x";
    tts::data::AudioLookup found = tts::data::find_ljspeech_audio(dir, id);
    EXPECT_EQ(found.path, dir + "/wavs/" + id + extension);
    EXPECT_TRUE(found.problem.empty()) << found.problem;
  }
  std::ofstream(dir + "/wavs/C.wav") << "x";
  std::ofstream(dir + "/wavs/C.flac") << "x";
  tts::data::AudioLookup two = tts::data::find_ljspeech_audio(dir, "C");
  EXPECT_NE(two.problem.find("ambiguous audio: 2 files for utterance C ('" + dir +
                             "/wavs/C.wav', '" + dir + "/wavs/C.flac')"),
            std::string::npos)
      << two.problem;
}

TEST(LJSpeechMetadata, ReadsTheFileFromTheCorpusDirectory) {
  std::string dir = std::string(TTS_TEST_TMP_DIR) + "/ljspeech_reader";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/metadata.csv") << "LJ001-0001|Raw 1.|Raw one.\n";
  auto metadata = tts::data::read_ljspeech_metadata(dir);
  ASSERT_EQ(metadata.entries.size(), 1u);
  EXPECT_EQ(metadata.entries[0].text, "Raw one.");
}

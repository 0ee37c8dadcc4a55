// The corpus readers: VCTK's, LibriTTS's, CSV and LJSpeech layouts, their speakers, and every
// input they cannot use named as a problem; the split that gives validation every speaker.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "../support/scratch.h"
#include "tts/audio/audio_io.h"
#include "tts/core/error.h"
#include "tts/data/corpus.h"
#include "tts/data/store_writer.h"

namespace fs = std::filesystem;
using tts::config::CorpusLayout;
using tts::data::Corpus;
using tts::data::read_corpus;

namespace {

void write_text(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

void write_sound(const fs::path& path) {
  fs::create_directories(path.parent_path());
  tts::audio::write_wav(path.string(), std::vector<float>(2205, 0.1f), 22050);
}

tts::config::DataOptions layout(CorpusLayout corpus) {
  tts::config::DataOptions options;
  options.corpus = corpus;
  return options;
}

// "id speaker text" of every entry, and "id: reason" of every problem, for compact checks.
std::map<std::string, std::string> entries_of(const Corpus& corpus) {
  std::map<std::string, std::string> out;
  for (const auto& e : corpus.entries) out[e.id] = e.speaker + " " + e.text;
  return out;
}

std::string problem_of(const Corpus& corpus, const std::string& id) {
  for (const auto& p : corpus.problems) {
    if (p.id == id) return p.reason;
  }
  return "(no problem for " + id + ")";
}

bool starts_with(const std::string& text, const std::string& start) {
  return text.rfind(start, 0) == 0;
}

}  // namespace

TEST(Corpus, VctkOfEitherReleaseGivesSpeakersTextsAndAudio) {
  // VCTK 0.80: wav48/SPK/ID.wav.
  const std::string old_release = tts::test::fresh_dir("vctk080");
  write_text(fs::path(old_release) / "txt/p225/p225_001.txt", "Please call Stella.\n");
  write_text(fs::path(old_release) / "txt/p225/p225_002.txt", "Ask her to bring these things.");
  write_text(fs::path(old_release) / "txt/p226/p226_001.txt", "\xEF\xBB\xBFSix spoons\r\nof snow.");
  write_sound(fs::path(old_release) / "wav48/p225/p225_001.wav");
  write_sound(fs::path(old_release) / "wav48/p225/p225_002.wav");
  write_sound(fs::path(old_release) / "wav48/p226/p226_001.wav");
  write_text(fs::path(old_release) / "README", "not an utterance");
  Corpus corpus = read_corpus(layout(CorpusLayout::kVctk), old_release);
  EXPECT_TRUE(corpus.problems.empty()) << corpus.problems[0].reason;
  EXPECT_EQ(entries_of(corpus),
            (std::map<std::string, std::string>{{"p225_001", "p225 Please call Stella."},
                                                {"p225_002", "p225 Ask her to bring these things."},
                                                {"p226_001", "p226 Six spoons of snow."}}));
  EXPECT_EQ(corpus.entries[0].audio, old_release + "/wav48/p225/p225_001.wav");

  // VCTK 0.92: wav48_silence_trimmed/SPK/ID_mic1.flac beside ID_mic2.flac; mic1 is read.
  const std::string new_release = tts::test::fresh_dir("vctk092");
  write_text(fs::path(new_release) / "txt/p225/p225_001.txt", "Please call Stella.");
  write_sound(fs::path(new_release) / "wav48_silence_trimmed/p225/p225_001_mic1.flac");
  write_sound(fs::path(new_release) / "wav48_silence_trimmed/p225/p225_001_mic2.flac");
  corpus = read_corpus(layout(CorpusLayout::kVctk), new_release);
  ASSERT_EQ(corpus.entries.size(), 1u);
  EXPECT_TRUE(corpus.problems.empty());
  EXPECT_EQ(corpus.entries[0].audio,
            new_release + "/wav48_silence_trimmed/p225/p225_001_mic1.flac");
}

TEST(Corpus, VctkInputsThatCannotBeUsedAreProblemsNamingTheFile) {
  const fs::path dir = tts::test::fresh_dir("vctk_bad");
  write_text(dir / "txt/p225/p225_001.txt", "Fine.");
  write_sound(dir / "wav48/p225/p225_001.wav");
  write_text(dir / "txt/p225/p225_002.txt", "Text without audio.");
  write_sound(dir / "wav48/p225/p225_003.wav");  // audio without text
  write_text(dir / "txt/p225/p225_004.lab", "not a transcript");
  write_text(dir / "wav48/p225/p225_005.mp3", "not audio we read");
  write_text(dir / "txt/bad name/bad name_001.txt", "A speaker with a space.");
  write_sound(dir / "wav48/bad name/bad name_001.wav");
  write_text(dir / "txt/p227", "a file where a speaker's folder belongs");
  write_sound(dir / "wav48/p315/p315_001.wav");  // a speaker without transcripts (VCTK's p315)
  write_text(dir / "txt/p228/p228_001.txt", "Two files for one utterance.");
  write_sound(dir / "wav48/p228/p228_001.wav");
  write_sound(dir / "wav48/p228/p228_001.flac");
  Corpus corpus = read_corpus(layout(CorpusLayout::kVctk), dir.string());
  EXPECT_EQ(entries_of(corpus), (std::map<std::string, std::string>{{"p225_001", "p225 Fine."}}));
  EXPECT_TRUE(starts_with(problem_of(corpus, "p225_002"), "missing audio:"));
  EXPECT_NE(problem_of(corpus, "p225_002").find("wav48/p225/p225_002.wav"), std::string::npos);
  EXPECT_TRUE(starts_with(problem_of(corpus, "p225_003"), "no transcript:"));
  EXPECT_NE(problem_of(corpus, "p225_003").find("txt/p225/p225_003.txt"), std::string::npos);
  EXPECT_TRUE(starts_with(problem_of(corpus, "p225_004"), "not a transcript:"));
  EXPECT_TRUE(starts_with(problem_of(corpus, "p225_005"), "not audio:"));
  EXPECT_TRUE(starts_with(problem_of(corpus, "bad name"), "bad speaker:"));
  EXPECT_TRUE(starts_with(problem_of(corpus, "p227"), "unreadable speaker folder:"));
  EXPECT_TRUE(starts_with(problem_of(corpus, "p315"), "no transcripts:"));
  EXPECT_TRUE(starts_with(problem_of(corpus, "p228_001"), "ambiguous audio:"));
  EXPECT_EQ(corpus.inputs(), 1 + static_cast<int64_t>(corpus.problems.size()));
}

TEST(Corpus, AFolderThatIsNotOfTheLayoutIsAUsageErrorSayingWhatIsMissing) {
  const fs::path dir = tts::test::fresh_dir("vctk_not");
  write_sound(dir / "wav48/p225/p225_001.wav");
  try {
    read_corpus(layout(CorpusLayout::kVctk), dir.string());
    ADD_FAILURE() << "expected a UsageError";
  } catch (const tts::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("no txt/ folder"), std::string::npos) << e.what();
  }
  write_text(dir / "txt/p225/p225_001.txt", "Hello.");
  fs::create_directories(dir / "wav48_silence_trimmed");
  try {
    read_corpus(layout(CorpusLayout::kVctk), dir.string());
    ADD_FAILURE() << "expected a UsageError";
  } catch (const tts::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("wav48, wav48_silence_trimmed"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(read_corpus(layout(CorpusLayout::kLjspeech), (dir / "missing").string()),
               tts::UsageError);
}

// A corpus read as another layout than the one it has (preprocess without --corpus on VCTK's or
// LibriTTS's tree) is refused naming the layout it has and the flag to add.
TEST(Corpus, AFolderOfAnotherLayoutNamesItAndTheFlag) {
  const fs::path vctk = tts::test::fresh_dir("layout_vctk");
  write_text(vctk / "txt/p225/p225_001.txt", "Hello.");
  write_sound(vctk / "wav48/p225/p225_001.wav");
  const fs::path libritts = tts::test::fresh_dir("layout_libritts");
  write_sound(libritts / "84/121123/84_121123_000007_000001.wav");
  write_text(libritts / "84/121123/84_121123_000007_000001.normalized.txt", "Chapter one.");
  const fs::path lj = tts::test::fresh_dir("layout_lj");
  write_text(lj / "metadata.csv", "a|Hello.|Hello.\n");
  EXPECT_EQ(tts::data::layout_of(vctk.string()), CorpusLayout::kVctk);
  EXPECT_EQ(tts::data::layout_of(libritts.string()), CorpusLayout::kLibritts);
  EXPECT_EQ(tts::data::layout_of(lj.string()), CorpusLayout::kLjspeech);
  EXPECT_EQ(tts::data::layout_of(tts::test::fresh_dir("layout_none")), std::nullopt);
  for (const auto& [dir, name] : {std::pair{vctk, "vctk"}, std::pair{libritts, "libritts"}}) {
    try {
      read_corpus(layout(CorpusLayout::kLjspeech), dir.string());
      ADD_FAILURE() << "expected a UsageError for " << name;
    } catch (const tts::UsageError& e) {
      EXPECT_NE(
          std::string(e.what()).find(fmt::format(
              "'{}' has {}'s layout, but it is read as data.corpus: ljspeech: add --corpus {}",
              dir.string(), name, name)),
          std::string::npos)
          << e.what();
    }
  }
}

TEST(Corpus, LibriTtsReadsTheNormalizedTextAndNamesWhatIsMissing) {
  const fs::path dir = tts::test::fresh_dir("libritts");
  const fs::path chapter = dir / "84/121123";
  write_sound(chapter / "84_121123_000007_000001.wav");
  write_text(chapter / "84_121123_000007_000001.normalized.txt", "Chapter one.");
  write_text(chapter / "84_121123_000007_000001.original.txt", "CHAPTER 1.");
  write_sound(chapter / "84_121123_000008_000000.wav");  // only the original text
  write_text(chapter / "84_121123_000008_000000.original.txt", "Original only.");
  write_sound(chapter / "84_121123_000009_000000.wav");  // no text at all
  write_text(chapter / "84_121123_000010_000000.normalized.txt", "No audio.");
  write_text(chapter / "84_121123.trans.tsv", "the chapter's table, not needed");
  write_sound(dir / "174/50561/174_50561_000001_000000.wav");
  write_text(dir / "174/50561/174_50561_000001_000000.normalized.txt", "Another speaker.");
  Corpus corpus = read_corpus(layout(CorpusLayout::kLibritts), dir.string());
  EXPECT_EQ(entries_of(corpus), (std::map<std::string, std::string>{
                                    {"84_121123_000007_000001", "84 Chapter one."},
                                    {"84_121123_000008_000000", "84 Original only."},
                                    {"174_50561_000001_000000", "174 Another speaker."}}));
  EXPECT_TRUE(starts_with(problem_of(corpus, "84_121123_000009_000000"), "no transcript:"));
  EXPECT_TRUE(starts_with(problem_of(corpus, "84_121123_000010_000000"), "missing audio:"));
  EXPECT_EQ(corpus.problems.size(), 2u);

  // The folder above LibriTTS's subsets is not a subset: the error says to pass one.
  const fs::path above = tts::test::fresh_dir("libritts_above");
  write_sound(above / "train-clean-100/84/121123/84_121123_000007_000001.wav");
  try {
    read_corpus(layout(CorpusLayout::kLibritts), above.string());
    ADD_FAILURE() << "expected a UsageError";
  } catch (const tts::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("pass one subset"), std::string::npos) << e.what();
  }
}

TEST(Corpus, CsvColumnsAreWhatTheConfigNamesAndBadRowsAreProblems) {
  const fs::path dir = tts::test::fresh_dir("csv");
  write_sound(dir / "audio/a.wav");
  write_sound(dir / "audio/b.flac");
  write_sound(dir / "audio/c.wav");
  write_sound(dir / "outside.wav");
  tts::config::DataOptions options = layout(CorpusLayout::kCsv);
  options.csv_file = "list.csv";
  options.csv_columns = {"speaker", "ignore", "path", "text"};
  options.csv_delimiter = ",";
  options.csv_header = true;
  write_text(dir / "list.csv",
             "speaker,duration,path,text\n"
             "alice,1.0,audio/a.wav,Hello there\n"
             "bob,1.0,audio/b.flac,Good morning\n"
             "bob,1.0,audio/missing.wav,Gone\n"
             "carol/x,1.0,audio/c.wav,Path characters in a speaker\n"
             "alice,1.0,../outside.wav,Escapes the folder\n"
             "alice,1.0,/etc/passwd,Absolute\n"
             "alice,too,few\n"
             "alice,1.0,audio/a.wav,The same id again\n");
  Corpus corpus = read_corpus(options, dir.string());
  EXPECT_EQ(entries_of(corpus), (std::map<std::string, std::string>{{"a", "alice Hello there"},
                                                                    {"b", "bob Good morning"}}));
  EXPECT_EQ(corpus.entries[1].audio, (dir / "audio/b.flac").string());
  EXPECT_EQ(corpus.entries[1].line, 3);
  ASSERT_EQ(corpus.problems.size(), 6u);
  EXPECT_TRUE(starts_with(corpus.problems[0].reason, "missing audio:"))
      << corpus.problems[0].reason;
  EXPECT_EQ(corpus.problems[0].line, 4);
  EXPECT_TRUE(starts_with(corpus.problems[1].reason, "bad speaker:")) << corpus.problems[1].reason;
  EXPECT_TRUE(starts_with(corpus.problems[2].reason, "bad path:")) << corpus.problems[2].reason;
  EXPECT_TRUE(starts_with(corpus.problems[3].reason, "bad path:")) << corpus.problems[3].reason;
  EXPECT_TRUE(starts_with(corpus.problems[4].reason, "malformed line: expected 4 ','-separated"))
      << corpus.problems[4].reason;
  EXPECT_TRUE(starts_with(corpus.problems[5].reason, "duplicate id: first on line 2"))
      << corpus.problems[5].reason;

  // An id column names utterances; without a speaker column the corpus has one speaker.
  options.csv_columns = {"id", "path", "text"};
  options.csv_header = false;
  options.speaker = "narrator";
  write_text(dir / "list.csv", "u1,audio/a.wav,One\nu2,audio/c.wav,Two\n");
  corpus = read_corpus(options, dir.string());
  EXPECT_EQ(entries_of(corpus),
            (std::map<std::string, std::string>{{"u1", "narrator One"}, {"u2", "narrator Two"}}));
  options.csv_file = "none.csv";
  EXPECT_THROW(read_corpus(options, dir.string()), tts::UsageError);
}

TEST(Corpus, AnLjspeechCorpusIsOneSpeakerNamedByTheConfigOrItsFolder) {
  const fs::path dir = tts::test::fresh_dir("LJSpeech-1.1");
  write_text(dir / "metadata.csv", "LJ001-0001|One.|One.\nLJ001-0002|Two.|Two.\n");
  write_sound(dir / "wavs/LJ001-0001.wav");
  Corpus corpus = read_corpus(layout(CorpusLayout::kLjspeech), dir.string());
  EXPECT_EQ(entries_of(corpus),
            (std::map<std::string, std::string>{{"LJ001-0001", "LJSpeech-1.1 One."}}));
  EXPECT_TRUE(starts_with(problem_of(corpus, "LJ001-0002"), "missing audio:"));
  EXPECT_EQ(corpus.problems[0].line, 2);
  tts::config::DataOptions named = layout(CorpusLayout::kLjspeech);
  named.speaker = "linda";
  EXPECT_EQ(read_corpus(named, dir.string() + "/").entries[0].speaker, "linda");
}

TEST(Corpus, SpeakerNamesThatCannotNameAFileAreRefused) {
  EXPECT_EQ(tts::data::speaker_name_problem("p225"), "");
  EXPECT_EQ(tts::data::speaker_name_problem("en-us_f3"), "");
  for (const std::string& bad : std::vector<std::string>{
           "", ".", "..", "a/b", "a\\b", "a b", "tab\there", "bell\a", std::string(200, 'x')}) {
    EXPECT_NE(tts::data::speaker_name_problem(bad), "") << bad;
  }
}

TEST(SpeakerSplit, EverySpeakerGivesValidationUtterancesAndKeepsSomeForTraining) {
  std::vector<tts::data::StoreRow> rows;
  const std::map<std::string, int> sizes{
      {"big", 60}, {"mid", 30}, {"small", 3}, {"one", 1}, {"two", 2}};
  for (const auto& [speaker, count] : sizes) {
    for (int i = 0; i < count; ++i) {
      tts::data::StoreRow row;
      row.id = speaker + "_" + std::to_string(i);
      row.speaker = speaker;
      rows.push_back(row);
    }
  }
  auto count_val = [](const tts::data::Split& split) {
    std::map<std::string, int> counts;
    for (const auto& row : split.val) ++counts[row.speaker];
    return counts;
  };
  // 10 of 96 in proportion: big 6.25, mid 3.125, small 0.31, one 0.10, two 0.21; then at least
  // one from each speaker of two or more, never a speaker's last.
  auto split = tts::data::split_train_val(rows, 10, 1234);
  EXPECT_EQ(count_val(split),
            (std::map<std::string, int>{{"big", 6}, {"mid", 3}, {"small", 1}, {"two", 1}}));
  EXPECT_EQ(split.train.size() + split.val.size(), rows.size());
  // A fraction is a share of every speaker's utterances: 48 of 96, the one left over by the
  // floors (one and small tie at .5) going to small, as one has no utterance to spare.
  EXPECT_EQ(count_val(tts::data::split_train_val(rows, 0.5, 1234)),
            (std::map<std::string, int>{{"big", 30}, {"mid", 15}, {"small", 2}, {"two", 1}}));
  // The choice depends on ids, speakers and the seed, not on the rows' order.
  std::vector<tts::data::StoreRow> reversed(rows.rbegin(), rows.rend());
  auto ids = [](const std::vector<tts::data::StoreRow>& list) {
    std::set<std::string> out;
    for (const auto& row : list) out.insert(row.id);
    return out;
  };
  EXPECT_EQ(ids(tts::data::split_train_val(reversed, 10, 1234).val), ids(split.val));
  EXPECT_NE(ids(tts::data::split_train_val(rows, 10, 7).val), ids(split.val));
}

TEST(SpeakerSplit, TheRemainderGoesToASpeakerThatCanGiveOne) {
  // 3 of 7: one 0.43, x 1.29, y 1.29. The largest remainder is one's, but a speaker of one
  // utterance keeps it for training: the validation utterance left over comes from x instead, so
  // validation gets the 3 asked for.
  std::vector<tts::data::StoreRow> rows;
  for (const auto& [speaker, count] : std::map<std::string, int>{{"one", 1}, {"x", 3}, {"y", 3}}) {
    for (int i = 0; i < count; ++i) {
      tts::data::StoreRow row;
      row.id = speaker + "_" + std::to_string(i);
      row.speaker = speaker;
      rows.push_back(row);
    }
  }
  const tts::data::Split split = tts::data::split_train_val(rows, 3, 1234);
  std::map<std::string, int> counts;
  for (const auto& row : split.val) ++counts[row.speaker];
  EXPECT_EQ(counts, (std::map<std::string, int>{{"x", 2}, {"y", 1}}));
  EXPECT_EQ(split.val.size(), 3u);
  EXPECT_EQ(split.train.size(), 4u);
}

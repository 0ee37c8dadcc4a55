// Phonemes from libespeak-ng in process: the same IPA as the espeak-ng command line, punctuation
// kept, every phoneme of the transcripts in the ipa symbol table, clear errors.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "../support/scratch.h"
#include "tts/config/config.h"
#include "tts/core/error.h"
#include "tts/text/cleaners.h"
#include "tts/text/phonemizer.h"
#include "tts/text/text_processor.h"

using tts::text::Phonemizer;

namespace {

// The transcripts of tests/data/ljspeech_sample_transcripts.txt (ID|text lines).
std::vector<std::string> sample_transcripts() {
  std::ifstream in(std::string(TTS_TEST_DATA_DIR) + "/ljspeech_sample_transcripts.txt");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    size_t bar = line.find('|');
    if (bar != std::string::npos) lines.push_back(line.substr(bar + 1));
  }
  return lines;
}

// What `espeak-ng -q --ipa -v VOICE -f FILE` prints, one line per clause (empty lines dropped).
std::vector<std::string> espeak_command_line(const std::string& voice, const std::string& text,
                                             const std::string& file) {
  {
    std::ofstream out(file);
    out << text << "\n";
  }
  std::string command = "espeak-ng -q --ipa -v " + voice + " -f " + file;
  FILE* pipe = popen(command.c_str(), "r");
  EXPECT_NE(pipe, nullptr) << command;
  std::vector<std::string> lines;
  std::string current;
  for (int c; (c = fgetc(pipe)) != EOF;) {
    if (c == '\n') {
      if (current.find_first_not_of(' ') != std::string::npos) lines.push_back(current);
      current.clear();
    } else {
      current += static_cast<char>(c);
    }
  }
  EXPECT_EQ(pclose(pipe), 0) << command;
  for (std::string& line : lines) {
    line.erase(0, line.find_first_not_of(' '));
    line.erase(line.find_last_not_of(' ') + 1);
  }
  return lines;
}

std::vector<std::string> without_empty(std::vector<std::string> clauses) {
  std::vector<std::string> out;
  for (std::string& clause : clauses) {
    clause.erase(0, clause.find_first_not_of(' '));
    clause.erase(clause.find_last_not_of(' ') + 1);
    if (!clause.empty()) out.push_back(clause);
  }
  return out;
}

}  // namespace

TEST(Phonemizer, EqualsTheEspeakNgCommandLineOnEveryTranscriptLine) {
  std::string file = tts::test::fresh_dir("phonemizer_parity") + "/line.txt";
  Phonemizer phonemizer("en-us");
  std::vector<std::string> lines = sample_transcripts();
  ASSERT_GE(lines.size(), 300u);
  for (const std::string& line : lines) {
    const std::string cleaned = tts::text::english_cleaners_corrected(line);
    EXPECT_EQ(without_empty(phonemizer.clauses(cleaned)),
              espeak_command_line("en-us", cleaned, file))
        << cleaned;
  }
}

TEST(Phonemizer, KeepsTheClausesPunctuationAndDropsLanguageMarks) {
  Phonemizer english("en-us");
  EXPECT_EQ(english.phonemize("hello, doctor smith; it costs five pounds. really?"),
            "həlˈoʊ, dˈɑːktɚ smˈɪθ; ɪt kˈɔsts fˈaɪv pˈaʊndz. ɹˈiəli?");
  Phonemizer german("de");
  const std::string ipa = german.phonemize("guten tag, wie geht es dir?");
  EXPECT_EQ(ipa.rfind("ɡˈuːtən tˈɑːk,", 0), 0u) << ipa;
  EXPECT_EQ(ipa.back(), '?') << ipa;
  // A Cyrillic word in a German voice: espeak-ng switches language and marks it; the marks go.
  const std::string switched = german.phonemize("привет");
  EXPECT_EQ(switched.find('('), std::string::npos) << switched;
  EXPECT_FALSE(switched.empty());
}

TEST(Phonemizer, RefusesAnUnknownVoiceAndTextWithoutPhonemes) {
  try {
    Phonemizer bad("xx-nonexistent");
    FAIL() << "accepted";
  } catch (const tts::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("espeak-ng --voices"), std::string::npos) << e.what();
  }
  Phonemizer english("en-us");
  try {
    english.phonemize("... !?");
    FAIL() << "accepted";
  } catch (const tts::Error& e) {
    EXPECT_NE(std::string(e.what()).find("made no phonemes of \"... !?\""), std::string::npos)
        << e.what();
  }
}

TEST(Phonemizer, ThreadsOfTwoLanguagesGetWhatOneThreadGets) {
  Phonemizer english("en-us");
  Phonemizer german("de");
  const std::string en_text = "the quick brown fox jumps over the lazy dog.";
  const std::string de_text = "der schnelle braune fuchs springt über den faulen hund.";
  const std::string en_alone = english.phonemize(en_text);
  const std::string de_alone = german.phonemize(de_text);
  std::vector<std::string> en_out(200), de_out(200);
  std::thread a([&] {
    for (auto& out : en_out) out = english.phonemize(en_text);
  });
  std::thread b([&] {
    for (auto& out : de_out) out = german.phonemize(de_text);
  });
  a.join();
  b.join();
  for (const auto& out : en_out) EXPECT_EQ(out, en_alone);
  for (const auto& out : de_out) EXPECT_EQ(out, de_alone);
  EXPECT_NE(en_alone, de_alone);
}

TEST(Phonemizer, EveryPhonemeOfTheTranscriptsIsInTheIpaTable) {
  tts::config::Config config = tts::config::parse_config(
      "", "x", {"text.frontend=phonemes", "text.symbol_set=ipa", "text.unknown=error"});
  tts::text::TextProcessor text(config.text);
  for (const std::string& line : sample_transcripts()) {
    const std::string ipa = text.clean(line);
    std::vector<int64_t> ids = text.to_ids(ipa);  // throws on a symbol outside the table
    ASSERT_GT(ids.size(), 1u);
    EXPECT_EQ(text.to_text(ids), ipa) << line;
  }
  tts::config::Config german_config = tts::config::parse_config(
      "", "x",
      {"text.frontend=phonemes", "text.symbol_set=ipa", "text.unknown=error", "text.language=de",
       "text.cleaners=[basic_cleaners]"});
  tts::text::TextProcessor german(german_config.text);
  for (const char* line : {"Zwölf Boxkämpfer jagen Viktor quer über den großen Sylter Deich.",
                           "Falsches Üben von Xylophonmusik quält jeden größeren Zwerg!"}) {
    EXPECT_GT(german.encode(line).size(), 10u) << line;
  }
}

TEST(Phonemizer, AConfigSaysWhatFitsPhonemes) {
  auto error_of = [](std::vector<std::string> overrides) -> std::string {
    try {
      tts::config::parse_config("", "x", overrides);
    } catch (const tts::UsageError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error_of({"text.frontend=phonemes"}).find("set symbol_set: ipa"), std::string::npos);
  EXPECT_NE(error_of({"text.symbol_set=ipa"}).find("set frontend: phonemes"), std::string::npos);
  EXPECT_NE(error_of({"text.frontend=phonemes", "text.symbol_set=ipa", "text.language=de"})
                .find("use [basic_cleaners]"),
            std::string::npos);
  EXPECT_NE(error_of({"text.language=en us;rm"}).find("espeak-ng voice name"), std::string::npos);
}

// Note [espeak-ng crashes]: a text that kills libespeak-ng (1.51 aborts on "s'" repeated 110
// times) ends in an error naming it; the next text is phonemized by a new worker.
TEST(Phonemizer, ACrashInsideEspeakNgCostsOneTextNotTheProcess) {
  Phonemizer phonemizer("en-us");
  const std::string before = phonemizer.phonemize("hello world");
  std::string crash;
  for (int i = 0; i < 110; ++i) crash += "s'";
  try {
    const std::string ipa = phonemizer.phonemize(crash);
    // A version of espeak-ng without the bug reads it.
    EXPECT_EQ(Phonemizer::version().find("espeak-ng 1.51"), std::string::npos) << ipa;
  } catch (const tts::Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("espeak-ng crashed"), std::string::npos) << message;
    EXPECT_NE(message.find("s's's'"), std::string::npos) << message;
  }
  EXPECT_EQ(phonemizer.phonemize("hello world"), before);
}

// The worker a thread restarts after a crash outlives that thread: preprocess's workers finish
// one by one, and the others' texts still go to the child the first one started.
TEST(Phonemizer, AWorkerRestartedByAThreadThatEndsServesTheOthers) {
  Phonemizer phonemizer("en-us");
  const std::string before = phonemizer.phonemize("hello world");
  std::string crash;
  for (int i = 0; i < 110; ++i) crash += "s'";
  std::thread restarter([&] {
    try {
      phonemizer.phonemize(crash);  // 1.51 kills the worker here
    } catch (const tts::Error&) {
    }
    EXPECT_EQ(phonemizer.phonemize("hello world"), before);  // this thread starts a new one
  });
  restarter.join();
  for (int i = 0; i < 3; ++i) EXPECT_EQ(phonemizer.phonemize("hello world"), before);
}

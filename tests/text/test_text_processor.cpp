#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <string>

#include "tts/config/config.h"
#include "tts/core/error.h"
#include "tts/text/cleaners.h"
#include "tts/text/symbols.h"
#include "tts/text/text_processor.h"

using tts::config::TextOptions;
using tts::text::TextProcessor;

namespace {

TextOptions options(std::vector<std::string> cleaners = {"english_cleaners"},
                    std::string symbol_set = "english", std::string unknown = "drop") {
  TextOptions o;
  o.cleaners.clear();
  for (const auto& name : cleaners) {
    o.cleaners.push_back(tts::config::require_choice<tts::config::Cleaner>(name, "cleaners"));
  }
  o.symbol_set = tts::config::require_choice<tts::config::SymbolSet>(symbol_set, "symbol_set");
  o.unknown = tts::config::require_choice<tts::config::UnknownCharacters>(unknown, "unknown");
  return o;
}

}  // namespace

TEST(Symbols, TablesHavePadAndEosFirstAndNoDuplicates) {
  using tts::config::SymbolSet;
  for (const auto& name : tts::config::choice_names<SymbolSet>()) {
    const SymbolSet set = *tts::config::parse_choice<SymbolSet>(name);
    const auto& table = tts::text::symbol_table(set);
    ASSERT_GT(table.size(), 2u);
    EXPECT_EQ(table[0], "_");
    EXPECT_EQ(table[1] == "~", tts::text::has_eos(set)) << name;
    EXPECT_EQ(tts::text::has_eos(set), set != SymbolSet::kNvidia) << name;
    EXPECT_EQ(std::set<std::string>(table.begin(), table.end()).size(), table.size()) << name;
    EXPECT_EQ(tts::text::symbol_count(set), static_cast<int64_t>(table.size()));
  }
  // pad, eos, 12 punctuation marks and space, 52 letters; plus 84 ARPAbet phonemes.
  EXPECT_EQ(tts::text::symbol_count(SymbolSet::kEnglish), 2 + 12 + 52);
  EXPECT_EQ(tts::text::symbol_count(SymbolSet::kEnglishArpabet), 2 + 12 + 52 + 84);
  EXPECT_EQ(tts::text::symbol_count(SymbolSet::kNvidia), 148);
}

TEST(TextProcessor, UnknownCleanerIsRefusedWhereTheConfigNamesIt) {
  try {
    tts::config::parse_config("text:\n  cleaners: [english_cleaners, englsh_cleaners]\n", "x.yaml");
    FAIL() << "expected UsageError";
  } catch (const tts::UsageError& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("x.yaml line 2"), std::string::npos) << message;
    EXPECT_NE(message.find("text.cleaners"), std::string::npos) << message;
    EXPECT_NE(message.find("'englsh_cleaners' is not one of them"), std::string::npos) << message;
    EXPECT_NE(message.find("basic_cleaners"), std::string::npos) << message;
  }
}

TEST(TextProcessor, EveryListedCleanerIsAccepted) {
  for (const auto& name : tts::config::choice_names<tts::config::Cleaner>()) {
    TextProcessor processor(options({name}));
    EXPECT_FALSE(processor.clean("Mr. Smith").empty()) << name;
  }
  EXPECT_EQ(TextProcessor(options({"english_cleaners_corrected"}))
                .clean("\xC2\xA3"
                       "5"),
            "five pounds");
}

TEST(TextProcessor, IdsEndWithEosAndRoundTrip) {
  TextProcessor processor(options());
  EXPECT_EQ(processor.pad_id(), 0);
  EXPECT_EQ(processor.eos_id(), 1);
  EXPECT_EQ(processor.num_symbols(), tts::text::symbol_count(tts::config::SymbolSet::kEnglish));
  std::string cleaned = processor.clean("Mr. Neild's \"State of Prisons\", published in 1812.");
  EXPECT_EQ(cleaned, "mister neild's \"state of prisons\", published in eighteen twelve.");
  std::vector<int64_t> ids = processor.to_ids(cleaned);
  ASSERT_EQ(ids.size(), cleaned.size() + 1);
  EXPECT_EQ(ids.back(), processor.eos_id());
  for (size_t i = 0; i + 1 < ids.size(); ++i) {
    EXPECT_GT(ids[i], processor.eos_id());
    EXPECT_LT(ids[i], processor.num_symbols());
  }
  EXPECT_EQ(processor.to_text(ids), cleaned);
  EXPECT_EQ(processor.encode("Mr. Neild's \"State of Prisons\", published in 1812."), ids);
  EXPECT_EQ(processor.to_ids(""), std::vector<int64_t>{processor.eos_id()});
  EXPECT_THROW(processor.to_text({999}), tts::Error);
}

TEST(TextProcessor, DropsUnknownCharactersAndCountsThem) {
  TextProcessor processor(options({"basic_cleaners"}));
  // '[' and ']' occur in LJSpeech's transcripts but not in the symbol set; so does 'é' when no
  // transliteration runs.
  std::vector<int64_t> ids = processor.to_ids("a [b] caf\xC3\xA9 [c]");
  EXPECT_EQ(processor.to_text(ids), "a b caf c");
  processor.to_ids("\xC3\xA9t\xC3\xA9");
  auto dropped = processor.dropped_characters();
  ASSERT_EQ(dropped.size(), 3u);
  EXPECT_EQ(dropped["["], 2);
  EXPECT_EQ(dropped["]"], 2);
  EXPECT_EQ(dropped["\xC3\xA9"], 3);
  processor.report();
}

TEST(TextProcessor, UnknownErrorModeThrowsNamingTheCharacter) {
  TextProcessor processor(options({"basic_cleaners"}, "english", "error"));
  try {
    processor.to_ids("caf\xC3\xA9");
    FAIL() << "expected tts::Error";
  } catch (const tts::Error& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("U+00E9"), std::string::npos) << message;
    EXPECT_NE(message.find("text.unknown"), std::string::npos) << message;
  }
  EXPECT_NO_THROW(processor.to_ids("cafe"));
  // With transliteration the same text is fine.
  TextProcessor transliterating(options({"transliteration_cleaners"}, "english", "error"));
  EXPECT_EQ(transliterating.to_text(transliterating.encode("Caf\xC3\xA9")), "cafe");
}

TEST(TextProcessor, ArpabetGroupsPassThroughCleaning) {
  TextProcessor processor(options({"english_cleaners"}, "english_arpabet"));
  std::string cleaned = processor.clean("Turn left on {hh aw1  s s t ah0 n} Street, 5 times.");
  EXPECT_EQ(cleaned, "turn left on {HH AW1 S S T AH0 N} street, five times.");
  std::vector<int64_t> ids = processor.to_ids(cleaned);
  // 13 characters, 7 phonemes, 20 characters, eos.
  EXPECT_EQ(ids.size(), 13u + 7u + 20u + 1u);
  EXPECT_EQ(processor.to_text(ids), cleaned);
  // Unknown phonemes are dropped like unknown characters.
  processor.to_ids("{HH XX1}");
  EXPECT_EQ(processor.dropped_characters()["{XX1}"], 1);
  // Without the phoneme set, braces are ordinary (unknown) characters.
  TextProcessor plain(options({"english_cleaners"}, "english"));
  EXPECT_EQ(plain.to_text(plain.encode("{HH}")), "hh");
}

TEST(TextProcessor, EveryLJSpeechSampleTranscriptEncodesWithoutDrops) {
  std::ifstream in(std::string(TTS_TEST_DATA_DIR) + "/ljspeech_sample_transcripts.txt");
  ASSERT_TRUE(in.good());
  TextProcessor processor(options());
  std::string line;
  int count = 0;
  while (std::getline(in, line)) {
    std::string text = line.substr(line.find('|') + 1);
    std::vector<int64_t> ids = processor.encode(text);
    EXPECT_GT(ids.size(), 1u) << line;
    EXPECT_EQ(processor.to_text(ids), processor.clean(text)) << line;
    ++count;
  }
  EXPECT_EQ(count, 300);
  EXPECT_TRUE(processor.dropped_characters().empty());
}

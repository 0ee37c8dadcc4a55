// The `nvidia` symbol set against NVIDIA/tacotron2's own text_to_sequence: the fixture's ids
// (tests/data/nvidia_tacotron2_tiny/text_ids_K.npy, from sentences.txt with english_cleaners) and
// an ARPAbet example, whose ids NVIDIA's code printed with
//   from text import text_to_sequence
//   text_to_sequence('Turn left on {HH AW1 S S T AH0 N} Street.', ['english_cleaners'])
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "tts/formats/npy.h"
#include "tts/text/symbols.h"
#include "tts/text/text_processor.h"

namespace {

const std::string kFixture = std::string(TTS_TEST_DATA_DIR) + "/nvidia_tacotron2_tiny";

tts::text::TextProcessor nvidia_processor() {
  tts::config::TextOptions options;
  options.cleaners = {tts::config::Cleaner::kEnglish};
  options.symbol_set = tts::config::SymbolSet::kNvidia;
  options.unknown = tts::config::UnknownCharacters::kError;
  return tts::text::TextProcessor(options);
}

std::vector<int64_t> npy_ids(const std::string& path) {
  tts::formats::NpyArray array = tts::formats::read_npy(path);
  return std::vector<int64_t>(array.data.begin(), array.data.end());
}

}  // namespace

TEST(NvidiaSymbols, TableIsNvidiasInItsOrder) {
  const auto& table = tts::text::symbol_table(tts::config::SymbolSet::kNvidia);
  ASSERT_EQ(table.size(), 148u);
  std::string characters;
  for (size_t id = 0; id < 64; ++id) characters += table[id];
  EXPECT_EQ(characters, "_-!'(),.:;? ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz");
  EXPECT_EQ(table[64], "@AA");
  EXPECT_EQ(table[147], "@ZH");
  EXPECT_FALSE(tts::text::has_eos(tts::config::SymbolSet::kNvidia));
}

TEST(NvidiaSymbols, FixtureSentencesGiveNvidiasIds) {
  auto processor = nvidia_processor();
  EXPECT_EQ(processor.eos_id(), -1);
  std::ifstream in(kFixture + "/sentences.txt");
  ASSERT_TRUE(in.good()) << kFixture;
  std::string sentence;
  int k = 0;
  while (std::getline(in, sentence)) {
    if (sentence.empty()) continue;
    std::vector<int64_t> expected = npy_ids(kFixture + "/text_ids_" + std::to_string(k) + ".npy");
    EXPECT_EQ(processor.encode(sentence), expected) << "sentence " << k << ": " << sentence;
    ++k;
  }
  EXPECT_EQ(k, 3);
}

TEST(NvidiaSymbols, ArpabetInCurlyBracesAsNvidiaReadsIt) {
  auto processor = nvidia_processor();
  std::vector<int64_t> expected{57, 58,  55,  51,  11, 49,  42, 43, 57, 11, 52, 51, 11, 106,
                                82, 131, 131, 133, 73, 119, 11, 56, 57, 55, 42, 42, 57, 7};
  std::vector<int64_t> ids = processor.encode("Turn left on {HH AW1 S S T AH0 N} Street.");
  EXPECT_EQ(ids, expected);
  EXPECT_EQ(processor.to_text(ids), "turn left on {HH AW1 S S T AH0 N} street.");
  // '-' is a symbol of NVIDIA's set (id 1), not an end-of-sentence mark.
  EXPECT_EQ(processor.encode("a-b"), (std::vector<int64_t>{38, 1, 39}));
  EXPECT_EQ(processor.to_text({38, 1, 39}), "a-b");
}

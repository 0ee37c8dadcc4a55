// english_cleaners against NVIDIA/tacotron2's: text/cleaners.py and text/numbers.py (keithito's)
// over Python inflect 2.1.0 and unidecode 1.3.6 (Debian 12's). The expected strings are what those
// return, e.g. for the inflect cases
//   import inflect; inflect.engine().number_to_words('1570th')
// and for the cleaner cases, with NVIDIA's text/ folder on the path,
//   from text.cleaners import english_cleaners; english_cleaners('st.co. co.st.')
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "tts/text/cleaners.h"
#include "tts/text/inflect_numbers.h"

using namespace tts::text;

namespace {

InflectOptions keithito_cardinal() {
  InflectOptions options;
  options.andword = "";
  return options;
}

InflectOptions keithito_year() {
  InflectOptions options;
  options.andword = "";
  options.zero = "oh";
  options.group = 2;
  return options;
}

}  // namespace

TEST(InflectNumberToWords, WholeNumbers) {
  EXPECT_EQ(inflect_number_to_words("0"), "zero");
  EXPECT_EQ(inflect_number_to_words("1"), "one");
  EXPECT_EQ(inflect_number_to_words("7"), "seven");
  EXPECT_EQ(inflect_number_to_words("0042"), "forty-two");
  EXPECT_EQ(inflect_number_to_words("100"), "one hundred");
  EXPECT_EQ(inflect_number_to_words("101"), "one hundred and one");
  EXPECT_EQ(inflect_number_to_words("570", keithito_cardinal()), "five hundred seventy");
  EXPECT_EQ(inflect_number_to_words("12345"), "twelve thousand, three hundred and forty-five");
  EXPECT_EQ(inflect_number_to_words("1000000"), "one million");
  EXPECT_EQ(inflect_number_to_words("1000100"), "one million, one hundred");
  EXPECT_EQ(inflect_number_to_words("1" + std::string(33, '0')), "one decillion");
}

TEST(InflectNumberToWords, ALastGroupUnderAHundredIsJoinedByTheAndword) {
  EXPECT_EQ(inflect_number_to_words("2081"), "two thousand and eighty-one");
  EXPECT_EQ(inflect_number_to_words("2081", keithito_cardinal()), "two thousand eighty-one");
  EXPECT_EQ(inflect_number_to_words("1000005"), "one million and five");
  // Not when the last group has hundreds.
  EXPECT_EQ(inflect_number_to_words("3100", keithito_cardinal()), "three thousand, one hundred");
}

TEST(InflectNumberToWords, PairsOfDigits) {
  EXPECT_EQ(inflect_number_to_words("1904", keithito_year()), "nineteen, oh four");
  EXPECT_EQ(inflect_number_to_words("1910", keithito_year()), "nineteen, ten");
  EXPECT_EQ(inflect_number_to_words("2019", keithito_year()), "twenty, nineteen");
  InflectOptions pairs;
  pairs.group = 2;
  EXPECT_EQ(inflect_number_to_words("12345", pairs), "twelve, thirty-four, five");
  EXPECT_EQ(inflect_number_to_words("0500", pairs), "zero five, zero zero");
}

TEST(InflectNumberToWords, Ordinals) {
  EXPECT_EQ(inflect_number_to_words("1st"), "first");
  EXPECT_EQ(inflect_number_to_words("2nd"), "second");
  EXPECT_EQ(inflect_number_to_words("3rd"), "third");
  EXPECT_EQ(inflect_number_to_words("0th"), "zeroth");
  EXPECT_EQ(inflect_number_to_words("11th"), "eleventh");
  EXPECT_EQ(inflect_number_to_words("12th"), "twelfth");
  EXPECT_EQ(inflect_number_to_words("20th"), "twentieth");
  EXPECT_EQ(inflect_number_to_words("99th"), "ninety-ninth");
  EXPECT_EQ(inflect_number_to_words("100th"), "one hundredth");
  EXPECT_EQ(inflect_number_to_words("1570th"), "one thousand, five hundred and seventieth");
  EXPECT_EQ(inflect_number_to_words("2081th"), "two thousand and eighty-first");
  EXPECT_EQ(inflect_number_to_words("1000000th"), "one millionth");
  EXPECT_EQ(inflect_number_to_words("007th"), "seventh");
  // The suffix makes an ordinal whatever the digits.
  EXPECT_EQ(inflect_number_to_words("4st"), "fourth");
}

TEST(InflectNumberToWords, PastDecillionDigitsAreReadOneByOne) {
  std::string largest;
  for (const char* scale :
       {"decillion", "nonillion", "octillion", "septillion", "sextillion", "quintillion",
        "quadrillion", "trillion", "billion", "million", "thousand"}) {
    largest += std::string("nine hundred and ninety-nine ") + scale + ", ";
  }
  largest += "nine hundred and ninety-nine";
  EXPECT_EQ(inflect_number_to_words(std::string(36, '9')), largest);
  // One digit more and inflect raises (and so does NVIDIA's cleaner); a transcript should not
  // stop a preprocess.
  std::string digit_by_digit = "one";
  for (int k = 0; k < 36; ++k) digit_by_digit += " zero";
  EXPECT_EQ(inflect_number_to_words("1" + std::string(36, '0')), digit_by_digit);
}

TEST(NormalizeNumbers, CommasInsideDigitRunsGoFirst) {
  EXPECT_EQ(normalize_numbers("1,2 and 1,,2 and 12, 3"), "twelve and twelve and twelve, three");
  EXPECT_EQ(normalize_numbers("2,219"), "twenty-two nineteen");
  EXPECT_EQ(normalize_numbers("$2,50"), "two hundred fifty dollars");
}

TEST(NormalizeNumbers, FourDigitNumbersBetween1000And3000AreYears) {
  EXPECT_EQ(normalize_numbers("1000"), "one thousand");
  EXPECT_EQ(normalize_numbers("1001"), "ten oh one");
  EXPECT_EQ(normalize_numbers("1100"), "eleven hundred");
  EXPECT_EQ(normalize_numbers("2000"), "two thousand");
  EXPECT_EQ(normalize_numbers("2005"), "two thousand five");
  EXPECT_EQ(normalize_numbers("2010"), "twenty ten");
  EXPECT_EQ(normalize_numbers("2100"), "twenty-one hundred");
  EXPECT_EQ(normalize_numbers("2999"), "twenty-nine ninety-nine");
  EXPECT_EQ(normalize_numbers("3000"), "three thousand");
  EXPECT_EQ(normalize_numbers("3001"), "three thousand one");
  EXPECT_EQ(normalize_numbers("10000"), "ten thousand");
}

TEST(NormalizeNumbers, Dollars) {
  EXPECT_EQ(normalize_numbers("$1"), "one dollar");
  EXPECT_EQ(normalize_numbers("$1.5"), "one dollar, five cents");
  EXPECT_EQ(normalize_numbers("$1.05"), "one dollar, five cents");
  EXPECT_EQ(normalize_numbers("$0.50"), "fifty cents");
  EXPECT_EQ(normalize_numbers("$.5"), "five cents");
  EXPECT_EQ(normalize_numbers("$1."), "one dollar.");
  EXPECT_EQ(normalize_numbers("$0"), "zero dollars");
  EXPECT_EQ(normalize_numbers("$1.2.3"), "one point two.three dollars");
}

TEST(NormalizeNumbers, DecimalsOrdinalsPoundsAndLetters) {
  EXPECT_EQ(normalize_numbers("204.613"), "two hundred four point six hundred thirteen");
  EXPECT_EQ(normalize_numbers("1.2.3"), "one point two.three");
  EXPECT_EQ(normalize_numbers("4stars"), "fourthars");
  EXPECT_EQ(normalize_numbers("b12"), "btwelve");
  EXPECT_EQ(normalize_numbers("\xC2\xA3"
                              "5"),
            "five pounds");
  EXPECT_EQ(normalize_numbers("\xC2\xA3"
                              "1,000.50"),
            "one thousand pounds.fifty");
}

TEST(EnglishCleaners, WhitespaceRunsCollapseAndTheEndsStay) {
  EXPECT_EQ(english_cleaners("  Mr.  Smith "), " mister smith ");
  EXPECT_EQ(english_cleaners("a\x1c"
                             "b\t\n c"),
            "a b c");
}

TEST(EnglishCleaners, AbbreviationsOnePassEachInTheListsOrder) {
  EXPECT_EQ(english_cleaners("st.co. co.st."), "saintco. companysaint");
  EXPECT_EQ(english_cleaners("_mr. x"), "_mr. x");
  EXPECT_EQ(english_cleaners("Drs. Who"), "doctors who");
  EXPECT_EQ(english_cleaners("MR.X"), "misterx");
}

TEST(EnglishCleaners, TransliteratesAsUnidecode) {
  EXPECT_EQ(english_cleaners("\xC2\xA3"
                             "5 \xC2\xAB"
                             "1\xC2\xBB \xE2\x80\x94 \xC2\xBD"),
            "psfive <<one>> -- one/two");
  EXPECT_EQ(english_cleaners("Caf\xC3\xA9 \xE2\x80\x9CM\xC3\xBCller\xE2\x80\x9D"),
            "cafe \"muller\"");
}

// 2,000 sentences dense in number forms with NVIDIA's output (tests/data/README.md).
TEST(EnglishCleaners, EveryNvidiaNumberSentence) {
  std::ifstream in(std::string(TTS_TEST_DATA_DIR) + "/nvidia_english_cleaners_numbers.tsv");
  ASSERT_TRUE(in.good());
  std::string line;
  int count = 0;
  int mismatches = 0;
  while (std::getline(in, line)) {
    size_t tab = line.find('\t');
    ASSERT_NE(tab, std::string::npos) << "line " << count + 1 << ": " << line;
    std::string sentence = line.substr(0, tab);
    std::string expected = line.substr(tab + 1);
    std::string cleaned = english_cleaners(sentence);
    if (cleaned != expected && ++mismatches <= 10) {
      ADD_FAILURE() << sentence << "\n  NVIDIA: " << expected << "\n  ours:   " << cleaned;
    }
    ++count;
  }
  EXPECT_EQ(count, 2000);
  EXPECT_EQ(mismatches, 0);
}

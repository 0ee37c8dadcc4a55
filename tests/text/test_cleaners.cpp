// Cleaners, rule by rule, and english_cleaners_corrected's numbers. Where a sentence is LJSpeech's,
// the expected text is LJSpeech-1.1's own normalized transcript of it (lowercased), so these tests
// also check that our normalization agrees with the one the corpus was read from. NVIDIA's
// readings (english_cleaners) are tested in test_nvidia_cleaners.cpp.
#include <gtest/gtest.h>

#include "tts/text/cleaners.h"

using namespace tts::text;

TEST(NumberWords, CardinalsMatchLJSpeechNormalization) {
  EXPECT_EQ(number_to_words(0), "zero");
  EXPECT_EQ(number_to_words(7), "seven");
  EXPECT_EQ(number_to_words(13), "thirteen");
  EXPECT_EQ(number_to_words(40), "forty");
  EXPECT_EQ(number_to_words(45), "forty-five");
  EXPECT_EQ(number_to_words(100), "one hundred");
  EXPECT_EQ(number_to_words(197), "one hundred ninety-seven");
  EXPECT_EQ(number_to_words(10500), "ten thousand, five hundred");
  EXPECT_EQ(number_to_words(285950), "two hundred eighty-five thousand, nine hundred fifty");
  EXPECT_EQ(number_to_words(1000000), "one million");
  EXPECT_EQ(number_to_words(2000001), "two million, one");
  EXPECT_EQ(number_to_words(18446744073709551615ULL),
            "eighteen quintillion, four hundred forty-six quadrillion, seven hundred forty-four "
            "trillion, seventy-three billion, seven hundred nine million, five hundred fifty-one "
            "thousand, six hundred fifteen");
}

TEST(NumberWords, YearsReadInPairs) {
  EXPECT_EQ(year_to_words(1884), "eighteen eighty-four");
  EXPECT_EQ(year_to_words(1905), "nineteen oh five");
  EXPECT_EQ(year_to_words(1808), "eighteen oh eight");
  EXPECT_EQ(year_to_words(2010), "twenty ten");
  EXPECT_EQ(year_to_words(1900), "nineteen hundred");
  EXPECT_EQ(year_to_words(2000), "two thousand");
  EXPECT_EQ(year_to_words(2005), "two thousand five");
  EXPECT_EQ(year_to_words(1963), "nineteen sixty-three");
}

TEST(NumberWords, Ordinals) {
  EXPECT_EQ(ordinal_to_words(1), "first");
  EXPECT_EQ(ordinal_to_words(2), "second");
  EXPECT_EQ(ordinal_to_words(3), "third");
  EXPECT_EQ(ordinal_to_words(5), "fifth");
  EXPECT_EQ(ordinal_to_words(8), "eighth");
  EXPECT_EQ(ordinal_to_words(9), "ninth");
  EXPECT_EQ(ordinal_to_words(12), "twelfth");
  EXPECT_EQ(ordinal_to_words(20), "twentieth");
  EXPECT_EQ(ordinal_to_words(22), "twenty-second");
  EXPECT_EQ(ordinal_to_words(27), "twenty-seventh");
  EXPECT_EQ(ordinal_to_words(100), "one hundredth");
  EXPECT_EQ(ordinal_to_words(1001), "one thousand, first");
}

TEST(ExpandNumbers, LJSpeechSentencesWithCardinalsAndYears) {
  // LJ002-0013
  EXPECT_EQ(english_cleaners_corrected(
                "till, 1808, the lowest point was touched of 197 debtors and 182 felons, or 379 "
                "in all."),
            "till, eighteen oh eight, the lowest point was touched of one hundred ninety-seven "
            "debtors and one hundred eighty-two felons, or three hundred seventy-nine in all.");
  // LJ002-0014
  EXPECT_EQ(
      english_cleaners_corrected("The numbers soon increased, however, and by 1811 had again risen "
                                 "to 629;"),
      "the numbers soon increased, however, and by eighteen eleven had again risen to six "
      "hundred twenty-nine;");
  // LJ004-0107: a year in parentheses
  EXPECT_EQ(english_cleaners_corrected("the 24 George the third c. 54, s. 4 (1784)"),
            "the twenty-four george the third c. fifty-four, s. four (seventeen eighty-four)");
}

TEST(ExpandNumbers, CommaGroupsAreOneNumberButAListIsNot) {
  EXPECT_EQ(expand_numbers("1,000 men"), "one thousand men");
  EXPECT_EQ(expand_numbers("12,345,678"),
            "twelve million, three hundred forty-five thousand, six hundred seventy-eight");
  // "1,2" and "1,20" are lists, not thousands.
  EXPECT_EQ(expand_numbers("1,2"), "one,two");
  EXPECT_EQ(expand_numbers("items 1, 2, 3"), "items one, two, three");
  EXPECT_EQ(expand_numbers("1,20"), "one,twenty");
  // Comma-grouped four-digit numbers are quantities, not years.
  EXPECT_EQ(expand_numbers("1,884 men"), "one thousand, eight hundred eighty-four men");
}

TEST(ExpandNumbers, DecimalsAreNotThousandsSeparators) {
  EXPECT_EQ(expand_numbers("3.5"), "three point five");
  EXPECT_EQ(expand_numbers("0.25 inch"), "zero point two five inch");
  EXPECT_EQ(expand_numbers("1,000.5"), "one thousand point five");
  EXPECT_EQ(expand_numbers("6.5 seconds"), "six point five seconds");
  // A sentence-final period is not a decimal point.
  EXPECT_EQ(expand_numbers("in 1884."), "in eighteen eighty-four.");
}

TEST(ExpandNumbers, Ordinals) {
  // LJ002-0156: "on twenty-second August"
  EXPECT_EQ(english_cleaners_corrected("Thomas Dobson, on 22nd August, 1799,"),
            "thomas dobson, on twenty-second august, seventeen ninety-nine,");
  EXPECT_EQ(expand_numbers("the 1st and the 3RD"), "the first and the third");
  EXPECT_EQ(expand_numbers("the 101st"), "the one hundred first");
  EXPECT_EQ(expand_numbers("the 11th"), "the eleventh");
  // A suffix inside a longer word is not an ordinal.
  EXPECT_EQ(expand_numbers("4stars"), "four stars");
}

TEST(ExpandNumbers, Dollars) {
  // LJ032-0035
  EXPECT_EQ(english_cleaners_corrected("a U.S. postal money order for $21.45,"),
            "a u.s. postal money order for twenty-one dollars, forty-five cents,");
  EXPECT_EQ(expand_numbers("$1"), "one dollar");
  EXPECT_EQ(expand_numbers("$1.01"), "one dollar, one cent");
  EXPECT_EQ(expand_numbers("$0.50"), "fifty cents");
  EXPECT_EQ(expand_numbers("$3.5"), "three dollars, fifty cents");
  EXPECT_EQ(expand_numbers("$20,000 a year"), "twenty thousand dollars a year");
  EXPECT_EQ(expand_numbers("$150 million a year"), "one hundred fifty million dollars a year");
  EXPECT_EQ(expand_numbers("$1.5 billion"), "one point five billion dollars");
  EXPECT_EQ(expand_numbers("$2.125"), "two point one two five dollars");
  EXPECT_EQ(expand_numbers("a $ sign"), "a $ sign");
}

TEST(ExpandNumbers, Pounds) {
  // LJ002-0199 and LJ002-0130
  EXPECT_EQ(english_cleaners_corrected("bought by the Crown for \xC2\xA3"
                                       "10,500."),
            "bought by the crown for ten thousand, five hundred pounds.");
  EXPECT_EQ(english_cleaners_corrected("\xC2\xA3"
                                       "285,950; in other words"),
            "two hundred eighty-five thousand, nine hundred fifty pounds; in other words");
  EXPECT_EQ(english_cleaners_corrected("\xC2\xA3"
                                       "1,000"),
            "one thousand pounds");
  EXPECT_EQ(expand_numbers("\xC2\xA3"
                           "1"),
            "one pound");
  EXPECT_EQ(expand_numbers("\xC2\xA3"
                           "2.50"),
            "two pounds, fifty pence");
  EXPECT_EQ(expand_numbers("\xC2\xA3"
                           "0.01"),
            "one penny");
}

TEST(ExpandNumbers, Percent) {
  // LJ004-0180
  EXPECT_EQ(english_cleaners_corrected("as much as a 100% in a couple of years;"),
            "as much as a one hundred percent in a couple of years;");
  // LJ021-0179
  EXPECT_EQ(english_cleaners_corrected("her war bonds bearing 5% interest,"),
            "her war bonds bearing five percent interest,");
  EXPECT_EQ(expand_numbers("3.5%"), "three point five percent");
}

TEST(ExpandNumbers, DigitsNextToLettersAreSeparatedAndLeadingZerosReadOneByOne) {
  EXPECT_EQ(expand_numbers("B12"), "B twelve");
  EXPECT_EQ(expand_numbers("5kg"), "five kg");
  EXPECT_EQ(expand_numbers("agent 007"), "agent zero zero seven");
  EXPECT_EQ(expand_numbers("12345678901234567890123"),
            "one two three four five six seven eight nine zero one two three four five six "
            "seven eight nine zero one two three");
}

TEST(ExpandAbbreviations, EveryAbbreviation) {
  const std::pair<const char*, const char*> cases[] = {
      {"mrs.", "misess"},   {"mr.", "mister"},    {"dr.", "doctor"},     {"st.", "saint"},
      {"co.", "company"},   {"jr.", "junior"},    {"maj.", "major"},     {"gen.", "general"},
      {"drs.", "doctors"},  {"rev.", "reverend"}, {"lt.", "lieutenant"}, {"hon.", "honorable"},
      {"sgt.", "sergeant"}, {"capt.", "captain"}, {"esq.", "esquire"},   {"ltd.", "limited"},
      {"col.", "colonel"},  {"ft.", "fort"},
  };
  for (const auto& [abbreviation, expansion] : cases) {
    EXPECT_EQ(expand_abbreviations(std::string("x ") + abbreviation + " y"),
              std::string("x ") + expansion + " y")
        << abbreviation;
  }
}

TEST(ExpandAbbreviations, OnlyWholeWordsFollowedByAPeriod) {
  // LJ002-0030
  EXPECT_EQ(english_cleaners("Full details of the arrangements are to be found in Mr. Neild's"),
            "full details of the arrangements are to be found in mister neild's");
  EXPECT_EQ(english_cleaners("Mrs. Oswald and Dr. Humes, Lt. Day"),
            "misess oswald and doctor humes, lieutenant day");
  EXPECT_EQ(expand_abbreviations("the first street"), "the first street");  // "st" inside words
  EXPECT_EQ(expand_abbreviations("mr smith"), "mr smith");                  // no period
  EXPECT_EQ(expand_abbreviations("hamr. x"), "hamr. x");
  EXPECT_EQ(expand_abbreviations("MR. X"), "mister X");
}

TEST(Transliteration, AccentsQuotesDashesToAscii) {
  EXPECT_EQ(transliterate("caf\xC3\xA9 na\xC3\xAFve \xC3\xBC"
                          "ber"),
            "cafe naive uber");
  EXPECT_EQ(transliterate("\xC3\x86sop, Stra\xC3\x9F"
                          "e, \xC5\x81\xC3\xB3"
                          "d\xC5\xBA"),
            "AEsop, Strasse, Lodz");
  EXPECT_EQ(transliterate("\xE2\x80\x9CYes,\xE2\x80\x9D he said \xE2\x80\x98no\xE2\x80\x99"),
            "\"Yes,\" he said 'no'");
  EXPECT_EQ(transliterate("1880\xE2\x80\x93"
                          "1890 \xE2\x80\x94 and\xE2\x80\xA6"),
            "1880-1890 - and...");
  EXPECT_EQ(transliterate("non\xC2\xA0"
                          "breaking"),
            "non breaking");
  // A decomposed accent (e + U+0301) loses its combining mark.
  EXPECT_EQ(transliterate("e\xCC\x81t\xC3\xA9"), "ete");
  // No ASCII spelling: kept for the symbol lookup to drop or reject.
  EXPECT_EQ(transliterate("\xE4\xB8\xAD"), "\xE4\xB8\xAD");
  // A stray Latin-1 byte (not UTF-8) is read as Latin-1.
  EXPECT_EQ(transliterate("caf\xE9"), "cafe");
}

TEST(Cleaners, BasicLowercasesAndCollapsesWhitespace) {
  EXPECT_EQ(basic_cleaners("  Printing,\tin the  ONLY sense\n"), "printing, in the only sense");
  EXPECT_EQ(basic_cleaners("Mr. 1884"), "mr. 1884");  // no expansion
  EXPECT_EQ(basic_cleaners(""), "");
}

TEST(Cleaners, EnglishCleanersCorrectedTrimsAndKeepsPounds) {
  EXPECT_EQ(english_cleaners_corrected("  Mr.  Smith paid \xC2\xA3"
                                       "5 "),
            "mister smith paid five pounds");
  EXPECT_EQ(english_cleaners("  Mr.  Smith paid \xC2\xA3"
                             "5 "),
            " mister smith paid psfive ");
}

TEST(Cleaners, TransliterationCleaners) {
  EXPECT_EQ(transliteration_cleaners("  Caf\xC3\xA9  \xE2\x80\x9CM\xC3\xBCller\xE2\x80\x9D "),
            "cafe \"muller\"");
}

TEST(Cleaners, EnglishCleanersOnLJSpeechSentencesWithoutNumbers) {
  // LJ001-0001 (normalized and raw are the same apart from case)
  EXPECT_EQ(english_cleaners("Printing, in the only sense with which we are at present "
                             "concerned, differs from most if not from all the arts"),
            "printing, in the only sense with which we are at present concerned, differs from "
            "most if not from all the arts");
  // LJ002-0195: quotes pass through.
  EXPECT_EQ(english_cleaners("Besides these, a number had the privilege of a \"run on the key,\""),
            "besides these, a number had the privilege of a \"run on the key,\"");
  // Names with accents, as LJSpeech's transcripts have (twelve with a 'ü').
  EXPECT_EQ(english_cleaners("M\xC3\xBCller was hanged"), "muller was hanged");
}

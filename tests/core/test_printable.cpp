// printable(): the one function through which a file's bytes reach a message or a terminal.
#include <gtest/gtest.h>

#include "tts/core/printable.h"

using tts::printable;

TEST(Printable, ControlCharactersBecomeEscapes) {
  EXPECT_EQ(printable("a\x1b]0;owned\x07z"), "a\\x1b]0;owned\\x07z");
  EXPECT_EQ(printable(std::string("nul\0x", 5)), "nul\\x00x");
  EXPECT_EQ(printable("del\x7f"), "del\\x7f");
  EXPECT_EQ(printable("two\nlines\tand\rcr"), "two\\x0alines\\x09and\\x0dcr");
}

TEST(Printable, OurOwnLinesKeepTheirNewlinesWhenAsked) {
  EXPECT_EQ(printable("a\n  b\tc\x1b", /*keep_newlines=*/true), "a\n  b\tc\\x1b");
}

TEST(Printable, UnicodeTextPassesAndC1ControlsAndBrokenBytesDoNot) {
  EXPECT_EQ(printable("ˈhɛloʊ wɜːld, naïve, 日本"), "ˈhɛloʊ wɜːld, naïve, 日本");
  EXPECT_EQ(printable("csi\xc2\x9b"
                      "31m"),
            "csi\\u009b31m");                               // U+009B, a C1 control
  EXPECT_EQ(printable("\xc2\xa0"), "\xc2\xa0");             // U+00A0 is printable
  EXPECT_EQ(printable("raw\x9b"), "raw\\x9b");              // not UTF-8: a lone byte
  EXPECT_EQ(printable("\xe6\x97"), "\\xe6\\x97");           // a sequence cut short
  EXPECT_EQ(printable("\xc0\xaf"), "\\xc0\\xaf");           // an overlong '/'
  EXPECT_EQ(printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a UTF-16 surrogate
}

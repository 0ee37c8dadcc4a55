// The bounded JSON reader of the peers' settings files.
#include <gtest/gtest.h>

#include <string>

#include "tts/core/error.h"
#include "tts/formats/json_reader.h"

using tts::formats::JsonValue;
using tts::formats::parse_json;

namespace {

std::string error_of(const std::string& text) {
  try {
    parse_json(text, "f.json");
  } catch (const tts::Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST(Json, ReadsThePeersFilesAsJson) {
  const JsonValue v = parse_json(R"({
    "resblock": "1", "upsample_rates": [8, 8, 2, 2], "lr": 2e-4, "neg": -0.5,
    "dilations": [[1, 3, 5], [1, 3, 5]], "fmax": null, "flag": true, "no": false,
    "dist_config": {"dist_backend": "nccl"}, "text": "a\"b\\c\/\u00e9\ud83d\ude00\n"
  })",
                                 "f.json");
  ASSERT_EQ(v.kind, JsonValue::Kind::kObject);
  EXPECT_EQ(v.find("resblock")->text, "1");
  EXPECT_EQ(v.find("resblock")->kind, JsonValue::Kind::kString);
  ASSERT_EQ(v.find("upsample_rates")->items.size(), 4u);
  EXPECT_EQ(v.find("upsample_rates")->items[2].text, "2");
  EXPECT_EQ(v.find("lr")->text, "2e-4");
  EXPECT_EQ(v.find("neg")->text, "-0.5");
  EXPECT_EQ(v.find("dilations")->items[1].items[2].text, "5");
  EXPECT_EQ(v.find("fmax")->kind, JsonValue::Kind::kNull);
  EXPECT_TRUE(v.find("flag")->boolean);
  EXPECT_FALSE(v.find("no")->boolean);
  EXPECT_EQ(v.find("dist_config")->find("dist_backend")->text, "nccl");
  EXPECT_EQ(v.find("text")->text, "a\"b\\c/\xc3\xa9\xf0\x9f\x98\x80\n");
  EXPECT_EQ(v.find("lr")->line, 2);
  EXPECT_EQ(v.find("missing"), nullptr);
  // Python's json writes these for non-finite floats.
  EXPECT_EQ(parse_json("[NaN, Infinity, -Infinity]", "f").items[2].text, "-Infinity");
}

TEST(Json, DeepNestingIsRefusedWithoutRecursingThroughIt) {
  // 450,000 levels, as a hostile config.json reached through YAML aliases: a stack overflow for a
  // reader that recurses per level.
  const std::string deep = std::string(450000, '[') + std::string(450000, ']');
  std::string e = error_of(deep);
  EXPECT_NE(e.find("nest deeper than 16"), std::string::npos) << e;
  EXPECT_NE(e.find("f.json line 1"), std::string::npos) << e;
  std::string sixteen = std::string(16, '[') + std::string(16, ']');
  EXPECT_EQ(parse_json(sixteen, "f").kind, JsonValue::Kind::kArray);
  // YAML's anchors and aliases are no JSON.
  e = error_of(R"({"a": &x [1, 2], "b": [*x, *x]})");
  EXPECT_NE(e.find("not valid JSON"), std::string::npos) << e;
}

TEST(Json, MalformedTextIsRefusedWithTheLine) {
  for (const auto& [text, expected] : std::vector<std::pair<std::string, std::string>>{
           {"{\"a\": 1,\n \"a\": 2}", "line 2: not valid JSON: the key 'a' appears twice"},
           {"{\"a\": \"x\x1b]0;y\"}", "control character inside a string"},
           {"{\"a\": 1} x", "more text after the JSON value"},
           {"[1, 2", "expected ',' or ']'"},
           {"{\"a\" 1}", "expected ':'"},
           {"{a: 1}", "expected a key in double quotes"},
           {"\"\\q\"", "unknown escape"},
           {"\"\\ud800\"", "lone UTF-16 surrogate"},
           {"\"abc", "not closed"},
           {"01x", "more text"},
           {"1.", "fraction has no digits"},
           {"1e+", "exponent has no digits"},
           {"", "the text ends"},
           {"tru", "unexpected 't'"},
       }) {
    const std::string e = error_of(text);
    EXPECT_NE(e.find(expected), std::string::npos) << text << ": " << e;
  }
}

TEST(Json, TextPastTheSizeLimitIsRefusedBeforeParsing) {
  tts::formats::JsonLimits limits;
  limits.max_bytes = 10;
  try {
    parse_json("[1, 2, 3, 4, 5]", "f.json", limits);
    FAIL() << "15 bytes passed a limit of 10";
  } catch (const tts::Error& e) {
    EXPECT_NE(std::string(e.what()).find("15 bytes"), std::string::npos) << e.what();
  }
}

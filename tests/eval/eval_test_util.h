// Helpers shared by the evaluate tests: the fixtures of tests/data/eval and their reference
// figures (reference.json, made by tests/data/eval/make_fixtures.py).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "tts/audio/audio_io.h"
#include "tts/config/audio_options.h"
#include "tts/formats/json_reader.h"

namespace tts::eval::testing {

inline std::string fixture(const std::string& name) {
  return std::string(TTS_TEST_DATA_DIR) + "/eval/" + name;
}

inline std::vector<float> load_clip(const std::string& stem) {
  config::AudioOptions options;  // 22050 Hz, channels mixed: the fixtures' own rate
  return audio::read_audio(fixture(stem + ".wav"), options);
}

inline const formats::JsonValue& reference() {
  static const formats::JsonValue value = formats::read_json_file(fixture("reference.json"));
  return value;
}

inline double number(const formats::JsonValue& value) {
  return std::strtod(value.text.c_str(), nullptr);
}

inline std::vector<double> numbers(const formats::JsonValue& list) {
  std::vector<double> out;
  for (const auto& item : list.items) out.push_back(number(item));
  return out;
}

// The reference figures of one file (reference.json's "files").
inline const formats::JsonValue& file_reference(const std::string& stem) {
  const formats::JsonValue* files = reference().find("files");
  EXPECT_NE(files, nullptr);
  const formats::JsonValue* file = files->find(stem);
  EXPECT_NE(file, nullptr) << stem;
  return *file;
}

}  // namespace tts::eval::testing

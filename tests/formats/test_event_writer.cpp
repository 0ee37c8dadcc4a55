// TensorBoard event files: TFRecord framing (length, masked CRC-32C of the length, data, masked
// CRC-32C of the data) around the file-version record and one record per summary.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>

#include "../support/scratch.h"
#include "tts/core/fs.h"
#include "tts/formats/event_writer.h"

namespace {

uint32_t le32(const std::string& s, size_t at) {
  uint32_t value;
  std::memcpy(&value, s.data() + at, 4);
  return value;
}

}  // namespace

TEST(EventWriter, Crc32cMatchesTheStandardCheckValue) {
  EXPECT_EQ(tts::formats::crc32c("123456789"), 0xe3069283u);
}

TEST(EventWriter, WritesFramedRecordsWithValidChecksums) {
  std::string dir = tts::test::fresh_dir("events");
  std::string path;
  {
    tts::formats::EventWriter writer(dir);
    writer.add_scalar("train/loss", 1.5f, 10);
    // The writer embeds the image's bytes as they are; a PNG signature is enough to find them.
    writer.add_image("val/alignment", std::string("\x89PNG\r\n\x1a\n", 8) + "pixels", 2, 2, 10);
    writer.add_audio("val/audio", "RIFF....WAVE", 22050, 100, 11);
    path = writer.path();
  }
  EXPECT_NE(path.find("events.out.tfevents."), std::string::npos);
  std::string bytes = tts::read_file(path);
  auto masked = [](const std::string& data) {
    uint32_t crc = tts::formats::crc32c(data);
    return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
  };
  const char* expected[] = {"brain.Event:2", "train/loss", "\x89PNG", "RIFF....WAVE"};
  size_t at = 0;
  int records = 0;
  while (at < bytes.size()) {
    ASSERT_LE(at + 12, bytes.size());
    uint64_t length;
    std::memcpy(&length, bytes.data() + at, 8);
    ASSERT_LE(at + 12 + length + 4, bytes.size()) << "record " << records << " runs past the file";
    EXPECT_EQ(le32(bytes, at + 8), masked(bytes.substr(at, 8)));
    std::string data = bytes.substr(at + 12, length);
    EXPECT_EQ(le32(bytes, at + 12 + length), masked(data));
    if (records < 4) {
      EXPECT_NE(data.find(expected[records]), std::string::npos) << "record " << records;
    }
    at += 12 + length + 4;
    ++records;
  }
  EXPECT_EQ(records, 4);
}

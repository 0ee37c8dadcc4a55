#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "tts/core/fs.h"
#include "tts/train/event_writer.h"
#include "tts/train/metrics.h"
#include "tts/train/png.h"

namespace {

uint32_t be32(const std::string& s, size_t at) {
  auto b = [&](size_t i) { return static_cast<uint32_t>(static_cast<unsigned char>(s[at + i])); };
  return b(0) << 24 | b(1) << 16 | b(2) << 8 | b(3);
}

uint32_t le32(const std::string& s, size_t at) {
  uint32_t value;
  std::memcpy(&value, s.data() + at, 4);
  return value;
}

std::string temp_dir(const std::string& name) {
  std::string dir = std::string(TTS_TEST_TMP_DIR) + "/" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace

TEST(Png, EncodesChunksWithValidCrcsAndTheExactPixels) {
  std::vector<uint8_t> rgb{255, 0, 0, 0, 255, 0, 0, 0, 255, 10, 20, 30};  // 2x2
  std::string png = tts::train::encode_png(rgb, 2, 2);
  ASSERT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  size_t at = 8;
  std::string idat;
  std::vector<std::string> types;
  while (at < png.size()) {
    uint32_t length = be32(png, at);
    std::string type = png.substr(at + 4, 4);
    std::string body = png.substr(at + 4, 4 + length);
    uint32_t crc = be32(png, at + 8 + length);
    EXPECT_EQ(crc, crc32(0, reinterpret_cast<const Bytef*>(body.data()), body.size())) << type;
    if (type == "IHDR") {
      EXPECT_EQ(be32(png, at + 8), 2u);
      EXPECT_EQ(be32(png, at + 12), 2u);
    }
    if (type == "IDAT") idat += png.substr(at + 8, length);
    types.push_back(type);
    at += 12 + length;
  }
  EXPECT_EQ(types, (std::vector<std::string>{"IHDR", "IDAT", "IEND"}));
  std::vector<unsigned char> raw(2 * (1 + 6));
  uLongf raw_size = raw.size();
  ASSERT_EQ(
      uncompress(raw.data(), &raw_size, reinterpret_cast<const Bytef*>(idat.data()), idat.size()),
      Z_OK);
  std::vector<unsigned char> expected{0, 255, 0, 0, 0, 255, 0, 0, 0, 0, 255, 10, 20, 30};
  EXPECT_EQ(raw, expected);
}

TEST(Png, HeatmapPutsRowZeroAtTheBottomAndScales) {
  // 2 rows x 1 col: row 0 low (dark purple), row 1 high (yellow); rendered at scale 2.
  std::string png = tts::train::heatmap_png({0.0f, 1.0f}, 2, 1, 2);
  EXPECT_EQ(be32(png, 16), 2u);  // width
  EXPECT_EQ(be32(png, 20), 4u);  // height
  uint32_t idat_length = be32(png, 33);
  std::string idat = png.substr(41, idat_length);
  std::vector<unsigned char> raw(4 * (1 + 6));
  uLongf raw_size = raw.size();
  ASSERT_EQ(
      uncompress(raw.data(), &raw_size, reinterpret_cast<const Bytef*>(idat.data()), idat.size()),
      Z_OK);
  EXPECT_EQ(raw[1], 253);         // top row: the high value, viridis yellow
  EXPECT_EQ(raw[3 * 7 + 1], 68);  // bottom row: the low value, viridis purple
}

TEST(EventWriter, Crc32cMatchesTheStandardCheckValue) {
  EXPECT_EQ(tts::train::crc32c("123456789"), 0xe3069283u);
}

TEST(EventWriter, WritesFramedRecordsWithValidChecksums) {
  std::string dir = temp_dir("events");
  std::string path;
  {
    tts::train::EventWriter writer(dir);
    writer.add_scalar("train/loss", 1.5f, 10);
    writer.add_image("val/alignment", tts::train::heatmap_png({0, 1, 2, 3}, 2, 2), 2, 2, 10);
    path = writer.path();
  }
  EXPECT_NE(path.find("events.out.tfevents."), std::string::npos);
  std::string bytes = tts::read_file(path);
  auto masked = [](const std::string& data) {
    uint32_t crc = tts::train::crc32c(data);
    return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
  };
  size_t at = 0;
  int records = 0;
  while (at < bytes.size()) {
    ASSERT_LE(at + 12, bytes.size());
    uint64_t length;
    std::memcpy(&length, bytes.data() + at, 8);
    EXPECT_EQ(le32(bytes, at + 8), masked(bytes.substr(at, 8)));
    std::string data = bytes.substr(at + 12, length);
    EXPECT_EQ(le32(bytes, at + 12 + length), masked(data));
    if (records == 0) EXPECT_NE(data.find("brain.Event:2"), std::string::npos);
    if (records == 1) EXPECT_NE(data.find("train/loss"), std::string::npos);
    if (records == 2) EXPECT_NE(data.find("\x89PNG"), std::string::npos);
    at += 12 + length + 4;
    ++records;
  }
  EXPECT_EQ(records, 3);
}

TEST(MetricSink, WritesOneJsonObjectPerRecordAndNullForNonFinite) {
  std::string dir = temp_dir("metrics");
  {
    tts::train::MetricSink sink(dir, false);
    tts::train::MetricRecord record{"train", {}};
    record.add("step", 5);
    record.add("loss", 0.25);
    record.add("grad_norm", NAN);
    sink.write(record, 5);
  }
  std::string text = tts::read_file(dir + "/metrics.jsonl");
  EXPECT_EQ(text, "{\"kind\": \"train\", \"step\": 5, \"loss\": 0.25, \"grad_norm\": null}\n");
}

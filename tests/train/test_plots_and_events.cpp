#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "tts/core/fs.h"
#include "tts/train/event_writer.h"
#include "tts/train/metrics.h"
#include "tts/train/plots.h"

namespace {

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

TEST(EventWriter, Crc32cMatchesTheStandardCheckValue) {
  EXPECT_EQ(tts::train::crc32c("123456789"), 0xe3069283u);
}

TEST(EventWriter, WritesFramedRecordsWithValidChecksums) {
  std::string dir = temp_dir("events");
  std::string path;
  {
    tts::train::EventWriter writer(dir);
    writer.add_scalar("train/loss", 1.5f, 10);
    tts::train::AlignmentPlotInput input;
    input.weights = {{0, 1, 2, 3}, 2, 2};
    tts::train::Plot plot = tts::train::alignment_plot(input);
    writer.add_image("val/alignment", plot.png, plot.width, plot.height, 10);
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
    const char* expected[] = {"brain.Event:2", "train/loss", "\x89PNG"};
    if (records < 3) {
      EXPECT_NE(data.find(expected[records]), std::string::npos) << "record " << records;
    }
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

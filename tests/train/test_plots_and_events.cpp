#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "../support/scratch.h"
#include "tts/core/fs.h"
#include "tts/report/plots.h"
#include "tts/train/metrics.h"

TEST(MetricSink, WritesOneJsonObjectPerRecordAndNullForNonFinite) {
  std::string dir = tts::test::fresh_dir("metrics");
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

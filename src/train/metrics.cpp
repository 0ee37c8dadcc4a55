#include "tts/train/metrics.h"

#include <fmt/format.h>

#include <cmath>

#include "tts/core/error.h"

namespace tts::train {

std::string MetricRecord::to_json() const {
  std::string json = fmt::format("{{\"kind\": \"{}\"", kind);
  for (const auto& [name, value] : values) {
    // JSON has no NaN/Inf: write null so the line stays parseable.
    json += std::isfinite(value) ? fmt::format(", \"{}\": {}", name, value)
                                 : fmt::format(", \"{}\": null", name);
  }
  return json + "}";
}

MetricSink::MetricSink(const std::string& run_dir, bool tensorboard) {
  std::string path = run_dir + "/metrics.jsonl";
  jsonl_.open(path, std::ios::app);
  TTS_CHECK(jsonl_.good(), "cannot write '{}'", path);
  if (tensorboard) events_ = std::make_unique<EventWriter>(run_dir);
}

void MetricSink::write(const MetricRecord& record, int64_t step) {
  jsonl_ << record.to_json() << '\n';
  jsonl_.flush();
  if (events_) {
    for (const auto& [name, value] : record.values) {
      if (name != "step" && name != "epoch") {
        events_->add_scalar(record.kind + "/" + name, static_cast<float>(value), step);
      }
    }
    events_->flush();
  }
}

void MetricSink::flush() {
  jsonl_.flush();
  if (events_) events_->flush();
}

}  // namespace tts::train

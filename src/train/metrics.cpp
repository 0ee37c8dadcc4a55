#include "tts/train/metrics.h"

#include <fmt/format.h>

#include <cmath>

#include "tts/core/error.h"
#include "tts/core/logging.h"

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

bool side_work(const std::string& what, int64_t step, const std::function<void()>& work) {
  try {
    work();
    return true;
  } catch (const std::exception& e) {
    log::get("train")->warn("step {}: {} failed, training goes on: {}", step, what, e.what());
    return false;
  }
}

MetricSink::MetricSink(const std::string& run_dir, bool tensorboard)
    : jsonl_path_(run_dir + "/metrics.jsonl"), jsonl_(open_for_append(jsonl_path_)) {
  if (tensorboard) {
    side_work("creating the TensorBoard event file", 0,
              [&] { events_ = std::make_unique<formats::EventWriter>(run_dir); });
  }
}

void MetricSink::write(const MetricRecord& record, int64_t step) {
  if (!jsonl_failed_) {
    const bool written = side_work("appending to " + jsonl_path_, step, [&] {
      write_all(jsonl_, record.to_json() + "\n", jsonl_path_);
    });
    if (!written) {
      jsonl_failed_ = true;
      log::get("train")->warn("metrics.jsonl stops at step {}, training goes on", step);
    }
  }
  with_events("writing TensorBoard scalars", step, [&](formats::EventWriter& events) {
    for (const auto& [name, value] : record.values) {
      if (name != "step" && name != "epoch") {
        events.add_scalar(record.kind + "/" + name, static_cast<float>(value), step);
      }
    }
    events.flush();
  });
}

void MetricSink::with_events(const std::string& what, int64_t step,
                             const std::function<void(formats::EventWriter&)>& work) {
  if (!events_) return;
  if (!side_work(what, step, [&] { work(*events_); })) {
    log::get("train")->warn("TensorBoard is off for the rest of this run; '{}' ends at step {}",
                            events_->path(), step);
    events_.reset();
  }
}

void MetricSink::flush() {
  if (events_) events_->flush();
}

}  // namespace tts::train

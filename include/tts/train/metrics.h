// Metric sinks of a run: RUN/metrics.jsonl (one JSON object per record) and, when enabled,
// TensorBoard scalars. Only rank 0 writes them.
#pragma once

#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tts/train/event_writer.h"

namespace tts::train {

// An ordered list of named numbers (a JSON object with number values, plus "kind").
struct MetricRecord {
  std::string kind;  // "train", "val", ...
  std::vector<std::pair<std::string, double>> values;
  void add(const std::string& name, double value) { values.emplace_back(name, value); }
  std::string to_json() const;
};

class MetricSink {
 public:
  // Appends to `run_dir`/metrics.jsonl; with `tensorboard`, also writes an event file there.
  MetricSink(const std::string& run_dir, bool tensorboard);
  // Writes the record; TensorBoard tags are "<kind>/<name>".
  void write(const MetricRecord& record, int64_t step);
  EventWriter* events() { return events_.get(); }
  void flush();

 private:
  std::ofstream jsonl_;
  std::unique_ptr<EventWriter> events_;
};

}  // namespace tts::train

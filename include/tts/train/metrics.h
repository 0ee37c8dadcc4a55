// Metric sinks of a run: RUN/metrics.jsonl (one JSON object per record) and, when enabled,
// TensorBoard scalars. Only rank 0 writes them.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tts/core/fs.h"
#include "tts/formats/event_writer.h"

namespace tts::train {

// An ordered list of named numbers (a JSON object with number values, plus "kind").
struct MetricRecord {
  std::string kind;  // "train", "val", ...
  std::vector<std::pair<std::string, double>> values;
  void add(const std::string& name, double value) { values.emplace_back(name, value); }
  std::string to_json() const;
};

// Runs optional work of a training step (a plot, an audio sample, a TensorBoard write, a metric):
// an exception it throws is logged as a warning naming `what` and the step, and false is
// returned. Side work never ends a run.
bool side_work(const std::string& what, int64_t step, const std::function<void()>& work);

class MetricSink {
 public:
  // Appends to `run_dir`/metrics.jsonl (opened by open_for_append of fs.h: a symlink or anything
  // but a regular file is refused with tts::Error); with `tensorboard`, also writes an event file
  // there (an event file that cannot be created is a warning: the run goes on without TensorBoard).
  MetricSink(const std::string& run_dir, bool tensorboard);
  // Writes the record; TensorBoard tags are "<kind>/<name>". A write that fails is a warning;
  // after a failed TensorBoard write the run continues without TensorBoard.
  void write(const MetricRecord& record, int64_t step);
  formats::EventWriter* events() { return events_.get(); }
  // Runs `work` on the event writer, if there is one, as side work; a failure turns TensorBoard
  // off for the rest of the run (the file is no longer well-formed after a partial record).
  void with_events(const std::string& what, int64_t step,
                   const std::function<void(formats::EventWriter&)>& work);
  void flush();

 private:
  std::string jsonl_path_;
  FileDescriptor jsonl_;
  bool jsonl_failed_ = false;
  std::unique_ptr<formats::EventWriter> events_;
};

}  // namespace tts::train

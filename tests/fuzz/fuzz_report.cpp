// The run report of a run folder whose metrics.jsonl is the input (seeds: the metrics of a short
// run). The report reads a run folder someone else may have prepared; it renders what it can and
// names what it skips, so anything but success or a tts::Error is a finding.
#include <filesystem>

#include "fuzz_input.h"
#include "tts/report/run_report.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string dir = [] {
    std::string path = tts::fuzz::input_path("-run");
    std::filesystem::create_directories(path);
    return path;
  }();
  tts::fuzz::write_bytes(dir + "/metrics.jsonl", data, size);
  tts::fuzz::expect_success_or_error([&] { tts::report::render_run_report(dir); });
  return 0;
}

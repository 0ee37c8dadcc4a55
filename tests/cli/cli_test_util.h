// Running the real tts-train executable from tests.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../support/scratch.h"

namespace tts::test {

struct CliResult {
  int exit_code;
  std::string output;
};

// Runs `command` through the shell; captures its stdout and exit code (128 + signal).
inline CliResult run_shell(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  EXPECT_NE(pipe, nullptr);
  std::string output;
  std::array<char, 4096> buffer{};
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) output.append(buffer.data(), n);
  int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), output};
}

// Runs `tts-train ARGS` through the shell; captures stdout, plus stderr when `with_stderr`.
inline CliResult run_cli(const std::string& args, bool with_stderr = false) {
  return run_shell(std::string(TTS_CLI_PATH) + " " + args +
                   (with_stderr ? " 2>&1" : " 2>/dev/null"));
}

// Writes `text` to TTS_TEST_TMP_DIR/name and returns the path.
inline std::string write_temp(const std::string& name, const std::string& text) {
  std::filesystem::create_directories(TTS_TEST_TMP_DIR);
  std::string path = std::string(TTS_TEST_TMP_DIR) + "/" + name;
  std::ofstream(path) << text;
  return path;
}

// `report RUN` run, its page (RUN/report.html) up to the config, which names every key of every
// section; empty when the report failed.
inline std::string report_sections(const std::string& run) {
  CliResult report = run_cli("report " + run, true);
  EXPECT_EQ(report.exit_code, 0) << report.output;
  std::ifstream in(run + "/report.html");
  std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return html.substr(0, html.find("<h2 id=\"config\""));
}

// A vocoder's report: the mel plot, the generated and the recorded sample, and nothing of an
// acoustic model's (alignment, Griffin-Lim, free-running synthesis).
inline void expect_vocoder_report(const std::string& html) {
  for (const char* present : {"id=\"plot_mel\"", "id=\"sample\"", "id=\"sample_real\"",
                              "recorded audio", "data-series=\"mel frames/s\""}) {
    EXPECT_NE(html.find(present), std::string::npos) << present;
  }
  for (const char* absent :
       {"lignment", "diagonal", "Griffin-Lim", "ree-running", "stop token", "class=\"warn\""}) {
    EXPECT_EQ(html.find(absent), std::string::npos) << absent;
  }
}

// A Python with pocketsphinx (`pip install pocketsphinx`, which ships the en-us model):
// TTS_ASR_PYTHON, else the virtual environment `scripts/setup.sh --torch pip` makes (which
// installs it: CI's PyTorch 2.11 stage), else python3; "" when none has it.
inline std::string asr_python() {
  std::vector<std::string> candidates;
  if (const char* chosen = std::getenv("TTS_ASR_PYTHON")) candidates.push_back(chosen);
  candidates.push_back(std::string(TTS_SOURCE_DIR) + "/.deps/torch-2.11.0/bin/python");
  candidates.push_back("python3");
  for (const std::string& python : candidates) {
    if (run_shell("'" + python + "' -c 'import pocketsphinx' 2>/dev/null").exit_code == 0) {
      return python;
    }
  }
  return "";
}

}  // namespace tts::test

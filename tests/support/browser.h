// Opening an HTML file in a real browser from tests: headless Chromium (Debian's `chromium`)
// loads it, its DOM after the load event and its console messages come back, and a screenshot
// is written. Tests GTEST_SKIP when no Chromium is installed (scripts/setup.sh installs it).
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace tts::test {

// The Chromium executable on PATH, or "" when there is none.
inline std::string find_chromium() {
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
    std::string command = std::string("command -v ") + name + " >/dev/null 2>&1";
    if (std::system(command.c_str()) == 0) return name;
  }
  return "";
}

struct BrowserPage {
  int exit_code = -1;
  std::string dom;         // the document after the load event (--dump-dom)
  std::string console;     // the page's console messages, one per line
  std::string screenshot;  // the screenshot's path
};

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Loads `html` (a file) in headless Chromium twice: once for the DOM and console, once for a
// `width`x`height` screenshot at `scratch`/screenshot.png. Scratch also holds the browser's
// profile and logs.
inline BrowserPage open_in_chromium(const std::string& chromium, const std::string& html,
                                    const std::string& scratch, int width = 1320,
                                    int height = 4000) {
  namespace fs = std::filesystem;
  fs::create_directories(scratch);
  // As root (CI, containers) Chromium runs only without its sandbox; the page is our own file.
  std::string common =
      "timeout 120 " + chromium +
      " --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir=" + scratch +
      "/profile --enable-logging=stderr --v=0 "
      "--virtual-time-budget=5000 ";
  std::string url = "file://" + fs::absolute(html).string();
  BrowserPage page;
  std::string dump =
      common + "--dump-dom '" + url + "' >" + scratch + "/dom.html 2>" + scratch + "/dump.log";
  int status = std::system(dump.c_str());
  page.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  page.dom = slurp(scratch + "/dom.html");
  std::stringstream log(slurp(scratch + "/dump.log"));
  for (std::string line; std::getline(log, line);) {
    // Chromium logs console.log/error, uncaught exceptions and refused loads (our content
    // security policy) as "...:INFO:CONSOLE(N)] "message", source: ...".
    if (line.find(":CONSOLE") != std::string::npos) page.console += line + "\n";
  }
  page.screenshot = scratch + "/screenshot.png";
  std::string shot = common + "--hide-scrollbars --window-size=" + std::to_string(width) + "," +
                     std::to_string(height) + " --screenshot=" + page.screenshot + " '" + url +
                     "' >" + scratch + "/screenshot.log 2>&1";
  status = std::system(shot.c_str());
  if (page.exit_code == 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
    page.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  return page;
}

}  // namespace tts::test

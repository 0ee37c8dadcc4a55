#include "tts/train/run_folder.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <regex>

#include "tts/checkpoint/checkpoint.h"
#include "tts/core/error.h"
#include "tts/core/fs.h"

namespace tts::train {
namespace fs = std::filesystem;
namespace {

const std::regex kMovedAside("previous-[0-9]+");

}  // namespace

std::vector<std::string> previous_run_files(const std::string& run_dir) {
  std::vector<std::string> found;
  std::error_code ec;
  const std::string checkpoints = run_dir + "/checkpoints";
  if (fs::is_directory(checkpoints, ec)) {
    const std::vector<std::string> files = checkpoint::checkpoint_files(checkpoints);
    if (!files.empty()) {
      const std::string newest = "checkpoints/" + fs::path(files.front()).filename().string();
      found.push_back(
          files.size() == 1 ? newest : fmt::format("{} (and {} more)", newest, files.size() - 1));
    }
  }
  // Anything but an empty regular file: a link or a FIFO planted there is no fresh start either.
  const fs::path metrics = run_dir + "/metrics.jsonl";
  const fs::file_status status = fs::symlink_status(metrics, ec);
  if (fs::exists(status) && !(fs::is_regular_file(status) && fs::file_size(metrics, ec) == 0)) {
    found.push_back("metrics.jsonl");
  }
  return found;
}

std::string prepare_run_folder(const std::string& run_dir, RunFolderUse use) {
  if (use == RunFolderUse::kResume) return "";
  const std::vector<std::string> held = previous_run_files(run_dir);
  if (held.empty()) return "";
  TTS_USAGE_CHECK(use == RunFolderUse::kOverwrite,
                  "--out {} already holds a run ({}): a new run there would mix with it. Continue "
                  "it with --resume (or --resume auto), start elsewhere with another --out, or "
                  "pass --overwrite to move the old run into {}/previous-N and start over",
                  run_dir, fmt::join(held, ", "), run_dir);
  int n = 1;
  std::error_code ec;
  while (fs::exists(fs::symlink_status(fmt::format("{}/previous-{}", run_dir, n), ec))) ++n;
  const std::string aside = fmt::format("{}/previous-{}", run_dir, n);
  std::vector<fs::path> entries;
  for (fs::directory_iterator it(run_dir, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    if (!std::regex_match(it->path().filename().string(), kMovedAside)) {
      entries.push_back(it->path());
    }
  }
  TTS_CHECK(!ec, "cannot list the run folder '{}': {}", run_dir, ec.message());
  create_folder(aside);
  for (const fs::path& entry : entries) {
    fs::rename(entry, fs::path(aside) / entry.filename(), ec);
    TTS_CHECK(!ec, "--overwrite: cannot move '{}' into '{}': {}", entry.string(), aside,
              ec.message());
  }
  return aside;
}

}  // namespace tts::train

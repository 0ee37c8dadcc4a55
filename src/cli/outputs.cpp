#include "tts/cli/outputs.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>

#include "tts/core/error.h"

namespace tts::cli {
namespace fs = std::filesystem;
namespace {

// One spelling of a path for comparison: absolute, normalized, links resolved where they exist.
std::string key_of(const std::string& path) {
  std::error_code ec;
  fs::path canonical = fs::weakly_canonical(fs::absolute(path), ec);
  return ec ? fs::absolute(path).lexically_normal().string() : canonical.string();
}

bool is_folder(const fs::path& path) {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

fs::path parent_of(const std::string& path) {
  fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? fs::path(".") : parent;
}

bool one_of(const std::string& extension, const std::vector<std::string>& extensions) {
  return std::find(extensions.begin(), extensions.end(), extension) != extensions.end();
}

}  // namespace

void require_extension(const std::string& path, const std::string& what,
                       const std::vector<std::string>& extensions) {
  TTS_USAGE_CHECK(one_of(fs::path(path).extension().string(), extensions),
                  "{}: outputs are written as {} files; give a name ending in {}", what,
                  fmt::join(extensions, " or "), fmt::join(extensions, " or "));
}

OutTarget out_target(const std::string& out, size_t inputs, const std::string& input_name,
                     const std::vector<std::string>& extensions, const std::string& option) {
  // "-" is standard output to a user; a folder named "-" would surprise everyone.
  TTS_USAGE_CHECK(out != "-",
                  "{} -: this command writes files, not standard output; give a file ending in {} "
                  "(one {}) or a folder",
                  option, fmt::join(extensions, " or "), input_name);
  const std::string extension = fs::path(out).extension().string();
  const bool existing_folder = is_folder(out);
  if (!existing_folder && one_of(extension, extensions)) {
    TTS_USAGE_CHECK(inputs == 1,
                    "{} {}: with {} {}s {} is a folder (one file per {}), not a file; give a "
                    "folder, or one {}",
                    option, out, inputs, input_name, option, input_name, input_name);
    return {out, false};
  }
  TTS_USAGE_CHECK(existing_folder || extension.empty(),
                  "{} {}: {} is not an output this command writes: give a file ending in {} "
                  "(one {}) or a folder (a name without an extension, or a folder that exists)",
                  option, out, extension.empty() ? out : extension, fmt::join(extensions, " or "),
                  input_name);
  std::error_code ec;
  TTS_USAGE_CHECK(existing_folder || !fs::exists(fs::symlink_status(out, ec)),
                  "{} {}: a file is there, and {} names a folder here; give another name", option,
                  out, option);
  return {out, true};
}

void OutputPlan::add(const std::string& path, const std::string& source) {
  outputs_.push_back({path, source, key_of(path)});
}

void OutputPlan::add_input(const std::string& path, const std::string& source) {
  inputs_.push_back({path, source, key_of(path)});
}

void OutputPlan::check() const {
  const std::string nothing = "nothing was written";
  if (target_.folder) {
    const fs::path parent = parent_of(target_.path);
    TTS_USAGE_CHECK(is_folder(target_.path) || is_folder(parent),
                    "--out {}: no folder {} to create it in; create that first (the --out folder "
                    "is created, the folders above it are not); {}",
                    target_.path, parent.string(), nothing);
  }
  const std::string folder_key = target_.folder ? key_of(target_.path) : std::string();
  for (size_t i = 0; i < outputs_.size(); ++i) {
    const Planned& output = outputs_[i];
    for (size_t j = 0; j < i; ++j) {
      TTS_USAGE_CHECK(outputs_[j].key != output.key,
                      "{} and {} would both write {}; {} (give them different names or folders)",
                      outputs_[j].source, output.source, output.path, nothing);
    }
    for (const Planned& input : inputs_) {
      TTS_USAGE_CHECK(input.key != output.key, "{} would overwrite its input {} ({}); {}",
                      output.source, input.path, input.source, nothing);
    }
    TTS_USAGE_CHECK(!is_folder(output.path), "{}: {} is a folder, not a file; {}", output.source,
                    output.path, nothing);
    const fs::path parent = parent_of(output.path);
    TTS_USAGE_CHECK(is_folder(parent) || key_of(parent.string()) == folder_key,
                    "{}: no folder {} to write {} in; create it first; {}", output.source,
                    parent.string(), output.path, nothing);
  }
}

void OutputPlan::create_folder() const {
  if (target_.folder) fs::create_directory(target_.path);
}

}  // namespace tts::cli

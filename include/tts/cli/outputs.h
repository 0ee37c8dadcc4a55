// The files a command writes, planned and checked in full before the first is written, by one
// rule for every command (vocode, synthesize, forward):
//  - a command with one input writes --out as one file when its name ends in an extension the
//    command writes; otherwise --out is a folder, one file per input named by the command;
//  - with several inputs --out is a folder: a file name there is refused, not taken as a folder;
//  - another extension is refused, naming the ones the command writes (a folder is a name
//    without an extension, or one that exists);
//  - the folder --out names is created, the folders above it are not: a missing one is refused,
//    named, as is a missing folder above an output file;
//  - two outputs that would be the same file, or an output that is an input, are refused.
// Every refusal is a UsageError (exit 2) and leaves nothing written.
#pragma once

#include <string>
#include <vector>

namespace tts::cli {

struct OutTarget {
  std::string path;
  bool folder = false;  // one file per input inside `path`; else `path` is the one file
};

// Where `out` (given as `option`) sends the outputs of `inputs` inputs (`input_name`: "mel",
// "sentence") of a command whose output files end in one of `extensions` (".wav").
OutTarget out_target(const std::string& out, size_t inputs, const std::string& input_name,
                     const std::vector<std::string>& extensions,
                     const std::string& option = "--out");

// Refuses `path` (given as `what`) unless it ends in one of `extensions`.
void require_extension(const std::string& path, const std::string& what,
                       const std::vector<std::string>& extensions);

class OutputPlan {
 public:
  // The files of `target` are written into a folder the plan creates (create_folder).
  explicit OutputPlan(OutTarget target = {}) : target_(std::move(target)) {}

  // `path` will be written for `source` (what the user gave: "--mel a/x.npy").
  void add(const std::string& path, const std::string& source);
  // The files the command reads: none may be overwritten by an output.
  void add_input(const std::string& path, const std::string& source);
  // Refuses the plan (UsageError) before anything is written: an output twice, an output that
  // is an input or a folder, a missing folder to write in.
  void check() const;
  // Creates the target's folder when it is one (its parent was checked to exist).
  void create_folder() const;

 private:
  struct Planned {
    std::string path, source, key;
  };
  OutTarget target_;
  std::vector<Planned> outputs_, inputs_;
};

}  // namespace tts::cli

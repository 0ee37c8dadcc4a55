// Reads files written by Python's torch.save (the zip format of PyTorch >= 1.6) without Python and
// without libtorch's own unpickler: libtorch 1.13's torch::pickle_load turns a
// collections.OrderedDict (what every state_dict() is) into None ("Expected GenericDict but got
// None"), so this is a small pickle interpreter of its own for what torch.save emits: dicts
// (OrderedDict included), lists, tuples, None, bools, ints, floats, strings, bytes and tensors
// (torch._utils._rebuild_tensor_v2 / _rebuild_parameter over typed storages), read through
// caffe2's PyTorchStreamReader, which both libtorch versions ship. Any other Python object is
// refused with its name.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tts/core/fs.h"

namespace tts::formats {

// One unpickled value. Dicts keep their insertion order (state dicts are ordered). A value is freed
// without recursion (its destructor takes its descendants apart one at a time), so no nesting, of
// any depth or sharing, overflows the stack on the way out.
struct PickleValue {
  enum class Kind { None, Bool, Int, Float, String, Bytes, List, Tuple, Dict, Tensor, Global };
  Kind kind = Kind::None;
  bool boolean = false;
  int64_t integer = 0;
  double real = 0;
  std::string text;                                 // String, Bytes; Global: "module.name"
  std::vector<std::shared_ptr<PickleValue>> items;  // List, Tuple
  std::vector<std::pair<std::shared_ptr<PickleValue>, std::shared_ptr<PickleValue>>> entries;
  torch::Tensor tensor;

  PickleValue() = default;
  PickleValue(const PickleValue&) = default;
  PickleValue(PickleValue&&) = default;
  PickleValue& operator=(const PickleValue&) = default;
  PickleValue& operator=(PickleValue&&) = default;
  ~PickleValue();

  // The entry whose key is the string `key`; nullptr when this is no dict or has no such key.
  const PickleValue* find(const std::string& key) const;
  // "dict", "tensor", ... for messages.
  std::string kind_name() const;
};

// Whether the file starts like a zip archive (torch.save since PyTorch 1.6) rather than the legacy
// format (a bare pickle stream followed by raw storages). The path form opens it as a regular
// file, following a symlink the user made.
bool is_zip_file(const std::string& path);
bool is_zip_file(const FileDescriptor& fd, const std::string& path);

// Reads a file torch.save wrote in the zip format. Throws tts::Error naming the file and what is
// not understood (a legacy file, an object that is not a plain container or tensor). The file is
// opened once (a regular file; `symlinks` says whether its last component may be a link) and
// every check and read after that goes through the same descriptor: a file swapped or changed
// under its name after the checks is never what is read.
PickleValue read_torch_file(const std::string& path, Symlinks symlinks = Symlinks::kFollow);
// The same for a file already open as `fd` (`path` names it in errors).
PickleValue read_torch_file(const FileDescriptor& fd, const std::string& path);

// Writes `root` (None, bools, ints, floats, strings, tensors, and lists, tuples and dicts of them:
// an optimizer's state_dict keys its states by integers) as
// torch.save does, atomically, so that Python's torch.load reads it with weights_only=True (the
// default since PyTorch 2.6), which refuses what torch::pickle_save writes. Throws tts::Error for
// another kind of value.
void write_torch_file(const std::string& path, const PickleValue& root);

// The values of a tree for write_torch_file.
std::shared_ptr<PickleValue> pickle_string(const std::string& text);
std::shared_ptr<PickleValue> pickle_int(int64_t value);
std::shared_ptr<PickleValue> pickle_float(double value);
std::shared_ptr<PickleValue> pickle_tensor(const torch::Tensor& tensor);
// A dict with string keys, in the order given.
std::shared_ptr<PickleValue> pickle_dict(
    const std::vector<std::pair<std::string, std::shared_ptr<PickleValue>>>& entries);

}  // namespace tts::formats

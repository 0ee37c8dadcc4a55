// Builds torch.save-style zip archives around a hand-written data.pkl, so tests and the fuzzer
// reach the pickle interpreter with exactly the opcodes they mean, past the zip container.
#pragma once

#include <caffe2/serialize/inline_container.h>

#include <cstdint>
#include <map>
#include <string>

namespace tts::test {

// The bytes of a zip archive holding `pickle` as data.pkl and each of `storages` as data/<key>.
inline std::string torch_zip(const std::string& pickle,
                             const std::map<std::string, std::string>& storages = {}) {
  std::string out;
  {
    caffe2::serialize::PyTorchStreamWriter writer([&](const void* data, size_t size) {
      out.append(static_cast<const char*>(data), size);
      return size;
    });
    writer.writeRecord("data.pkl", pickle.data(), pickle.size());
    for (const auto& [key, bytes] : storages) {
      writer.writeRecord("data/" + key, bytes.data(), bytes.size());
    }
    writer.writeEndOfFile();
  }
  return out;
}

// Pickle opcodes for the values torch.save writes.
inline std::string pickle_int(int64_t v) {  // BININT (4-byte, signed) or LONG1 (8 bytes)
  if (v >= INT32_MIN && v <= INT32_MAX) {
    std::string s = "J";
    for (int i = 0; i < 4; ++i)
      s.push_back(static_cast<char>((static_cast<uint32_t>(v) >> (8 * i)) & 0xff));
    return s;
  }
  std::string s = "\x8a\x08";
  for (int i = 0; i < 8; ++i)
    s.push_back(static_cast<char>((static_cast<uint64_t>(v) >> (8 * i)) & 0xff));
  return s;
}
inline std::string pickle_string(const std::string& text) {  // BINUNICODE
  std::string s = "X";
  for (int i = 0; i < 4; ++i) s.push_back(static_cast<char>((text.size() >> (8 * i)) & 0xff));
  return s + text;
}

// `_rebuild_tensor_v2(storage 0 of `numel` floats, offset, sizes, strides)` as torch.save writes
// it, without PROTO and STOP.
inline std::string pickle_tensor(int64_t numel, int64_t offset, const std::string& sizes,
                                 const std::string& strides) {
  return "ctorch._utils\n_rebuild_tensor_v2\n(" + std::string("(") + pickle_string("storage") +
         "ctorch\nFloatStorage\n" + pickle_string("0") + pickle_string("cpu") + pickle_int(numel) +
         "tQ" + pickle_int(offset) + "(" + sizes + "t(" + strides + "t\x89" +
         "ccollections\nOrderedDict\n)RtR";
}

}  // namespace tts::test

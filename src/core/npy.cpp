#include "tts/core/npy.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <numeric>

#include "tts/core/error.h"
#include "tts/core/fs.h"

namespace tts {
namespace {

constexpr char kMagic[] = "\x93NUMPY";

std::string shape_text(const std::vector<int64_t>& shape) {
  if (shape.size() == 1) return fmt::format("({},)", shape[0]);
  return fmt::format("({})", fmt::join(shape, ", "));
}

// The value of `key` in the header dict, up to the next top-level comma (or the closing
// parenthesis of a shape tuple).
std::string dict_value(const std::string& header, const std::string& key, const std::string& path) {
  auto at = header.find("'" + key + "'");
  TTS_CHECK(at != std::string::npos, "{}: the .npy header has no '{}' entry: {}", path, key,
            header);
  auto colon = header.find(':', at);
  auto start = header.find_first_not_of(' ', colon + 1);
  size_t end = header[start] == '(' ? header.find(')', start) + 1 : header.find(',', start);
  return header.substr(start, end - start);
}

template <class T>
void convert(const char* bytes, size_t count, float* out) {
  for (size_t i = 0; i < count; ++i) {
    T value;
    std::memcpy(&value, bytes + i * sizeof(T), sizeof(T));
    out[i] = static_cast<float>(value);
  }
}

// Fortran order (first index fastest, as numpy.save writes a Fortran-contiguous array, e.g.
// some of librosa's outputs) to C order (last index fastest).
std::vector<float> fortran_to_c_order(const std::vector<float>& values,
                                      const std::vector<int64_t>& shape) {
  const size_t rank = shape.size();
  std::vector<int64_t> c_stride(rank, 1);
  for (size_t k = rank - 1; k-- > 0;) c_stride[k] = c_stride[k + 1] * shape[k + 1];
  std::vector<float> out(values.size());
  std::vector<int64_t> index(rank, 0);
  int64_t c_offset = 0;
  for (float value : values) {  // file order: index[0] fastest
    out[static_cast<size_t>(c_offset)] = value;
    for (size_t k = 0; k < rank; ++k) {
      c_offset += c_stride[k];
      if (++index[k] < shape[k]) break;
      c_offset -= c_stride[k] * shape[k];
      index[k] = 0;
    }
  }
  return out;
}

}  // namespace

int64_t NpyArray::size() const {
  return std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<int64_t>());
}

void write_npy(const std::string& path, const float* data, const std::vector<int64_t>& shape) {
  std::string header =
      fmt::format("{{'descr': '<f4', 'fortran_order': False, 'shape': {}, }}", shape_text(shape));
  // Magic (6) + version (2) + header length (2) + header + newline, padded to 64 bytes.
  size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');
  int64_t count =
      std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<int64_t>());
  std::string bytes(kMagic, 6);
  bytes.push_back('\x01');
  bytes.push_back('\x00');
  auto header_len = static_cast<uint16_t>(header.size());
  bytes.push_back(static_cast<char>(header_len & 0xff));
  bytes.push_back(static_cast<char>(header_len >> 8));
  bytes += header;
  bytes.append(reinterpret_cast<const char*>(data), static_cast<size_t>(count) * sizeof(float));
  write_file_atomic(path, bytes);
}

NpyHeader read_npy_header(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  TTS_CHECK(in.good(), "cannot open '{}': {}", path, std::strerror(errno));
  char prefix[10];
  in.read(prefix, 10);
  TTS_CHECK(in.gcount() == 10 && std::memcmp(prefix, kMagic, 6) == 0,
            "{}: not a NumPy .npy file (no \\x93NUMPY magic); expected an array written by "
            "numpy.save or tts-train",
            path);
  auto major = static_cast<unsigned char>(prefix[6]);
  size_t header_len;
  size_t offset;
  if (major == 1) {
    header_len = static_cast<unsigned char>(prefix[8]) |
                 (static_cast<size_t>(static_cast<unsigned char>(prefix[9])) << 8);
    offset = 10;
  } else {
    TTS_CHECK(major == 2 || major == 3, "{}: .npy format version {} is not supported", path, major);
    char more[2];
    in.read(more, 2);
    header_len = static_cast<unsigned char>(prefix[8]) |
                 (static_cast<size_t>(static_cast<unsigned char>(prefix[9])) << 8) |
                 (static_cast<size_t>(static_cast<unsigned char>(more[0])) << 16) |
                 (static_cast<size_t>(static_cast<unsigned char>(more[1])) << 24);
    offset = 12;
  }
  std::string header(header_len, '\0');
  in.read(header.data(), static_cast<std::streamsize>(header_len));
  TTS_CHECK(static_cast<size_t>(in.gcount()) == header_len, "{}: truncated .npy header", path);

  NpyHeader result;
  result.data_offset = offset + header_len;
  std::string descr = dict_value(header, "descr", path);
  TTS_CHECK(descr.size() >= 2, "{}: bad dtype in .npy header: {}", path, header);
  result.dtype = descr.substr(1, descr.size() - 2);
  result.fortran_order = dict_value(header, "fortran_order", path) == "True";
  std::string shape = dict_value(header, "shape", path);
  for (size_t i = 1; i < shape.size();) {
    size_t end = shape.find_first_of(",)", i);
    std::string item = shape.substr(i, end - i);
    auto first = item.find_first_not_of(' ');
    if (first != std::string::npos) {
      try {
        result.shape.push_back(std::stoll(item.substr(first)));
      } catch (const std::exception&) {
        throw Error(fmt::format("{}: bad shape in .npy header: {}", path, shape));
      }
    }
    i = end + 1;
    if (end == std::string::npos) break;
  }
  return result;
}

NpyArray read_npy(const std::string& path) {
  NpyHeader header = read_npy_header(path);
  size_t item_size;
  if (header.dtype == "<f4" || header.dtype == "<i4") {
    item_size = 4;
  } else if (header.dtype == "<f8" || header.dtype == "<i8") {
    item_size = 8;
  } else if (header.dtype == "<i2") {
    item_size = 2;
  } else {
    throw Error(
        fmt::format("{}: dtype '{}' is not supported; expected little-endian float32 ('<f4')", path,
                    header.dtype));
  }
  NpyArray array;
  array.shape = header.shape;
  auto count = static_cast<size_t>(array.size());
  std::ifstream in(path, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(header.data_offset));
  std::string bytes(count * item_size, '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  TTS_CHECK(static_cast<size_t>(in.gcount()) == bytes.size(),
            "{}: truncated .npy data: shape {} needs {} bytes, the file has {}", path,
            shape_text(array.shape), bytes.size(), in.gcount());
  array.data.resize(count);
  if (header.dtype == "<f4") {
    std::memcpy(array.data.data(), bytes.data(), bytes.size());
  } else if (header.dtype == "<f8") {
    convert<double>(bytes.data(), count, array.data.data());
  } else if (header.dtype == "<i2") {
    convert<int16_t>(bytes.data(), count, array.data.data());
  } else if (header.dtype == "<i4") {
    convert<int32_t>(bytes.data(), count, array.data.data());
  } else {
    convert<int64_t>(bytes.data(), count, array.data.data());
  }
  if (header.fortran_order && array.shape.size() >= 2) {
    array.data = fortran_to_c_order(array.data, array.shape);
  }
  return array;
}

}  // namespace tts

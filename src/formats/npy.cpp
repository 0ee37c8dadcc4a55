#include "tts/formats/npy.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <optional>

#include "tts/core/checked.h"
#include "tts/core/error.h"
#include "tts/core/fs.h"

namespace tts::formats {
namespace {

constexpr char kMagic[] = "\x93NUMPY";

std::string shape_text(const std::vector<int64_t>& shape) {
  if (shape.size() == 1) return fmt::format("({},)", shape[0]);
  return fmt::format("({})", fmt::join(shape, ", "));
}

// NumPy's own reader refuses headers over 10,000 bytes (numpy.lib.format's max_header_size); a
// real header is under 200. Anything longer is not an array numpy.save wrote.
constexpr size_t kMaxHeaderBytes = 10000;
// numpy allows at most 64 dimensions (NPY_MAXDIMS); features are 2-D.
constexpr size_t kMaxDimensions = 64;

// Bytes per element of the dtypes read_npy converts; 0 for any other.
size_t item_size(const std::string& dtype) {
  if (dtype == "<f4" || dtype == "<i4") return 4;
  if (dtype == "<f8" || dtype == "<i8") return 8;
  if (dtype == "<i2") return 2;
  return 0;
}

// The value of `key` in the header dict, up to the next top-level comma or closing brace (or the
// closing parenthesis of a shape tuple). Every position is checked: a header cut short anywhere
// is an error, not a read before or past the string.
std::string dict_value(const std::string& header, const std::string& key, const std::string& path) {
  auto at = header.find("'" + key + "'");
  TTS_CHECK(at != std::string::npos, "{}: the .npy header has no '{}' entry: {}", path, key,
            header);
  auto colon = header.find(':', at + key.size() + 2);
  auto start = colon == std::string::npos ? colon : header.find_first_not_of(' ', colon + 1);
  size_t end = std::string::npos;
  if (start != std::string::npos) {
    if (header[start] == '(') {
      end = header.find(')', start);
      if (end != std::string::npos) ++end;
    } else {
      end = header.find_first_of(",}", start);
    }
  }
  TTS_CHECK(end != std::string::npos,
            "{}: the .npy header's '{}' entry has no value (the header is cut short or is not a "
            "dict numpy.save writes): {}",
            path, key, header);
  return header.substr(start, end - start);
}

// "(80, 120)" -> {80, 120}: non-negative decimal integers only, at most kMaxDimensions.
std::vector<int64_t> parse_shape(const std::string& text, const std::string& path) {
  auto bad = [&](const std::string& why) {
    return Error(fmt::format(
        "{}: bad shape in the .npy header: {} ({}); expected a tuple of non-negative integers "
        "such as (80, 120) as numpy.save writes",
        path, text, why));
  };
  if (text.size() < 2 || text.front() != '(' || text.back() != ')') throw bad("not a tuple");
  std::vector<int64_t> shape;
  size_t i = 1;
  const size_t last = text.size() - 1;
  while (i < last) {
    while (i < last && text[i] == ' ') ++i;
    if (i == last) break;
    size_t end = i;
    while (end < last && text[end] >= '0' && text[end] <= '9') ++end;
    if (end == i) throw bad(fmt::format("'{}' is not a non-negative integer", text.substr(i, 1)));
    int64_t value = 0;
    auto [ptr, ec] = std::from_chars(text.data() + i, text.data() + end, value);
    if (ec != std::errc() || ptr != text.data() + end)
      throw bad("a dimension does not fit 64 bits");
    shape.push_back(value);
    i = end;
    if (i < last && text[i] == 'L') ++i;  // Python 2's numpy wrote long ints as 80L
    if (shape.size() > kMaxDimensions)
      throw bad(fmt::format("more than {} dimensions", kMaxDimensions));
    while (i < last && text[i] == ' ') ++i;
    if (i < last) {
      if (text[i] != ',') throw bad(fmt::format("unexpected '{}'", text.substr(i, 1)));
      ++i;
    }
  }
  return shape;
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
// some of librosa's outputs) to C order (last index fastest). `shape` has been checked (every
// dimension >= 0, the product is values.size() and fits): offsets stay inside `out`.
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

namespace {

NpyHeader read_header(const FileDescriptor& fd, const std::string& path) {
  // Every length below is compared with the file's real size before it sizes anything.
  const int64_t file_bytes = file_size(fd, path);
  const std::string start = read_at(fd, path, 0, 12);
  char prefix[12] = {};
  std::memcpy(prefix, start.data(), start.size());
  TTS_CHECK(start.size() >= 10 && std::memcmp(prefix, kMagic, 6) == 0,
            "{}: not a NumPy .npy file (no \\x93NUMPY magic); expected an array written by "
            "numpy.save or tts-train",
            path);
  auto byte = [&](int i) { return static_cast<size_t>(static_cast<unsigned char>(prefix[i])); };
  const size_t major = byte(6);
  size_t header_len = byte(8) | (byte(9) << 8);
  size_t offset = 10;
  if (major != 1) {
    TTS_CHECK(major == 2 || major == 3,
              "{}: .npy format version {} is not supported (expected 1, 2 or 3)", path, major);
    TTS_CHECK(start.size() == 12,
              "{}: truncated .npy file: the version {} header length is cut short", path, major);
    header_len |= (byte(10) << 16) | (byte(11) << 24);
    offset = 12;
  }
  TTS_CHECK(header_len <= kMaxHeaderBytes,
            "{}: the .npy header claims {} bytes, more than the {} numpy itself reads; the file is "
            "damaged or not written by numpy.save",
            path, header_len, kMaxHeaderBytes);
  TTS_CHECK(static_cast<int64_t>(offset + header_len) <= file_bytes,
            "{}: truncated .npy header: it claims {} bytes, the file has {} after the magic", path,
            header_len, file_bytes - static_cast<int64_t>(offset));
  const std::string header =
      read_at(fd, path, static_cast<int64_t>(offset), static_cast<int64_t>(header_len));
  TTS_CHECK(header.size() == header_len, "{}: truncated .npy header", path);

  NpyHeader result;
  result.data_offset = offset + header_len;
  std::string descr = dict_value(header, "descr", path);
  TTS_CHECK(descr.size() >= 2 && (descr.front() == '\'' || descr.front() == '"') &&
                descr.back() == descr.front(),
            "{}: bad dtype in .npy header (expected a quoted string such as '<f4'): {}", path,
            header);
  result.dtype = descr.substr(1, descr.size() - 2);
  std::string fortran = dict_value(header, "fortran_order", path);
  TTS_CHECK(fortran == "True" || fortran == "False",
            "{}: bad fortran_order in .npy header: '{}', expected True or False", path, fortran);
  result.fortran_order = fortran == "True";
  result.shape = parse_shape(dict_value(header, "shape", path), path);
  auto count = checked_element_count(result.shape);
  TTS_CHECK(count.has_value(), "{}: the .npy shape {} has more elements than 64 bits count", path,
            shape_text(result.shape));
  result.element_count = *count;
  if (size_t item = item_size(result.dtype); item != 0) {
    auto data_bytes = checked_mul(*count, static_cast<int64_t>(item));
    auto needed = data_bytes ? checked_add(*data_bytes, static_cast<int64_t>(result.data_offset))
                             : std::nullopt;
    TTS_CHECK(needed && *needed <= file_bytes,
              "{}: truncated .npy data: shape {} of '{}' needs {} bytes after the header, the file "
              "has {}; re-create the file",
              path, shape_text(result.shape), result.dtype,
              data_bytes ? fmt::format("{}", *data_bytes) : std::string("more than 2^63"),
              file_bytes - static_cast<int64_t>(result.data_offset));
  }
  return result;
}

}  // namespace

NpyHeader read_npy_header(const std::string& path) {
  return read_header(open_regular_file_for_read(path), path);
}

NpyArray read_npy(const std::string& path) {
  const FileDescriptor fd = open_regular_file_for_read(path);
  NpyHeader header = read_header(fd, path);
  const size_t item = item_size(header.dtype);
  TTS_CHECK(item != 0,
            "{}: dtype '{}' is not supported; expected little-endian float32 ('<f4') (float64 and "
            "int16/32/64 are converted)",
            path, header.dtype);
  NpyArray array;
  array.shape = header.shape;
  // read_npy_header has checked count * item against the file's size: this allocation is no
  // larger than the file.
  const auto count = static_cast<size_t>(header.element_count);
  const std::string bytes = read_at(fd, path, static_cast<int64_t>(header.data_offset),
                                    static_cast<int64_t>(count * item));
  TTS_CHECK(bytes.size() == count * item,
            "{}: truncated .npy data: shape {} needs {} bytes, the file has {}", path,
            shape_text(array.shape), count * item, bytes.size());
  array.data.resize(count);
  if (header.dtype == "<f4") {
    if (!bytes.empty()) std::memcpy(array.data.data(), bytes.data(), bytes.size());
  } else if (header.dtype == "<f8") {
    convert<double>(bytes.data(), count, array.data.data());
  } else if (header.dtype == "<i2") {
    convert<int16_t>(bytes.data(), count, array.data.data());
  } else if (header.dtype == "<i4") {
    convert<int32_t>(bytes.data(), count, array.data.data());
  } else {
    convert<int64_t>(bytes.data(), count, array.data.data());
  }
  if (header.fortran_order && array.shape.size() >= 2 && count > 0) {
    array.data = fortran_to_c_order(array.data, array.shape);
  }
  return array;
}

}  // namespace tts::formats

// NumPy .npy files, the project's array format everywhere (readable by numpy.load). Only float32,
// little-endian, C order is written; reading also accepts float64 and int16/int32/int64 (converted
// to float) and Fortran order (transposed into C order), and rejects anything else with a message
// naming the file and the dtype found.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tts::formats {

struct NpyArray {
  std::vector<int64_t> shape;
  std::vector<float> data;  // C order

  int64_t size() const;
};

// Writes float32 data of `shape` to `path` through a temporary file in the same directory and a
// rename, so a crash never leaves a partial file under the final name. Throws tts::Error.
void write_npy(const std::string& path, const float* data, const std::vector<int64_t>& shape);
inline void write_npy(const std::string& path, const NpyArray& array) {
  write_npy(path, array.data.data(), array.shape);
}

// Reads an .npy file into C order (a Fortran-order array is transposed, so data[i*cols + j] is
// element [i, j] either way); throws tts::Error naming the file and what is wrong (a symlink or
// anything but a regular file: fs.h's open_regular_file_for_read; not a .npy file, unsupported
// dtype, truncated data).
NpyArray read_npy(const std::string& path);

// Reads only the header: the shape and dtype string ("<f4"). Throws like read_npy, also when the
// header's length, a dimension (negative, past 64 bits) or the data the shape needs (for a dtype
// read_npy converts) does not fit the file's real size: nothing is allocated from a claimed size
// before it is compared with the file.
struct NpyHeader {
  std::vector<int64_t> shape;
  std::string dtype;
  bool fortran_order = false;
  size_t data_offset = 0;
  int64_t element_count = 0;  // the product of `shape`, checked for overflow
};
NpyHeader read_npy_header(const std::string& path);

}  // namespace tts::formats

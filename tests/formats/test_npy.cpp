#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tts/core/error.h"
#include "tts/core/fs.h"
#include "tts/formats/npy.h"

namespace {

std::string temp_path(const std::string& name) {
  std::filesystem::create_directories(TTS_TEST_TMP_DIR);
  return std::string(TTS_TEST_TMP_DIR) + "/" + name;
}

template <class Fn>
std::string error_of(Fn fn) {
  try {
    fn();
  } catch (const tts::Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected tts::Error";
  return "";
}

// A version-1 .npy file with the given header dict and raw data bytes, written by hand.
void write_raw_npy(const std::string& path, const std::string& dict, const std::string& data) {
  std::string header = dict;
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header.push_back('\n');
  std::string bytes = "\x93NUMPY";
  bytes += std::string("\x01\x00", 2);
  bytes.push_back(static_cast<char>(header.size() & 0xff));
  bytes.push_back(static_cast<char>(header.size() >> 8));
  std::ofstream(path, std::ios::binary) << bytes << header << data;
}

template <class T>
std::string raw_bytes(const std::vector<T>& values) {
  std::string bytes(values.size() * sizeof(T), '\0');
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

}  // namespace

TEST(Npy, RoundTripsFloat32WithA64ByteAlignedHeader) {
  std::vector<float> values{1.5f, -2.0f, 3.25f, 0.0f, 1e-7f, 42.0f};
  std::string path = temp_path("a.npy");
  tts::formats::write_npy(path, values.data(), {2, 3});
  tts::formats::NpyArray array = tts::formats::read_npy(path);
  EXPECT_EQ(array.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(array.data, values);
  tts::formats::NpyHeader header = tts::formats::read_npy_header(path);
  EXPECT_EQ(header.data_offset % 64, 0u);
  EXPECT_EQ(header.dtype, "<f4");
  std::string bytes = tts::read_file(path);
  EXPECT_NE(bytes.find("'shape': (2, 3)"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp." + std::to_string(getpid())));
}

TEST(Npy, OneDimensionalAndEmptyShapes) {
  std::vector<float> values{7.0f};
  std::string path = temp_path("b.npy");
  tts::formats::write_npy(path, values.data(), {1});
  EXPECT_NE(tts::read_file(path).find("'shape': (1,)"), std::string::npos);
  EXPECT_EQ(tts::formats::read_npy(path).shape, std::vector<int64_t>{1});
  tts::formats::write_npy(path, values.data(), {0, 80});
  EXPECT_EQ(tts::formats::read_npy(path).shape, (std::vector<int64_t>{0, 80}));
}

TEST(Npy, BadFilesNameTheFileAndTheProblem) {
  std::string garbage = temp_path("garbage.npy");
  std::ofstream(garbage) << "this is not an array";
  EXPECT_NE(error_of([&] { tts::formats::read_npy(garbage); }).find("not a NumPy .npy file"),
            std::string::npos);

  std::vector<float> values(100, 1.0f);
  std::string truncated = temp_path("truncated.npy");
  tts::formats::write_npy(truncated, values.data(), {10, 10});
  std::string bytes = tts::read_file(truncated);
  std::ofstream(truncated, std::ios::binary) << bytes.substr(0, bytes.size() - 8);
  std::string message = error_of([&] { tts::formats::read_npy(truncated); });
  EXPECT_NE(message.find("truncated .npy data"), std::string::npos) << message;
  EXPECT_NE(message.find(truncated), std::string::npos) << message;

  // A float32 file of this test's own, its dtype then changed.
  tts::formats::write_npy(temp_path("f4.npy"), values.data(), {10, 10});
  std::string text = tts::read_file(temp_path("f4.npy"));
  auto at = text.find("<f4");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 3, "|u1");
  std::string wrong_dtype = temp_path("u1.npy");
  std::ofstream(wrong_dtype, std::ios::binary) << text;
  EXPECT_NE(
      error_of([&] { tts::formats::read_npy(wrong_dtype); }).find("dtype '|u1' is not supported"),
      std::string::npos);

  EXPECT_NE(
      error_of([&] { tts::formats::read_npy(temp_path("missing.npy")); }).find("no such file"),
      std::string::npos);
}

// numpy.save writes a Fortran-contiguous array (np.asfortranarray, some librosa outputs) with
// fortran_order True and the first index fastest; formats::read_npy returns it in C order.
TEST(Npy, ReadsFortranOrderIntoCOrder) {
  // a = [[0, 1, 2], [10, 11, 12]] (shape (2, 3)); Fortran order stores columns: 0 10 1 11 2 12.
  std::string path = temp_path("fortran2.npy");
  write_raw_npy(path, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }",
                raw_bytes(std::vector<float>{0, 10, 1, 11, 2, 12}));
  tts::formats::NpyArray array = tts::formats::read_npy(path);
  EXPECT_EQ(array.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(array.data, (std::vector<float>{0, 1, 2, 10, 11, 12}));
  EXPECT_TRUE(tts::formats::read_npy_header(path).fortran_order);

  // 3-D float64: element [i, j, k] = 100 i + 10 j + k, shape (2, 3, 4), stored i fastest.
  std::vector<double> fortran;
  for (int k = 0; k < 4; ++k) {
    for (int j = 0; j < 3; ++j) {
      for (int i = 0; i < 2; ++i) fortran.push_back(100 * i + 10 * j + k);
    }
  }
  std::string path3 = temp_path("fortran3.npy");
  write_raw_npy(path3, "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3, 4), }",
                raw_bytes(fortran));
  tts::formats::NpyArray cube = tts::formats::read_npy(path3);
  ASSERT_EQ(cube.shape, (std::vector<int64_t>{2, 3, 4}));
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) {
      for (int k = 0; k < 4; ++k) {
        EXPECT_EQ(cube.data[(i * 3 + j) * 4 + k], 100 * i + 10 * j + k) << i << j << k;
      }
    }
  }

  // 1-D and empty arrays are the same in either order.
  std::string path1 = temp_path("fortran1.npy");
  write_raw_npy(path1, "{'descr': '<f4', 'fortran_order': True, 'shape': (3,), }",
                raw_bytes(std::vector<float>{1, 2, 3}));
  EXPECT_EQ(tts::formats::read_npy(path1).data, (std::vector<float>{1, 2, 3}));
  std::string path0 = temp_path("fortran0.npy");
  write_raw_npy(path0, "{'descr': '<f4', 'fortran_order': True, 'shape': (0, 80), }", "");
  EXPECT_EQ(tts::formats::read_npy(path0).shape, (std::vector<int64_t>{0, 80}));

  // A truncated Fortran-order file is still an error naming the file.
  std::string short_path = temp_path("fortran_short.npy");
  write_raw_npy(short_path, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }",
                raw_bytes(std::vector<float>{0, 10, 1}));
  std::string message = error_of([&] { tts::formats::read_npy(short_path); });
  EXPECT_NE(message.find("truncated .npy data"), std::string::npos) << message;
  EXPECT_NE(message.find(short_path), std::string::npos) << message;
}

// Sizes a header claims are checked against the file before anything is allocated or indexed:
// negative or overflowing dimensions, products and byte counts that wrap, header lengths past the
// file, headers cut short anywhere. Each is a tts::Error naming the file.
TEST(Npy, HostileHeadersAreRefusedBeforeAnyAllocation) {
  const std::string path = temp_path("hostile.npy");
  auto refused = [&](const std::string& dict, const std::string& data, const std::string& what) {
    write_raw_npy(path, dict, data);
    std::string message = error_of([&] { tts::formats::read_npy(path); });
    EXPECT_NE(message.find(path), std::string::npos) << dict << ": " << message;
    EXPECT_NE(message.find(what), std::string::npos) << dict << ": " << message;
  };
  const std::string four = raw_bytes(std::vector<float>{1, 2, 3, 4});
  refused("{'descr': '<f4', 'fortran_order': True, 'shape': (-2, -2), }", four, "bad shape");
  refused("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -2), }", four, "bad shape");
  refused("{'descr': '<f4', 'fortran_order': False, 'shape': (+4,), }", four, "bad shape");
  refused("{'descr': '<f4', 'fortran_order': False, 'shape': (4 4,), }", four, "bad shape");
  refused("{'descr': '<f4', 'fortran_order': False, 'shape': (9223372036854775808,), }", four,
          "bad shape");
  refused("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", four,
          "more elements than 64 bits");
  refused("{'descr': '<f8', 'fortran_order': False, 'shape': (2305843009213693953,), }", four,
          "truncated .npy data");
  refused("{'descr': '<f4', 'fortran_order': False, 'shape': (1073741824, 2), }", four,
          "truncated .npy data");
  refused("{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }", four, "truncated .npy data");
  refused("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (4,), }", four, "fortran_order");
  refused("{'descr':    ", "", "no value");
  refused("{'descr': '<f4', 'fortran_order': False, 'shape': (4,", "", "no value");
  refused("{'descr': <f4, 'fortran_order': False, 'shape': (4,), }", four, "bad dtype");

  // A header length past the file, and a version 2 length cut short.
  std::string bytes = std::string("\x93NUMPY\x02\x00\xff\xff\xff\xff", 12);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  EXPECT_NE(error_of([&] { tts::formats::read_npy(path); }).find("claims 4294967295 bytes"),
            std::string::npos);
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      << std::string("\x93NUMPY\x02\x00\x10\x00", 10);
  EXPECT_NE(error_of([&] { tts::formats::read_npy(path); }).find("cut short"), std::string::npos);
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      << std::string("\x93NUMPY\x01\x00\x00\x10", 10) << "{'descr'";
  EXPECT_NE(error_of([&] { tts::formats::read_npy(path); }).find("truncated .npy header"),
            std::string::npos);
}

TEST(Npy, ZeroSizedAndFortranShapesStayInBounds) {
  const std::string path = temp_path("zero.npy");
  write_raw_npy(path, "{'descr': '<f4', 'fortran_order': True, 'shape': (0, 5), }", "");
  tts::formats::NpyArray empty = tts::formats::read_npy(path);
  EXPECT_EQ(empty.shape, (std::vector<int64_t>{0, 5}));
  EXPECT_TRUE(empty.data.empty());
  write_raw_npy(path, "{'descr': '<f4', 'fortran_order': True, 'shape': (3, 0, 1000000000000), }",
                "");
  EXPECT_TRUE(tts::formats::read_npy(path).data.empty());
  // Spaces around entries, as other writers put them.
  write_raw_npy(path, "{'descr': '<i2', 'fortran_order': False, 'shape': ( 2 , 1 ), }",
                raw_bytes(std::vector<int16_t>{7, -8}));
  EXPECT_EQ(tts::formats::read_npy(path).data, (std::vector<float>{7, -8}));
  // Python 2's numpy wrote long integers with an L.
  write_raw_npy(path, "{'descr': '<i2', 'fortran_order': False, 'shape': (2L, 1L), }",
                raw_bytes(std::vector<int16_t>{7, -8}));
  EXPECT_EQ(tts::formats::read_npy(path).shape, (std::vector<int64_t>{2, 1}));
}

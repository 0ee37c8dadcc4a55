#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tts/core/error.h"
#include "tts/core/fs.h"
#include "tts/core/npy.h"

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

}  // namespace

TEST(Npy, RoundTripsFloat32WithA64ByteAlignedHeader) {
  std::vector<float> values{1.5f, -2.0f, 3.25f, 0.0f, 1e-7f, 42.0f};
  std::string path = temp_path("a.npy");
  tts::write_npy(path, values.data(), {2, 3});
  tts::NpyArray array = tts::read_npy(path);
  EXPECT_EQ(array.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(array.data, values);
  tts::NpyHeader header = tts::read_npy_header(path);
  EXPECT_EQ(header.data_offset % 64, 0u);
  EXPECT_EQ(header.dtype, "<f4");
  std::string bytes = tts::read_file(path);
  EXPECT_NE(bytes.find("'shape': (2, 3)"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp." + std::to_string(getpid())));
}

TEST(Npy, OneDimensionalAndEmptyShapes) {
  std::vector<float> values{7.0f};
  std::string path = temp_path("b.npy");
  tts::write_npy(path, values.data(), {1});
  EXPECT_NE(tts::read_file(path).find("'shape': (1,)"), std::string::npos);
  EXPECT_EQ(tts::read_npy(path).shape, std::vector<int64_t>{1});
  tts::write_npy(path, values.data(), {0, 80});
  EXPECT_EQ(tts::read_npy(path).shape, (std::vector<int64_t>{0, 80}));
}

TEST(Npy, BadFilesNameTheFileAndTheProblem) {
  std::string garbage = temp_path("garbage.npy");
  std::ofstream(garbage) << "this is not an array";
  EXPECT_NE(error_of([&] { tts::read_npy(garbage); }).find("not a NumPy .npy file"),
            std::string::npos);

  std::vector<float> values(100, 1.0f);
  std::string truncated = temp_path("truncated.npy");
  tts::write_npy(truncated, values.data(), {10, 10});
  std::string bytes = tts::read_file(truncated);
  std::ofstream(truncated, std::ios::binary) << bytes.substr(0, bytes.size() - 8);
  std::string message = error_of([&] { tts::read_npy(truncated); });
  EXPECT_NE(message.find("truncated .npy data"), std::string::npos) << message;
  EXPECT_NE(message.find(truncated), std::string::npos) << message;

  std::string text = tts::read_file(temp_path("a.npy"));
  auto at = text.find("<f4");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 3, "|u1");
  std::string wrong_dtype = temp_path("u1.npy");
  std::ofstream(wrong_dtype, std::ios::binary) << text;
  EXPECT_NE(error_of([&] { tts::read_npy(wrong_dtype); }).find("dtype '|u1' is not supported"),
            std::string::npos);

  EXPECT_NE(error_of([&] { tts::read_npy(temp_path("missing.npy")); }).find("cannot open"),
            std::string::npos);
}

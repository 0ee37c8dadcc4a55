// The torch.save reader on hand-written pickles: every tensor view is checked against its storage
// with overflow-safe arithmetic, nesting and memo cycles are bounded, and stack misuse is an error
// naming the file. (The hostile files of tests/data/untrusted/ run through the CLI in
// tests/cli/test_untrusted_inputs.cpp.)
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../support/pickle_zip.h"
#include "../support/zip_builder.h"
#include "tts/core/error.h"
#include "tts/formats/torch_file.h"

namespace {

using tts::formats::PickleValue;
using tts::test::pickle_int;
using tts::test::pickle_tensor;

const std::string kFloats = [] {
  std::vector<float> values{0, 1, 2, 3};
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
}();

std::string write_pickle(const std::string& name, const std::string& body,
                         const std::string& storage = kFloats) {
  std::filesystem::create_directories(TTS_TEST_TMP_DIR);
  std::string path = std::string(TTS_TEST_TMP_DIR) + "/" + name + ".pt";
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      << tts::test::torch_zip("\x80\x02" + body + ".", {{"0", storage}});
  return path;
}

// The tts::Error message of reading `body`; fails the test when it reads.
std::string refusal(const std::string& body) {
  std::string path = write_pickle("refused", body);
  try {
    tts::formats::read_torch_file(path);
  } catch (const tts::Error& e) {
    std::string message = e.what();
    EXPECT_NE(message.find(path), std::string::npos) << message;
    return message;
  }
  ADD_FAILURE() << "read without an error";
  return "";
}

std::string u32(uint32_t v) {
  std::string s;
  for (int i = 0; i < 4; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  return s;
}

std::string ints(std::initializer_list<int64_t> values) {
  std::string out;
  for (int64_t v : values) out += pickle_int(v);
  return out;
}

}  // namespace

TEST(TorchPickle, ViewsInsideTheStorageRead) {
  tts::formats::PickleValue v = tts::formats::read_torch_file(
      write_pickle("view", pickle_tensor(4, 1, ints({3}), ints({1}))));
  ASSERT_EQ(v.kind, tts::formats::PickleValue::Kind::Tensor);
  EXPECT_TRUE(v.tensor.equal(torch::tensor({1.0f, 2.0f, 3.0f})));
  v = tts::formats::read_torch_file(
      write_pickle("view2", pickle_tensor(4, 0, ints({2, 2}), ints({1, 2}))));
  EXPECT_TRUE(v.tensor.equal(torch::tensor({0.0f, 2.0f, 1.0f, 3.0f}).reshape({2, 2})));
  v = tts::formats::read_torch_file(
      write_pickle("empty", pickle_tensor(4, 4, ints({0}), ints({1}))));
  EXPECT_EQ(v.tensor.numel(), 0);
}

TEST(TorchPickle, ViewsReachingPastTheStorageAreRefused) {
  const int64_t big = int64_t{1} << 40;
  EXPECT_NE(refusal(pickle_tensor(4, 1, ints({4}), ints({1}))).find("past the storage's end"),
            std::string::npos);
  // offset + (size - 1) * stride wraps modulo 2^64 to a small number: refused all the same.
  EXPECT_NE(refusal(pickle_tensor(4, (int64_t{1} << 62) - big - 1, ints({2}), ints({big})))
                .find("past the storage's end"),
            std::string::npos);
  EXPECT_NE(refusal(pickle_tensor(4, 0, ints({5, 2}), ints({INT64_MAX / 2, 1})))
                .find("reaches past 64-bit"),
            std::string::npos);
  EXPECT_NE(refusal(pickle_tensor(4, -1, ints({1}), ints({1}))).find("before the storage"),
            std::string::npos);
  EXPECT_NE(refusal(pickle_tensor(4, 3, ints({4}), ints({-1}))).find("negative stride"),
            std::string::npos);
  EXPECT_NE(refusal(pickle_tensor(4, 0, ints({2}), ints({1, 1}))).find("as many strides"),
            std::string::npos);
  EXPECT_NE(refusal(pickle_tensor(4, 0, ints({-1}), ints({1}))).find("negative size"),
            std::string::npos);
  EXPECT_NE(refusal(pickle_tensor(4, 0, ints({int64_t{1} << 62, 4}), ints({0, 0})))
                .find("more elements than 64 bits"),
            std::string::npos);
  // A stride-0 view of one float claiming 2^30 elements would be a 4 GiB copy.
  EXPECT_NE(refusal(pickle_tensor(4, 0, ints({int64_t{1} << 30}), ints({0})))
                .find("more elements than its storage"),
            std::string::npos);
}

TEST(TorchPickle, NestingAndMemoCyclesAreBounded) {
  auto nested = [](int depth) {
    return std::string(static_cast<size_t>(depth), ']') + std::string(depth - 1, 'a');
  };
  EXPECT_EQ(tts::formats::read_torch_file(write_pickle("nest50", nested(50))).kind,
            tts::formats::PickleValue::Kind::List);
  EXPECT_NE(refusal(nested(100000)).find("more than 100 deep"), std::string::npos);
  // A chain built one append at a time through the memo: each step adds one level below a list
  // already inside another, which only a walk of the finished value sees.
  std::string chain = "]r" + std::string(4, '\0');
  for (uint32_t i = 1; i <= 1000; ++i) chain += "j" + u32(i - 1) + "]r" + u32(i) + "a0";
  EXPECT_NE(refusal(chain).find("more than 100 deep"), std::string::npos);
  EXPECT_NE(refusal(std::string("]q\0h\0a", 6)).find("contains itself"), std::string::npos);
}

// Routes to depth that a walk of the root alone does not see: a deep value kept only in the memo
// (freed when the reader is done), and a chain of shared lists that are each first met at depth 2.
TEST(TorchPickle, DepthIsBoundedOnEveryRoute) {
  std::string memo_only = std::string(100000, ']') + std::string(99999, 'a') + "r" + u32(0) + "0N";
  EXPECT_NE(refusal(memo_only).find("more than 100 deep"), std::string::npos);
  // root = [L0, L1, ..., Ln] with L(i) = [L(i-1)]: L(n) nests n deep, yet every list sits at
  // depth 2 of the root.
  std::string shared = "]]r" + u32(0) + "a";
  for (uint32_t i = 1; i < 500000; ++i) shared += "]r" + u32(i) + "j" + u32(i - 1) + "aa";
  EXPECT_NE(refusal(shared).find("more than 100 deep"), std::string::npos);
}

// Freeing a value never recurses, however deep and however shared its nodes are.
TEST(TorchPickle, ValuesAreFreedWithoutRecursion) {
  auto leaf = std::make_shared<PickleValue>();
  {
    auto list = [] {
      auto v = std::make_shared<PickleValue>();
      v->kind = PickleValue::Kind::List;
      return v;
    };
    PickleValue root;
    root.kind = PickleValue::Kind::List;
    std::shared_ptr<PickleValue> chain = list();
    chain->items.push_back(leaf);
    for (int i = 0; i < 500000; ++i) {
      auto next = list();
      next->items.push_back(chain);
      if (i % 1000 == 0) root.items.push_back(next);  // shared: held by the root and the chain
      chain = std::move(next);
    }
    root.items.push_back(std::move(chain));
    EXPECT_EQ(leaf.use_count(), 2);
  }
  EXPECT_EQ(leaf.use_count(), 1);
}

TEST(TorchPickle, StackMisuseAndBadLengthsAreErrors) {
  EXPECT_NE(refusal("a").find("empty stack"), std::string::npos);
  EXPECT_NE(refusal("N(0t").find("below its MARK"), std::string::npos);
  EXPECT_NE(refusal("N\x8d\xfd\xff\xff\xff\xff\xff\xff\xff").find("truncated"), std::string::npos);
  EXPECT_NE(refusal("K\x01)R").find("not a named function"), std::string::npos);
  EXPECT_NE(refusal("cos\nsystem\n" + tts::test::pickle_string("ls") + "\x85R").find("os.system"),
            std::string::npos);
  EXPECT_NE(refusal("(" + tts::test::pickle_string("storage") + "ctorch\nFloatStorage\n" +
                    tts::test::pickle_string("../0") + tts::test::pickle_string("cpu") +
                    pickle_int(4) + "tQ")
                .find("names a storage"),
            std::string::npos);
}

// Rebuilding the same storage over and over costs a few bytes of pickle per copy: the copies may
// total only a few times the file's size.
TEST(TorchPickle, CopiesOfOneStorageAreBoundedByTheFileSize) {
  const int64_t numel = int64_t{1} << 20;  // a 4 MiB storage
  std::string list = "(";
  for (int i = 0; i < 100; ++i) list += pickle_tensor(numel, 0, ints({numel}), ints({1}));
  list += "l";
  std::string path = write_pickle("copies", list, std::string(numel * sizeof(float), '\0'));
  try {
    tts::formats::read_torch_file(path);
    FAIL() << "400 MiB of copies from a 4 MiB file";
  } catch (const tts::Error& e) {
    EXPECT_NE(std::string(e.what()).find("the same storage over and over"), std::string::npos)
        << e.what();
  }
  // A few copies (tied weights) are fine.
  list = "(" + pickle_tensor(numel, 0, ints({numel}), ints({1})) +
         pickle_tensor(numel, 0, ints({numel}), ints({1})) + "l";
  path = write_pickle("two_copies", list, std::string(numel * sizeof(float), '\0'));
  EXPECT_EQ(tts::formats::read_torch_file(path).items.size(), 2u);
}

namespace {

// The tts::Error of reading the archive `entries` laid out as `layout`; "(read)" when it reads.
std::string zip_refusal(const std::string& name, const std::vector<tts::test::ZipEntry>& entries,
                        const tts::test::ZipLayout& layout = {}) {
  std::string path = std::string(TTS_TEST_TMP_DIR) + "/" + name + ".pt";
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      << tts::test::zip_archive(entries, layout);
  try {
    tts::formats::read_torch_file(path);
  } catch (const tts::Error& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("'" + path + "' is not a readable torch.save file"), std::string::npos)
        << message;
    return message;
  }
  return "(read)";
}

const tts::test::ZipEntry kPickle{"archive/data.pkl", "\x80\x02N."};
const tts::test::ZipEntry kVersion{"archive/version", "3\n"};

}  // namespace

// The zip pre-check and libtorch's zip reader (miniz) must see one archive: what they could read
// differently is refused before miniz opens the file.
TEST(TorchZip, ASoundArchiveReadsWithAndWithoutZip64Records) {
  std::filesystem::create_directories(TTS_TEST_TMP_DIR);
  EXPECT_EQ(zip_refusal("sound", {kPickle, kVersion}), "(read)");
  EXPECT_EQ(zip_refusal("sound32", {kPickle, kVersion}, {false}), "(read)");
}

TEST(TorchZip, DuplicateNamesAreRefused) {
  tts::test::ZipEntry other{"archive/data.pkl", "\x80\x02]."};
  EXPECT_NE(zip_refusal("duplicate", {kPickle, kVersion, other})
                .find("two zip records are named "
                      "'archive/data.pkl'"),
            std::string::npos);
  other.name = "elsewhere/data.pkl";  // the same record name below another top folder
  EXPECT_NE(zip_refusal("duplicate2", {kPickle, kVersion, other}).find("two zip records"),
            std::string::npos);
}

TEST(TorchZip, Zip64RecordsAreFollowedAsMinizDoesAndMustAgree) {
  std::filesystem::create_directories(TTS_TEST_TMP_DIR);
  EXPECT_NE(zip_refusal("zip64_count", {kPickle, kVersion}, {true, 3})
                .find("disagree on the entry count (2 and 3)"),
            std::string::npos);
  EXPECT_NE(zip_refusal("zip64_elsewhere", {kPickle, kVersion}, {true, -1, 0})
                .find("points at no zip64 end record"),
            std::string::npos);
}

TEST(TorchZip, CompressedAndOverlappingRecordsAreRefused) {
  tts::test::ZipEntry deflated = kPickle;
  deflated.method = 8;
  EXPECT_NE(zip_refusal("deflated", {deflated, kVersion}).find("is compressed (method 8"),
            std::string::npos);
  // Records sharing one local header: each fits in the file, together they do not.
  tts::test::ZipEntry big{"archive/data/0", std::string(4096, 'x')};
  std::vector<tts::test::ZipEntry> entries{kPickle, kVersion, big};
  for (int i = 1; i <= 3; ++i)
    entries.push_back({"archive/data/" + std::to_string(i), big.data, 0, 2});
  EXPECT_NE(zip_refusal("overlapping", entries).find("for record 'archive/data/1'"),
            std::string::npos);
}

// The file is opened once: a file renamed over the name after it was opened (after the checks)
// is not what is read; a symlink is refused where the caller says so.
TEST(TorchZip, WhatIsReadIsTheFileOpenedOnce) {
  const std::string path = write_pickle("opened", "K\x07");
  const std::string other = write_pickle("swapped_in", "K\x09");
  const tts::FileDescriptor fd = tts::open_regular_file_for_read(path);
  std::filesystem::rename(other, path);
  EXPECT_EQ(tts::formats::read_torch_file(fd, path).integer, 7);
  EXPECT_EQ(tts::formats::read_torch_file(path).integer, 9);
  const std::string link = std::string(TTS_TEST_TMP_DIR) + "/link.pt";
  std::filesystem::remove(link);
  std::filesystem::create_symlink(path, link);
  EXPECT_EQ(tts::formats::read_torch_file(link).integer, 9);  // a link the user made
  EXPECT_THROW(tts::formats::read_torch_file(link, tts::Symlinks::kRefuse), tts::Error);
}

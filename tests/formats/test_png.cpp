// PNG decoding: a 3x2 RGB image encoded here by hand (signature, IHDR, one zlib IDAT, IEND) is
// read back pixel for pixel, and what is not a PNG is refused with a message.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tts/core/error.h"
#include "tts/formats/png.h"

namespace {

void put_be32(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8)
    out.push_back(static_cast<char>((v >> shift) & 0xff));
}

void put_chunk(std::string& out, const std::string& type, const std::string& data) {
  put_be32(out, static_cast<uint32_t>(data.size()));
  std::string body = type + data;
  out += body;
  put_be32(out, static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(body.data()),
                                            static_cast<uInt>(body.size()))));
}

// An 8-bit RGB PNG of `width` x `height` pixels, rows top first, each row filter 0.
std::string encode_rgb(int width, int height, const std::vector<uint8_t>& rgb) {
  std::string raw;
  for (int y = 0; y < height; ++y) {
    raw.push_back(0);
    raw.append(reinterpret_cast<const char*>(rgb.data()) + y * width * 3, width * 3);
  }
  uLongf size = compressBound(raw.size());
  std::string compressed(size, '\0');
  EXPECT_EQ(compress(reinterpret_cast<Bytef*>(compressed.data()), &size,
                     reinterpret_cast<const Bytef*>(raw.data()), raw.size()),
            Z_OK);
  compressed.resize(size);
  std::string png("\x89PNG\r\n\x1a\n", 8);
  std::string ihdr;
  put_be32(ihdr, static_cast<uint32_t>(width));
  put_be32(ihdr, static_cast<uint32_t>(height));
  ihdr += std::string("\x08\x02\x00\x00\x00", 5);  // 8 bits, RGB, deflate, no filter, no interlace
  put_chunk(png, "IHDR", ihdr);
  put_chunk(png, "IDAT", compressed);
  put_chunk(png, "IEND", "");
  return png;
}

}  // namespace

TEST(Png, DecodesEveryPixelOfAHandEncodedImage) {
  std::vector<uint8_t> rgb = {255, 0, 0, 0,   255, 0,   0,   0,   255,  // red green blue
                              0,   0, 0, 128, 128, 128, 255, 255, 255};
  std::string png = encode_rgb(3, 2, rgb);
  EXPECT_EQ(tts::formats::png_dimensions(png), std::make_pair(3, 2));
  tts::formats::RgbImage image = tts::formats::decode_png(png);
  ASSERT_EQ(image.width, 3);
  ASSERT_EQ(image.height, 2);
  EXPECT_EQ(image.rgb, rgb);
  EXPECT_EQ(image.at(1, 1), (std::vector<uint8_t>{128, 128, 128}));
  EXPECT_THROW(image.at(3, 0), tts::Error);
}

TEST(Png, RefusesWhatIsNotAPng) {
  EXPECT_THROW(tts::formats::decode_png("not a png"), tts::Error);
  EXPECT_THROW(tts::formats::png_dimensions(std::string("\x89PNG\r\n\x1a\n", 8)), tts::Error);
  std::string png = encode_rgb(1, 1, {1, 2, 3});
  EXPECT_THROW(tts::formats::decode_png(png.substr(0, png.size() - 20)), tts::Error);  // cut short
}

#include "tts/train/png.h"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "tts/core/error.h"

namespace tts::train {
namespace {

void put_u32(std::string& out, uint32_t value) {
  out.push_back(static_cast<char>(value >> 24));
  out.push_back(static_cast<char>(value >> 16));
  out.push_back(static_cast<char>(value >> 8));
  out.push_back(static_cast<char>(value));
}

void put_chunk(std::string& out, const char* type, const std::string& data) {
  put_u32(out, static_cast<uint32_t>(data.size()));
  std::string body = std::string(type, 4) + data;
  out += body;
  put_u32(out, static_cast<uint32_t>(
                   crc32(0, reinterpret_cast<const Bytef*>(body.data()), body.size())));
}

// Viridis, sampled at 9 points; interpolated linearly.
constexpr std::array<std::array<float, 3>, 9> kViridis{{{68, 1, 84},
                                                        {71, 44, 122},
                                                        {59, 81, 139},
                                                        {44, 113, 142},
                                                        {33, 144, 141},
                                                        {39, 173, 129},
                                                        {92, 200, 99},
                                                        {170, 220, 50},
                                                        {253, 231, 37}}};

std::array<uint8_t, 3> viridis(float t) {
  t = std::clamp(t, 0.0f, 1.0f) * static_cast<float>(kViridis.size() - 1);
  auto index = std::min(static_cast<size_t>(t), kViridis.size() - 2);
  float frac = t - static_cast<float>(index);
  std::array<uint8_t, 3> color{};
  for (size_t c = 0; c < 3; ++c) {
    float value = kViridis[index][c] * (1 - frac) + kViridis[index + 1][c] * frac;
    color[c] = static_cast<uint8_t>(std::lround(value));
  }
  return color;
}

}  // namespace

std::string encode_png(const std::vector<uint8_t>& rgb, int width, int height) {
  TTS_CHECK(width > 0 && height > 0 &&
                rgb.size() == static_cast<size_t>(width) * static_cast<size_t>(height) * 3,
            "encode_png: {} bytes do not make a {}x{} RGB image", rgb.size(), width, height);
  std::string raw;  // each row: filter byte 0, then the pixels
  raw.reserve(rgb.size() + static_cast<size_t>(height));
  size_t stride = static_cast<size_t>(width) * 3;
  for (int y = 0; y < height; ++y) {
    raw.push_back('\0');
    raw.append(reinterpret_cast<const char*>(rgb.data()) + static_cast<size_t>(y) * stride, stride);
  }
  uLongf compressed_size = compressBound(raw.size());
  std::string compressed(compressed_size, '\0');
  int status = compress2(reinterpret_cast<Bytef*>(compressed.data()), &compressed_size,
                         reinterpret_cast<const Bytef*>(raw.data()), raw.size(), 6);
  TTS_CHECK(status == Z_OK, "encode_png: zlib compression failed ({})", status);
  compressed.resize(compressed_size);

  std::string png("\x89PNG\r\n\x1a\n", 8);
  std::string header;
  put_u32(header, static_cast<uint32_t>(width));
  put_u32(header, static_cast<uint32_t>(height));
  header += std::string("\x08\x02\x00\x00\x00", 5);  // 8-bit, RGB, deflate, no filter, no interlace
  put_chunk(png, "IHDR", header);
  put_chunk(png, "IDAT", compressed);
  put_chunk(png, "IEND", "");
  return png;
}

std::string heatmap_png(const std::vector<float>& values, int rows, int cols, int scale) {
  TTS_CHECK(rows > 0 && cols > 0 && values.size() == static_cast<size_t>(rows) * cols,
            "heatmap_png: {} values do not make a {}x{} matrix", values.size(), rows, cols);
  float low = INFINITY;
  float high = -INFINITY;
  for (float v : values) {
    if (!std::isfinite(v)) continue;
    low = std::min(low, v);
    high = std::max(high, v);
  }
  float range = high > low ? high - low : 1.0f;
  int width = cols * scale;
  int height = rows * scale;
  std::vector<uint8_t> rgb(static_cast<size_t>(width) * height * 3);
  for (int y = 0; y < height; ++y) {
    int row = rows - 1 - y / scale;  // row 0 at the bottom
    for (int x = 0; x < width; ++x) {
      float v = values[static_cast<size_t>(row) * cols + x / scale];
      auto color = viridis(std::isfinite(v) ? (v - low) / range : 0.0f);
      size_t at = (static_cast<size_t>(y) * width + x) * 3;
      rgb[at] = color[0];
      rgb[at + 1] = color[1];
      rgb[at + 2] = color[2];
    }
  }
  return encode_png(rgb, width, height);
}

std::pair<int, int> png_dimensions(const std::string& png) {
  TTS_CHECK(png.size() >= 24 && png.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0 &&
                png.compare(12, 4, "IHDR") == 0,
            "expected a PNG image (signature and IHDR chunk), found {} bytes that are not one",
            png.size());
  auto be32 = [&](size_t at) {
    uint32_t v = 0;
    for (size_t i = 0; i < 4; ++i) v = v << 8 | static_cast<unsigned char>(png[at + i]);
    return static_cast<int>(v);
  };
  return {be32(16), be32(20)};
}

}  // namespace tts::train

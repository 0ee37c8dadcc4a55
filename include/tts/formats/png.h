// PNG images as bytes: their size (for TensorBoard's image summary) and their pixels (for tests
// and tools that check what a plot shows). Plots themselves are drawn in plots.h.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tts::formats {

// Width and height of an encoded PNG, from its IHDR chunk. Throws tts::Error when `png` is not one.
std::pair<int, int> png_dimensions(const std::string& png);

struct RgbImage {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> rgb;  // height rows of width * 3 bytes, top row first
  // The pixel at column x, row y (from the top): {r, g, b}.
  std::vector<uint8_t> at(int x, int y) const;
};

// Decodes a PNG (any colour type; alpha is dropped). Throws tts::Error when it is not one.
RgbImage decode_png(const std::string& png);

}  // namespace tts::formats

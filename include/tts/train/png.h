// PNG images for training plots (alignments, spectrograms): an encoder for 8-bit RGB and a
// heatmap renderer with a perceptual colormap.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tts::train {

// Encodes `rgb` (height rows of width*3 bytes, top row first) as a PNG file in memory.
std::string encode_png(const std::vector<uint8_t>& rgb, int width, int height);

// Width and height of an encoded PNG, from its IHDR chunk. Throws tts::Error when `png` is not one.
std::pair<int, int> png_dimensions(const std::string& png);

// Renders `values` ([rows, cols], row-major) as an RGB heatmap, row 0 at the BOTTOM (as
// spectrogram and alignment plots are read), each cell `scale` pixels square, values mapped
// linearly from [min, max] of the data to the viridis colormap. Returns the PNG bytes.

std::string heatmap_png(const std::vector<float>& values, int rows, int cols, int scale = 1);

}  // namespace tts::train

#include "tts/formats/png.h"

#include <cairo.h>

#include <cstring>

#include "tts/core/error.h"

namespace tts::formats {
namespace {

struct Reader {
  const std::string* bytes;
  size_t at = 0;
};

cairo_status_t read_from_string(void* closure, unsigned char* data, unsigned int length) {
  auto* reader = static_cast<Reader*>(closure);
  if (reader->bytes->size() - reader->at < length) return CAIRO_STATUS_READ_ERROR;
  std::memcpy(data, reader->bytes->data() + reader->at, length);
  reader->at += length;
  return CAIRO_STATUS_SUCCESS;
}

}  // namespace

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

std::vector<uint8_t> RgbImage::at(int x, int y) const {
  TTS_CHECK(x >= 0 && y >= 0 && x < width && y < height,
            "pixel ({}, {}) is outside the {}x{} image", x, y, width, height);
  size_t i = (static_cast<size_t>(y) * width + x) * 3;
  return {rgb[i], rgb[i + 1], rgb[i + 2]};
}

RgbImage decode_png(const std::string& png) {
  png_dimensions(png);  // a clear error for what is not a PNG at all
  Reader reader{&png};
  cairo_surface_t* surface = cairo_image_surface_create_from_png_stream(read_from_string, &reader);
  cairo_status_t status = cairo_surface_status(surface);
  if (status != CAIRO_STATUS_SUCCESS) {
    cairo_surface_destroy(surface);
    TTS_CHECK(false, "cannot decode the PNG image of {} bytes: {}", png.size(),
              cairo_status_to_string(status));
  }
  cairo_surface_flush(surface);
  RgbImage image;
  image.width = cairo_image_surface_get_width(surface);
  image.height = cairo_image_surface_get_height(surface);
  const unsigned char* data = cairo_image_surface_get_data(surface);
  int stride = cairo_image_surface_get_stride(surface);
  image.rgb.resize(static_cast<size_t>(image.width) * image.height * 3);
  // Cairo holds pixels as native-endian 32-bit xRGB (premultiplied ARGB for images with alpha,
  // which over a white page would differ; our plots are opaque).
  for (int y = 0; y < image.height; ++y) {
    const auto* row = reinterpret_cast<const uint32_t*>(data + static_cast<size_t>(y) * stride);
    for (int x = 0; x < image.width; ++x) {
      size_t i = (static_cast<size_t>(y) * image.width + x) * 3;
      image.rgb[i] = static_cast<uint8_t>(row[x] >> 16);
      image.rgb[i + 1] = static_cast<uint8_t>(row[x] >> 8);
      image.rgb[i + 2] = static_cast<uint8_t>(row[x]);
    }
  }
  cairo_surface_destroy(surface);
  return image;
}

}  // namespace tts::formats

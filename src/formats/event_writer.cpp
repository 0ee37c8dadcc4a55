#include "tts/formats/event_writer.h"

#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstring>

#include "tts/core/error.h"

namespace tts::formats {
namespace {

// Protocol-buffer wire encoding of the few fields used.
void put_varint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

void put_tag(std::string& out, int field, int wire_type) {
  put_varint(out, static_cast<uint64_t>(field) << 3 | static_cast<uint64_t>(wire_type));
}

void put_bytes(std::string& out, int field, const std::string& bytes) {
  put_tag(out, field, 2);
  put_varint(out, bytes.size());
  out += bytes;
}

template <class T>
void put_fixed(std::string& out, int field, T value) {
  put_tag(out, field, sizeof(T) == 8 ? 1 : 5);
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));  // little-endian machines only (x86-64, aarch64)
  out.append(bytes, sizeof(T));
}

uint32_t masked_crc(const std::string& data) {
  uint32_t crc = crc32c(data);
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

std::string le32(uint32_t value) {
  char bytes[4];
  std::memcpy(bytes, &value, 4);
  return std::string(bytes, 4);
}

double wall_time() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

// Event { wall_time = 1 (double); step = 2 (int64); summary = 5 (Summary) }
std::string event_with_summary(int64_t step, const std::string& summary) {
  std::string event;
  put_fixed(event, 1, wall_time());
  put_tag(event, 2, 0);
  put_varint(event, static_cast<uint64_t>(step));
  put_bytes(event, 5, summary);
  return event;
}

// Summary { value = 1: Value { tag = 1; <field> = message } }.
std::string summary_of(const std::string& tag, int field, const std::string& message) {
  std::string value_message;
  put_bytes(value_message, 1, tag);
  put_bytes(value_message, field, message);
  std::string summary;
  put_bytes(summary, 1, value_message);
  return summary;
}

}  // namespace

uint32_t crc32c(const std::string& data) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82f63b78u : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t crc = 0xffffffffu;
  for (unsigned char byte : data) crc = table[(crc ^ byte) & 0xff] ^ (crc >> 8);
  return crc ^ 0xffffffffu;
}

EventWriter::EventWriter(const std::string& directory) {
  char host[256] = "localhost";
  gethostname(host, sizeof(host) - 1);
  path_ = fmt::format("{}/events.out.tfevents.{}.{}", directory, static_cast<int64_t>(wall_time()),
                      host);
  fd_ = open_for_append(path_);
  std::string event;
  put_fixed(event, 1, wall_time());
  put_bytes(event, 3, "brain.Event:2");  // file_version
  write_event(event);
}

void EventWriter::add_scalar(const std::string& tag, float value, int64_t step) {
  std::string value_message;  // Summary.Value { tag = 1; simple_value = 2 (float) }
  put_bytes(value_message, 1, tag);
  put_fixed(value_message, 2, value);
  std::string summary;
  put_bytes(summary, 1, value_message);
  write_event(event_with_summary(step, summary));
}

void EventWriter::add_image(const std::string& tag, const std::string& png, int width, int height,
                            int64_t step) {
  std::string image;  // Summary.Image { height = 1; width = 2; colorspace = 3; encoded = 4 }
  put_tag(image, 1, 0);
  put_varint(image, static_cast<uint64_t>(height));
  put_tag(image, 2, 0);
  put_varint(image, static_cast<uint64_t>(width));
  put_tag(image, 3, 0);
  put_varint(image, 3);  // RGB
  put_bytes(image, 4, png);
  write_event(event_with_summary(step, summary_of(tag, 4, image)));  // Value.image = 4
}

void EventWriter::add_audio(const std::string& tag, const std::string& wav, int sample_rate,
                            int64_t samples, int64_t step) {
  // Summary.Audio { sample_rate = 1 (float); num_channels = 2; length_frames = 3;
  //                 encoded_audio_string = 4; content_type = 5 }
  std::string audio;
  put_fixed(audio, 1, static_cast<float>(sample_rate));
  put_tag(audio, 2, 0);
  put_varint(audio, 1);
  put_tag(audio, 3, 0);
  put_varint(audio, static_cast<uint64_t>(samples));
  put_bytes(audio, 4, wav);
  put_bytes(audio, 5, "audio/wav");
  write_event(event_with_summary(step, summary_of(tag, 6, audio)));  // Value.audio = 6
}

void EventWriter::write_event(const std::string& event_body) {
  // TFRecord: uint64 length, masked crc32c of the length, data, masked crc32c of the data.
  uint64_t length = event_body.size();
  std::string length_bytes(reinterpret_cast<const char*>(&length), 8);
  write_all(
      fd_,
      length_bytes + le32(masked_crc(length_bytes)) + event_body + le32(masked_crc(event_body)),
      path_);
}

}  // namespace tts::formats

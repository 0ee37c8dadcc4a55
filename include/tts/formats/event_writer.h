// TensorBoard event files (so `tensorboard --logdir RUN` shows a run): scalars, PNG images and WAV
// audio, written as TFRecords of tensorflow.Event protocol buffers, encoded by hand (no protobuf or
// TensorFlow dependency). One file per run: RUN/events.out.tfevents.<time>.<host>.
#pragma once

#include <cstdint>
#include <string>

#include "tts/core/fs.h"

namespace tts::formats {

class EventWriter {
 public:
  // Creates (or appends to) the event file in `directory` through open_for_append of fs.h (a
  // symlink or anything but a regular file is refused) and writes the file-version record.
  explicit EventWriter(const std::string& directory);
  void add_scalar(const std::string& tag, float value, int64_t step);
  // `png` is an encoded PNG (see png.h) of the given size.
  void add_image(const std::string& tag, const std::string& png, int width, int height,
                 int64_t step);
  // `wav` is a WAV file's bytes (see audio::write_wav) of `samples` mono samples.
  void add_audio(const std::string& tag, const std::string& wav, int sample_rate, int64_t samples,
                 int64_t step);
  void flush() {}  // records are written by write(2) whole, nothing is buffered
  const std::string& path() const { return path_; }

 private:
  void write_event(const std::string& event_body);

  std::string path_;
  FileDescriptor fd_;
};

// CRC-32C (Castagnoli), as TFRecord framing uses; exposed for tests.
uint32_t crc32c(const std::string& data);

}  // namespace tts::formats

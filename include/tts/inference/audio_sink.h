// Where streamed audio goes as its chunks come: 16-bit PCM as a WAV (a header first) or raw, to
// standard output (synthesize --out -: a player reads while the sentence is still decoded) or to a
// file that grows with each chunk and whose header gets its sizes when it is closed.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tts::inference {

enum class StreamFormat { kWav, kPcm16 };

// Parses synthesize --format: "wav" or "pcm16". Throws UsageError otherwise.
StreamFormat parse_stream_format(const std::string& text);

class AudioSink {
 public:
  virtual ~AudioSink() = default;
  // Appends samples (float, full scale 1); throws tts::Error for a non-finite one or a failed
  // write (a reader that went away), naming where.
  virtual void write(const std::vector<float>& samples) = 0;
  // Ends the stream: a file's WAV header gets its sizes. Idempotent.
  virtual void close() = 0;
};

// Standard output. A WAV's sizes are unknown while it streams: its header says 0xFFFFFFFF, which
// players (aplay, sox, ffmpeg) read as "until the end". SIGPIPE is ignored from here on, so that
// a player that quits ends the run with an error, not a signal.
std::unique_ptr<AudioSink> stdout_sink(StreamFormat format, int sample_rate);

// A new file at `path` (created or truncated; a symbolic link there is replaced, never written
// through), written as chunks come; close() writes the WAV header's sizes.
std::unique_ptr<AudioSink> file_sink(const std::string& path, StreamFormat format, int sample_rate);

// The 44-byte header of a 16-bit mono PCM WAV of `data_bytes` bytes of samples (0xFFFFFFFF: not
// known yet).
std::string wav_header(int sample_rate, uint32_t data_bytes);

}  // namespace tts::inference

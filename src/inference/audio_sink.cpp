#include "tts/inference/audio_sink.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <limits>

#include "tts/audio/audio_io.h"
#include "tts/core/error.h"

namespace tts::inference {
namespace {

void put32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void put16(std::string& out, uint16_t v) {
  out.push_back(static_cast<char>(v & 0xff));
  out.push_back(static_cast<char>(v >> 8));
}

constexpr uint32_t kUnknown = 0xFFFFFFFFu;

// 16-bit PCM to a descriptor, with a WAV header first when asked.
class DescriptorSink final : public AudioSink {
 public:
  DescriptorSink(int fd, bool owned, std::string where, StreamFormat format, int sample_rate)
      : fd_(fd), owned_(owned), where_(std::move(where)), format_(format), rate_(sample_rate) {
    if (format_ == StreamFormat::kWav) put(wav_header(rate_, kUnknown));
  }
  ~DescriptorSink() override {
    try {
      close();
    } catch (const std::exception&) {
    }
  }

  void write(const std::vector<float>& samples) override {
    TTS_CHECK(!closed_, "{}: audio written after the stream ended", where_);
    std::string bytes;
    bytes.reserve(samples.size() * 2);
    for (float x : samples) put16(bytes, static_cast<uint16_t>(audio::pcm16(x)));
    put(bytes);
    data_bytes_ += bytes.size();
  }

  void close() override {
    if (closed_) return;
    closed_ = true;
    // A file's header learns its sizes; a pipe's keeps "until the end".
    if (owned_ && format_ == StreamFormat::kWav) {
      const uint64_t data = std::min<uint64_t>(data_bytes_, kUnknown - 36);
      const std::string header = wav_header(rate_, static_cast<uint32_t>(data));
      TTS_CHECK(
          ::pwrite(fd_, header.data(), header.size(), 0) == static_cast<ssize_t>(header.size()),
          "{}: cannot write the WAV header's sizes: {}", where_, std::strerror(errno));
    }
    if (owned_) {
      TTS_CHECK(::close(fd_) == 0, "{}: cannot close: {}", where_, std::strerror(errno));
    }
  }

 private:
  void put(const std::string& bytes) {
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      TTS_CHECK(n > 0, "{}: cannot write audio ({}){}", where_, std::strerror(errno),
                errno == EPIPE ? ": the program reading it has ended" : "");
      done += static_cast<size_t>(n);
    }
  }

  int fd_;
  bool owned_;
  std::string where_;
  StreamFormat format_;
  int rate_;
  uint64_t data_bytes_ = 0;
  bool closed_ = false;
};

}  // namespace

StreamFormat parse_stream_format(const std::string& text) {
  if (text == "wav") return StreamFormat::kWav;
  if (text == "pcm16") return StreamFormat::kPcm16;
  throw UsageError(
      fmt::format("--format: expected wav (a WAV header, then 16-bit samples) or pcm16 (raw 16-bit "
                  "little-endian mono samples), found '{}'",
                  text));
}

std::string wav_header(int sample_rate, uint32_t data_bytes) {
  std::string h = "RIFF";
  put32(h, data_bytes == kUnknown ? kUnknown : data_bytes + 36);
  h += "WAVEfmt ";
  put32(h, 16);
  put16(h, 1);  // PCM
  put16(h, 1);  // mono
  put32(h, static_cast<uint32_t>(sample_rate));
  put32(h, static_cast<uint32_t>(sample_rate) * 2);
  put16(h, 2);
  put16(h, 16);
  h += "data";
  put32(h, data_bytes);
  return h;
}

std::unique_ptr<AudioSink> stdout_sink(StreamFormat format, int sample_rate) {
  std::signal(SIGPIPE, SIG_IGN);
  return std::make_unique<DescriptorSink>(STDOUT_FILENO, false, "standard output", format,
                                          sample_rate);
}

std::unique_ptr<AudioSink> file_sink(const std::string& path, StreamFormat format,
                                     int sample_rate) {
  // A symbolic link there is replaced, not written through, as write_wav's atomic rename
  // replaces one: whatever it points at stays as it is.
  struct stat info {};
  if (::lstat(path.c_str(), &info) == 0 && S_ISLNK(info.st_mode)) {
    TTS_CHECK(::unlink(path.c_str()) == 0, "{}: cannot replace the symbolic link there: {}", path,
              std::strerror(errno));
  }
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  TTS_CHECK(fd >= 0, "{}: cannot create ({}){}", path, std::strerror(errno),
            errno == ELOOP ? ": it is a symbolic link, which is not written through" : "");
  return std::make_unique<DescriptorSink>(fd, true, path, format, sample_rate);
}

}  // namespace tts::inference

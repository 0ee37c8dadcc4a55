#include "tts/audio/audio_io.h"

#include <sndfile.h>
#include <soxr.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <memory>

#include "tts/core/error.h"
#include "tts/core/fs.h"
#include "tts/core/logging.h"

namespace tts::audio {
namespace {

// Rates outside this range are refused before anything is read: speech is recorded at 8 to 48 kHz
// (studio files up to 384 kHz), and resampling a file that declares 1 Hz to 22050 Hz would
// multiply its samples 22050 times.
constexpr int kMinSampleRate = 1000;
constexpr int kMaxSampleRate = 384000;
// Tacotron trains on utterances of seconds (LJSpeech's longest is about 10 s): a clip longer than
// this is refused before reading, which bounds memory whatever length a header claims (FLAC's
// total-sample count is a header field, not a measurement).
constexpr int64_t kMaxClipSeconds = 600;
// Mono is what training uses; microphone arrays and surround formats stay below this.
constexpr int kMaxChannels = 32;
// Samples (frames x channels) one file may decode to: 600 s of 48 kHz mono, about 115 MB as
// floats. The limits above alone admit 600 s x 384 kHz x 32 channels, 29.5 GB of floats, which a
// small Vorbis or Opus file of silence can claim; real corpora (16-48 kHz, seconds per clip) stay
// far below.
constexpr int64_t kMaxDecodedSamples = kMaxClipSeconds * 48000;
// Frames read per libsndfile call: the buffer grows with the samples a file really holds, never
// with the count its header claims.
constexpr sf_count_t kReadBlockFrames = 1 << 16;

// Containers that store samples as they are, so that their size bounds the samples they hold.
// FLAC reports a PCM subtype too (the depth it decodes to), which is why the container decides.
bool is_uncompressed_container(int format) {
  switch (format & SF_FORMAT_TYPEMASK) {
    case SF_FORMAT_WAV:
    case SF_FORMAT_WAVEX:
    case SF_FORMAT_W64:
    case SF_FORMAT_RF64:
    case SF_FORMAT_AIFF:
    case SF_FORMAT_AU:
    case SF_FORMAT_RAW:
    case SF_FORMAT_CAF:
    case SF_FORMAT_NIST:
    case SF_FORMAT_IRCAM:
      return true;
    default:
      return false;
  }
}

// Bytes per sample that an uncompressed container's file must hold; 0 for compressed containers
// and encodings (FLAC, Vorbis, Opus, ADPCM...), whose decoded length kMaxDecodedSamples bounds.
int64_t pcm_bytes_per_sample(int format) {
  if (!is_uncompressed_container(format)) return 0;
  switch (format & SF_FORMAT_SUBMASK) {
    case SF_FORMAT_PCM_S8:
    case SF_FORMAT_PCM_U8:
      return 1;
    case SF_FORMAT_PCM_16:
      return 2;
    case SF_FORMAT_PCM_24:
      return 3;
    case SF_FORMAT_PCM_32:
    case SF_FORMAT_FLOAT:
      return 4;
    case SF_FORMAT_DOUBLE:
      return 8;
    default:
      return 0;
  }
}

struct SndfileCloser {
  void operator()(SNDFILE* file) const { sf_close(file); }
};
using SndfilePtr = std::unique_ptr<SNDFILE, SndfileCloser>;

// Note [libsndfile never holds a descriptor]
// libsndfile 1.2 closes the descriptor given to sf_open_fd when it refuses the file, even when
// asked not to (close_desc = SF_FALSE); the FileDescriptor that owns it then closes the same
// number again, which in a preprocessing worker closes whatever another thread opened under it
// meanwhile (a store's temporary, failing with "Bad file descriptor"). So libsndfile is given no
// descriptor at all: it reads and writes through these callbacks, which use pread/pwrite on a
// descriptor the caller owns and keep their own offset. Nothing libsndfile does can close it.
struct DescriptorIo {
  int fd;
  sf_count_t offset = 0;
};

sf_count_t io_length(void* user) {
  struct stat status {};
  if (::fstat(static_cast<DescriptorIo*>(user)->fd, &status) != 0) return -1;
  return static_cast<sf_count_t>(status.st_size);
}

sf_count_t io_seek(sf_count_t offset, int whence, void* user) {
  auto* io = static_cast<DescriptorIo*>(user);
  sf_count_t base = 0;
  if (whence == SEEK_CUR) base = io->offset;
  if (whence == SEEK_END) base = io_length(user);
  if (base < 0 || offset < -base) return -1;
  io->offset = base + offset;
  return io->offset;
}

// Moves `count` bytes at the offset with pread or pwrite, retrying short and interrupted calls.
template <class Buffer, class Transfer>
sf_count_t io_transfer(Buffer* buffer, sf_count_t count, void* user, Transfer transfer) {
  auto* io = static_cast<DescriptorIo*>(user);
  sf_count_t done = 0;
  while (done < count) {
    const ssize_t n = transfer(io->fd, buffer + done, static_cast<size_t>(count - done),
                               static_cast<off_t>(io->offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += n;
  }
  io->offset += done;
  return done;
}

sf_count_t io_read(void* buffer, sf_count_t count, void* user) {
  return io_transfer(static_cast<char*>(buffer), count, user, ::pread);
}

sf_count_t io_write(const void* buffer, sf_count_t count, void* user) {
  return io_transfer(static_cast<const char*>(buffer), count, user, ::pwrite);
}

sf_count_t io_tell(void* user) { return static_cast<DescriptorIo*>(user)->offset; }

// Opens the file behind `io` (which must outlive the result); nullptr when libsndfile refuses it.
SndfilePtr open_sound(DescriptorIo& io, int mode, SF_INFO& info) {
  static SF_VIRTUAL_IO callbacks{io_length, io_seek, io_read, io_write, io_tell};
  return SndfilePtr(sf_open_virtual(&callbacks, mode, &info, &io));
}

std::vector<float> to_mono(const std::vector<float>& interleaved, int64_t frames, int channels,
                           config::Channels mode, const std::string& path) {
  if (channels == 1) return interleaved;
  TTS_CHECK(mode != config::Channels::kError,
            "{}: expected mono audio, found {} channels (audio.channels = error); convert the file "
            "or set audio.channels to mix or first",
            path, channels);
  std::vector<float> mono(frames);
  for (int64_t i = 0; i < frames; ++i) {
    const float* frame = interleaved.data() + i * channels;
    if (mode == config::Channels::kFirst) {
      mono[i] = frame[0];
    } else {
      double sum = 0;
      for (int c = 0; c < channels; ++c) sum += frame[c];
      mono[i] = static_cast<float>(sum / channels);
    }
  }
  return mono;
}

}  // namespace

std::vector<float> read_audio(const std::string& path, const config::AudioOptions& options,
                              int* original_rate) {
  // A corpus's files may be links its owner made; FIFOs and devices are refused without blocking.
  const FileDescriptor fd = open_regular_file_for_read(path, Symlinks::kFollow);
  SF_INFO info{};
  DescriptorIo io{fd.get()};
  SndfilePtr file = open_sound(io, SFM_READ, info);
  TTS_CHECK(file != nullptr,
            "{}: cannot read audio: {} (expected WAV, FLAC or OGG readable by libsndfile)", path,
            sf_strerror(nullptr));
  TTS_CHECK(info.frames > 0 && info.channels > 0,
            "{}: the audio file holds no samples (0 frames); re-record or drop the file", path);
  TTS_CHECK(info.samplerate >= kMinSampleRate && info.samplerate <= kMaxSampleRate,
            "{}: the header declares a sample rate of {} Hz; expected {} to {} Hz (speech is "
            "recorded at 8 to 48 kHz); the file is damaged or not speech",
            path, info.samplerate, kMinSampleRate, kMaxSampleRate);
  TTS_CHECK(info.channels <= kMaxChannels,
            "{}: the header declares {} channels; expected at most {} (convert the file to mono)",
            path, info.channels, kMaxChannels);
  const int64_t max_frames = kMaxClipSeconds * info.samplerate;
  TTS_CHECK(info.frames <= max_frames,
            "{}: the header announces {} frames ({:.0f} s at {} Hz); clips longer than {} s are "
            "refused (training utterances last seconds): split the file, or it is damaged",
            path, info.frames, static_cast<double>(info.frames) / info.samplerate, info.samplerate,
            kMaxClipSeconds);
  const int64_t samples = info.frames * info.channels;  // < 2^38: both bounded above
  TTS_CHECK(samples <= kMaxDecodedSamples,
            "{}: the header announces {} frames x {} channels = {} samples; a clip may decode to "
            "at most {} (600 s of 48 kHz mono): split the file or convert it to mono",
            path, info.frames, info.channels, samples, kMaxDecodedSamples);
  if (int64_t bytes = pcm_bytes_per_sample(info.format); bytes > 0) {
    const int64_t needed = samples * bytes;
    const int64_t size = file_size(fd, path);
    TTS_CHECK(needed <= size,
              "{}: truncated audio: the header announces {} frames x {} channels ({} bytes of "
              "samples), the file has {} bytes; re-export the file",
              path, info.frames, info.channels, needed, size);
  }
  // Integer PCM of any width reads as x / 2^(bits-1), the int16/32768 convention. Decoding
  // follows the frames really decoded, block by block, never past the count checked above.
  sf_command(file.get(), SFC_SET_NORM_FLOAT, nullptr, SF_TRUE);
  std::vector<float> interleaved;
  sf_count_t read = 0;
  while (read < info.frames) {
    const sf_count_t want = std::min(kReadBlockFrames, info.frames - read);
    interleaved.resize(static_cast<size_t>((read + want) * info.channels));
    const sf_count_t got =
        sf_readf_float(file.get(), interleaved.data() + read * info.channels, want);
    if (got <= 0) break;
    read += got;
  }
  interleaved.resize(static_cast<size_t>(read * info.channels));
  TTS_CHECK(read == info.frames,
            "{}: truncated audio: the header announces {} frames, only {} could be read", path,
            info.frames, read);
  for (size_t i = 0; i < interleaved.size(); ++i) {
    TTS_CHECK(std::isfinite(interleaved[i]),
              "{}: sample {} is {}; the file holds non-finite float samples", path,
              i / info.channels, interleaved[i]);
  }
  std::vector<float> mono =
      to_mono(interleaved, info.frames, info.channels, options.channels, path);
  if (original_rate != nullptr) *original_rate = info.samplerate;
  if (info.samplerate == options.sample_rate) return mono;
  log::get("audio")->debug("{}: resampling {} Hz -> {} Hz", path, info.samplerate,
                           options.sample_rate);
  try {
    return resample(mono, info.samplerate, options.sample_rate);
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", path, e.what()));
  }
}

std::vector<float> resample(const std::vector<float>& samples, int from_rate, int to_rate) {
  TTS_CHECK(from_rate > 0 && to_rate > 0, "resampling {} Hz -> {} Hz: rates must be positive",
            from_rate, to_rate);
  if (from_rate == to_rate || samples.empty()) return samples;
  const double ratio = static_cast<double>(to_rate) / from_rate;
  std::vector<float> out(static_cast<size_t>(std::ceil(samples.size() * ratio)) + 1);
  size_t done = 0;
  soxr_io_spec_t io = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I);
  soxr_quality_spec_t quality = soxr_quality_spec(SOXR_HQ, 0);
  soxr_error_t error = soxr_oneshot(from_rate, to_rate, 1, samples.data(), samples.size(), nullptr,
                                    out.data(), out.size(), &done, &io, &quality, nullptr);
  TTS_CHECK(error == nullptr, "resampling {} Hz -> {} Hz failed: {}", from_rate, to_rate,
            error == nullptr ? "" : error);
  out.resize(std::min(done, static_cast<size_t>(std::llround(samples.size() * ratio))));
  return out;
}

namespace {

// A sample as 16-bit PCM before clipping: x * 32768, rounded.
double pcm_value(float x) { return std::round(static_cast<double>(x) * 32768.0); }

}  // namespace

int16_t pcm16(float x) {
  TTS_CHECK(std::isfinite(x), "cannot write the sample {} as 16-bit PCM", x);
  return static_cast<int16_t>(std::clamp(pcm_value(x), -32768.0, 32767.0));
}

size_t clipped_samples(const std::vector<float>& samples) {
  return static_cast<size_t>(std::count_if(samples.begin(), samples.end(), [](float x) {
    const double scaled = pcm_value(x);
    return !(scaled >= -32768.0 && scaled <= 32767.0);
  }));
}

void write_wav(const std::string& path, const std::vector<float>& samples, int sample_rate) {
  std::vector<int16_t> pcm(samples.size());
  for (size_t i = 0; i < samples.size(); ++i) {
    TTS_CHECK(std::isfinite(samples[i]), "{}: cannot write sample {} = {}", path, i, samples[i]);
    pcm[i] = static_cast<int16_t>(std::clamp(pcm_value(samples[i]), -32768.0, 32767.0));
  }
  SF_INFO info{};
  info.samplerate = sample_rate;
  info.channels = 1;
  info.format = SF_FORMAT_WAV | SF_FORMAT_PCM_16;
  AtomicFile out(path);
  {
    DescriptorIo io{out.fd().get()};
    SndfilePtr file = open_sound(io, SFM_WRITE, info);
    TTS_CHECK(file != nullptr, "{}: cannot write WAV: {}", path, sf_strerror(nullptr));
    sf_count_t written =
        sf_write_short(file.get(), pcm.data(), static_cast<sf_count_t>(pcm.size()));
    TTS_CHECK(written == static_cast<sf_count_t>(pcm.size()), "{}: wrote {} of {} samples: {}",
              path, written, pcm.size(), sf_strerror(file.get()));
  }
  out.commit();
}

}  // namespace tts::audio

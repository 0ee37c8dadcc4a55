#include "tts/audio/audio_io.h"

#include <sndfile.h>
#include <soxr.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "tts/core/error.h"
#include "tts/core/logging.h"

namespace tts::audio {
namespace {

struct SndfileCloser {
  void operator()(SNDFILE* file) const { sf_close(file); }
};
using SndfilePtr = std::unique_ptr<SNDFILE, SndfileCloser>;

std::vector<float> to_mono(const std::vector<float>& interleaved, int64_t frames, int channels,
                           const std::string& mode, const std::string& path) {
  if (channels == 1) return interleaved;
  TTS_CHECK(mode != "error",
            "{}: expected mono audio, found {} channels (audio.channels = error); convert the file "
            "or set audio.channels to mix or first",
            path, channels);
  std::vector<float> mono(frames);
  for (int64_t i = 0; i < frames; ++i) {
    const float* frame = interleaved.data() + i * channels;
    if (mode == "first") {
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
  std::error_code ec;
  TTS_CHECK(std::filesystem::exists(path, ec), "{}: no such audio file", path);
  TTS_CHECK(!std::filesystem::is_directory(path, ec),
            "{}: expected an audio file, found a directory", path);
  SF_INFO info{};
  SndfilePtr file(sf_open(path.c_str(), SFM_READ, &info));
  TTS_CHECK(file != nullptr,
            "{}: cannot read audio: {} (expected WAV, FLAC or OGG readable by libsndfile)", path,
            sf_strerror(nullptr));
  TTS_CHECK(info.frames > 0 && info.channels > 0,
            "{}: the audio file holds no samples (0 frames); re-record or drop the file", path);
  TTS_CHECK(info.samplerate > 0, "{}: invalid sample rate {} in the header", path, info.samplerate);
  // Integer PCM of any width reads as x / 2^(bits-1), the int16/32768 convention.
  sf_command(file.get(), SFC_SET_NORM_FLOAT, nullptr, SF_TRUE);
  std::vector<float> interleaved(static_cast<size_t>(info.frames) * info.channels);
  sf_count_t read = sf_readf_float(file.get(), interleaved.data(), info.frames);
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

void write_wav(const std::string& path, const std::vector<float>& samples, int sample_rate) {
  std::vector<int16_t> pcm(samples.size());
  for (size_t i = 0; i < samples.size(); ++i) {
    TTS_CHECK(std::isfinite(samples[i]), "{}: cannot write sample {} = {}", path, i, samples[i]);
    double scaled = std::round(static_cast<double>(samples[i]) * 32768.0);
    pcm[i] = static_cast<int16_t>(std::clamp(scaled, -32768.0, 32767.0));
  }
  const std::string temporary = fmt::format("{}.tmp.{}", path, getpid());
  SF_INFO info{};
  info.samplerate = sample_rate;
  info.channels = 1;
  info.format = SF_FORMAT_WAV | SF_FORMAT_PCM_16;
  {
    SndfilePtr file(sf_open(temporary.c_str(), SFM_WRITE, &info));
    TTS_CHECK(file != nullptr, "{}: cannot write WAV: {} (does the directory exist?)", path,
              sf_strerror(nullptr));
    sf_count_t written =
        sf_write_short(file.get(), pcm.data(), static_cast<sf_count_t>(pcm.size()));
    if (written != static_cast<sf_count_t>(pcm.size())) {
      std::remove(temporary.c_str());
      throw Error(fmt::format("{}: wrote {} of {} samples: {}", path, written, pcm.size(),
                              sf_strerror(file.get())));
    }
  }
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec) {
    std::remove(temporary.c_str());
    throw Error(
        fmt::format("{}: cannot rename the written WAV into place: {}", path, ec.message()));
  }
}

}  // namespace tts::audio

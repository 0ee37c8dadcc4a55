#include "tts/audio/audio_processor.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>

#include "tts/audio/audio_io.h"
#include "tts/core/error.h"

namespace tts::audio {
namespace {

// Griffin-Lim output above this peak is scaled down to it.
constexpr float kMaxPeak = 0.99f;

const config::AudioOptions& validated(const config::AudioOptions& options) {
  options.validate();
  return options;
}

}  // namespace

AudioProcessor::AudioProcessor(const config::AudioOptions& options)
    : options_(validated(options)),
      trimmer_(options.trim_top_db, options.trim_frame_length, options.trim_hop_length),
      preemphasis_(options.preemphasis),
      stft_(options),
      filterbank_(options),
      compression_(options),
      griffin_lim_(stft_, options.griffin_lim_iters) {}

Features AudioProcessor::compute(const std::vector<float>& samples, bool with_linear,
                                 bool with_waveform) const {
  TTS_CHECK(!samples.empty(), "the audio holds no samples");
  for (size_t i = 0; i < samples.size(); ++i) {
    TTS_CHECK(std::isfinite(samples[i]), "sample {} is {}; audio must be finite", i, samples[i]);
  }
  int64_t start = 0;
  int64_t end = static_cast<int64_t>(samples.size());
  if (options_.trim) {
    TrimRange range;
    try {
      range = trimmer_.find(samples);
    } catch (const Error& e) {  // all silence
      throw UnusableAudio("silent", e.what());
    }
    start = range.start;
    end = range.end;
  }
  if (end - start < options_.n_fft) {
    throw UnusableAudio(
        "too short",
        fmt::format("audio shorter than one frame: {} samples{} but audio.n_fft = {}; drop the "
                    "clip{}",
                    end - start,
                    options_.trim ? fmt::format(" after trimming (of {})", samples.size()) : "",
                    options_.n_fft, options_.trim ? " or lower audio.trim_top_db" : ""));
  }
  std::vector<float> signal(samples.begin() + start, samples.begin() + end);
  torch::Tensor waveform;
  if (with_waveform) {
    waveform =
        torch::from_blob(signal.data(), {static_cast<int64_t>(signal.size())}, torch::kFloat32)
            .clone();
  }
  preemphasis_.apply(signal);
  // The CPU path on raw memory: FFTW magnitude, the mel bands, compression in place.
  torch::NoGradGuard no_grad;
  const int64_t n = static_cast<int64_t>(signal.size());
  torch::Tensor magnitude = torch::empty({stft_.n_frames(n), stft_.n_bins()}, torch::kFloat32);
  stft_.magnitude(signal.data(), n, options_.magnitude_power, magnitude.data_ptr<float>());
  Features features;
  features.mel = filterbank_.apply(magnitude);
  compression_.compress_in_place(features.mel.data_ptr<float>(), features.mel.numel());
  if (with_linear) {
    compression_.compress_in_place(magnitude.data_ptr<float>(), magnitude.numel());
    features.linear = magnitude;
  }
  features.n_samples = n;
  features.waveform = std::move(waveform);
  return features;
}

Features AudioProcessor::compute_file(const std::string& path, bool with_linear,
                                      bool with_waveform) const {
  std::vector<float> samples = read_audio(path, options_);
  try {
    return compute(samples, with_linear, with_waveform);
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", path, e.what()));
  }
}

std::vector<float> AudioProcessor::mel_to_wav(const torch::Tensor& mel) const {
  TTS_CHECK(mel.dim() == 2 && mel.size(1) == options_.n_mels,
            "mel to wav: expected a time-major [frames, {}] mel spectrogram (audio.n_mels), found "
            "shape {}{}",
            options_.n_mels, mel.sizes().vec(),
            mel.dim() == 2 && mel.size(0) == options_.n_mels ? "; transpose it" : "");
  torch::NoGradGuard no_grad;
  torch::Tensor linear_power =
      filterbank_.to_linear(compression_.decompress(mel.to(torch::kFloat32)), options_.mel_inverse);
  return magnitude_to_wav(linear_power.pow(1.0 / options_.magnitude_power));
}

std::vector<float> AudioProcessor::linear_to_wav(const torch::Tensor& linear) const {
  TTS_CHECK(
      linear.dim() == 2 && linear.size(1) == options_.n_linear(),
      "linear to wav: expected a time-major [frames, {}] linear spectrogram (audio.n_fft/2+1), "
      "found shape {}{}",
      options_.n_linear(), linear.sizes().vec(),
      linear.dim() == 2 && linear.size(0) == options_.n_linear() ? "; transpose it" : "");
  torch::NoGradGuard no_grad;
  torch::Tensor power = compression_.decompress(linear.to(torch::kFloat32));
  return magnitude_to_wav(power.pow(1.0 / options_.magnitude_power));
}

std::vector<float> AudioProcessor::magnitude_to_wav(const torch::Tensor& magnitude) const {
  TTS_CHECK(magnitude.size(0) >= 2, "griffin-lim: need at least 2 frames, found {}",
            magnitude.size(0));
  torch::Tensor target =
      options_.griffin_lim_power == 1.0 ? magnitude : magnitude.pow(options_.griffin_lim_power);
  torch::Tensor wav = griffin_lim_.reconstruct(target).to(torch::kCPU).contiguous();
  std::vector<float> samples(wav.data_ptr<float>(), wav.data_ptr<float>() + wav.numel());
  preemphasis_.invert(samples);
  float peak = 0.f;
  for (float s : samples) peak = std::max(peak, std::abs(s));
  if (peak > kMaxPeak) {
    for (float& s : samples) s *= kMaxPeak / peak;
  }
  return samples;
}

torch::Tensor padded_for_griffin_lim(const torch::Tensor& frames,
                                     const config::AudioOptions& audio) {
  TTS_CHECK(frames.dim() == 2 && frames.size(0) > 0,
            "the generated spectrogram is empty (0 frames): nothing to render");
  // Griffin-Lim's STFT needs n_fft samples: (frames - 1) * hop >= n_fft.
  const int64_t needed = (audio.n_fft + audio.hop_length - 1) / audio.hop_length + 1;
  if (frames.size(0) >= needed) return frames;
  auto pad = frames.min().expand({needed - frames.size(0), frames.size(1)});
  return torch::cat({frames, pad}, 0);
}

}  // namespace tts::audio

// Reading and writing waveforms. Samples are float, mono, scaled like int16/32768 (16-bit PCM
// reads into [-1, 1)); libsndfile handles WAV/FLAC/OGG (8/16/24/32-bit int and float), soxr
// (high quality) resamples files whose rate differs from the configured one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tts/config/audio_options.h"

namespace tts::audio {

// Reads `path`, mixes or picks channels per `options.channels` (mix averages, first keeps channel
// 0, error refuses multi-channel files) and resamples to `options.sample_rate`. `original_rate`
// (optional) receives the file's own rate, so callers can count resampled files. Throws tts::Error
// naming the file for a missing file, anything but a regular file (a FIFO is refused without
// blocking; a symlink is followed), unreadable or empty audio, NaN/Inf samples, and before reading
// any sample for a header outside the limits (docs/security.md: a rate outside 1-384 kHz, more
// than 32 channels, more than 600 s, more than 28.8 million samples, more samples than an
// uncompressed container can hold).
std::vector<float> read_audio(const std::string& path, const config::AudioOptions& options,
                              int* original_rate = nullptr);

// Resamples mono `samples` from `from_rate` to `to_rate` with soxr's high-quality preset.
std::vector<float> resample(const std::vector<float>& samples, int from_rate, int to_rate);

// Writes 16-bit PCM mono WAV (x * 32768, rounded, clipped to [-32768, 32767]) through an
// AtomicFile (fs.h), so a crash never leaves a partial file under `path` and a symlink there is
// refused. Throws tts::Error.
void write_wav(const std::string& path, const std::vector<float>& samples, int sample_rate);

// The 16-bit value write_wav writes for a sample: x * 32768, rounded, clipped to [-32768, 32767].
// Throws tts::Error for a sample that is not finite.
int16_t pcm16(float x);

// How many of `samples` write_wav clips: those whose 16-bit value would lie past full scale.
size_t clipped_samples(const std::vector<float>& samples);

}  // namespace tts::audio

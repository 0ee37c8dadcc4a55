// The frame analyses behind `tts-train evaluate` (docs/evaluate.md), plain C++ on doubles:
// mel-cepstra as pysptk computes them and YIN's F0 as librosa computes it, on the same frames.
//
// Note [Evaluation frames]: every analysis cuts the waveform at one rate (kSampleRate) into
// frames of kFrameLength samples every kHop samples, centred: the signal is padded with
// kFrameLength / 2 zeros on each side, so frame t is centred on sample t * kHop and a clip of L
// samples has 1 + L / kHop frames (librosa's center=True, pad_mode="constant"). The cepstra and
// the pitch of one clip therefore have the same frames, and one DTW path serves MCD, F0 RMSE and
// VDE.
#pragma once

#include <cstdint>
#include <vector>

namespace tts::eval {

constexpr int kSampleRate = 22050;         // pymcd's rate; every clip is resampled to it
constexpr int kFrameLength = 1024;         // 46 ms: the FFT size of the cepstra, YIN's frame
constexpr int kHop = 256;                  // 11.6 ms
constexpr int kCepstrumOrder = 13;         // c0..c13; MCD uses c1..c13
constexpr double kAllPass = 0.65;          // the frequency warping at 22050 Hz (pymcd's alpha)
constexpr double kFmin = 65.0;             // Hz: YIN's longest period, ceil(rate / kFmin) samples
constexpr double kFmax = 500.0;            // Hz: YIN's shortest period, floor(rate / kFmax) samples
constexpr double kYinThreshold = 0.1;      // the period pick (librosa.yin's trough_threshold)
constexpr double kVoicingThreshold = 0.5;  // voiced: a trough of the CMNDF below this

// How many frames a clip of `samples` samples has (Note [Evaluation frames]).
int64_t frame_count(int64_t samples);

// In-place radix-2 FFT of `re` + i `im` (the size a power of two), forward (e^{-2 pi i k n / N}).
void fft(std::vector<double>& re, std::vector<double>& im);

// Mel-cepstra [frames][kCepstrumOrder + 1] of `samples` (at kSampleRate): each frame weighted by
// a periodic Hann window, its power spectrum |X|^2 + 1e-8, the real cepstrum of its log (c0 and
// c_{N/2} halved) warped to kCepstrumOrder coefficients by SPTK's freqt with kAllPass. This is
// what pysptk.mcep(|X|, order=13, alpha=0.65, maxiter=0, etype=1, eps=1e-8, itype=3) returns
// (no Newton-Raphson iterations; tests/eval check it against pysptk's figures).
std::vector<std::vector<double>> mel_cepstra(const std::vector<float>& samples);

struct Pitch {
  std::vector<double> f0;       // Hz per frame: YIN's estimate, also for unvoiced frames
  std::vector<uint8_t> voiced;  // 1 where the frame is voiced
};

// YIN (de Cheveigné and Kawahara 2002) as librosa.yin computes it (librosa 0.11: the difference
// function 2 (r(0) - r(tau)) - sum_{i < tau} x_i^2 over the whole frame, its cumulative mean
// normalization, the first trough below kYinThreshold or else the global minimum, parabolic
// interpolation), on the frames of Note [Evaluation frames]. A frame is voiced when its
// normalized difference has a trough (a local minimum) below kVoicingThreshold; silence (all
// zeros) has none and white noise stays near 1.
Pitch yin(const std::vector<float>& samples);

}  // namespace tts::eval

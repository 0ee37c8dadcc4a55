// Config section `audio`: how waveforms become training targets. Names follow NVIDIA/tacotron2's
// hparams.py and Rayhane-mamah/Tacotron-2's hparams.py. Defaults are NVIDIA's LJSpeech setup.
#pragma once

#include <string>

#include "tts/config/field.h"

namespace tts::config {

// How multi-channel input becomes mono.
enum class Channels { kMix, kFirst, kError };
TTS_CHOICE_NAMES(Channels, {Channels::kMix, "mix"}, {Channels::kFirst, "first"},
                 {Channels::kError, "error"});
// Padding of a centered STFT's signal ends.
enum class PadMode { kReflect, kConstant };
TTS_CHOICE_NAMES(PadMode, {PadMode::kReflect, "reflect"}, {PadMode::kConstant, "constant"});
enum class MelScale { kSlaney, kHtk };
TTS_CHOICE_NAMES(MelScale, {MelScale::kSlaney, "slaney"}, {MelScale::kHtk, "htk"});
enum class MelNorm { kSlaney, kNone };
TTS_CHOICE_NAMES(MelNorm, {MelNorm::kSlaney, "slaney"}, {MelNorm::kNone, "none"});
enum class Compression { kLog, kDb };
TTS_CHOICE_NAMES(Compression, {Compression::kLog, "log"}, {Compression::kDb, "db"});
// How a mel becomes a linear spectrogram for Griffin-Lim.
enum class MelInverse { kNnls, kPinv };
TTS_CHOICE_NAMES(MelInverse, {MelInverse::kNnls, "nnls"}, {MelInverse::kPinv, "pinv"});

// Ceilings no real setup reaches: these numbers size buffers (FFT frames, filterbanks, the model's
// mel layers), so a file's config may not name sizes that exhaust memory.
// FFT, window, hop and trimming lengths: speech uses 256 to 2048 samples; 2^16 samples are 170 ms
// at 384 kHz, the highest sample rate read.
inline constexpr int kMaxFrameSamples = 65536;
// Mel channels: models use 80 to 128.
inline constexpr int kMaxMels = 1024;
// Griffin-Lim iterations: 30 to 100 in practice.
inline constexpr int kMaxGriffinLimIters = 10000;

struct AudioOptions {
  // Each field's meaning is documented once, in visit(); dumped configs carry it as a comment.
  int sample_rate = 22050;
  Channels channels = Channels::kMix;
  int n_fft = 1024;
  int hop_length = 256;
  int win_length = 1024;
  bool center = true;
  PadMode pad_mode = PadMode::kReflect;
  double magnitude_power = 1.0;
  int n_mels = 80;
  double fmin = 0.0;
  double fmax = 8000.0;
  MelScale mel_scale = MelScale::kSlaney;
  MelNorm mel_norm = MelNorm::kSlaney;
  double preemphasis = 0.0;
  bool trim = true;
  double trim_top_db = 60.0;
  int trim_frame_length = 2048;
  int trim_hop_length = 512;
  Compression compression = Compression::kLog;
  double log_floor = 1e-5;
  double min_level_db = -100.0;
  double ref_level_db = 20.0;
  bool signal_normalization = true;
  bool symmetric = true;
  double max_abs_value = 4.0;
  bool allow_clipping = true;
  bool linear = false;
  bool waveforms = false;
  MelInverse mel_inverse = MelInverse::kNnls;
  int griffin_lim_iters = 60;
  double griffin_lim_power = 1.5;

  template <class V>
  void visit(V& v) {
    v("sample_rate", sample_rate, "Hz; input files at other rates are resampled with soxr");
    v("channels", channels, "multi-channel input: mix (average), first, or error");
    v("n_fft", n_fft, "FFT size; linear targets have n_fft/2+1 bins");
    v("hop_length", hop_length, "samples between frames (frame shift)");
    v("win_length", win_length, "Hann window length, zero-padded to n_fft; <= n_fft");
    v("center", center, "pad the signal so frame t is centered at t*hop_length");
    v("pad_mode", pad_mode, "padding when centered: reflect or constant (zeros)");
    v("magnitude_power", magnitude_power, "|STFT| is raised to this power (1 magnitude, 2 power)");
    v("n_mels", n_mels, "mel channels");
    v("fmin", fmin, "lowest mel filter edge, Hz");
    v("fmax", fmax, "highest mel filter edge, Hz; <= sample_rate/2");
    v("mel_scale", mel_scale, "mel formula: slaney (librosa default) or htk");
    v("mel_norm", mel_norm, "filter normalization: slaney (area) or none");
    v("preemphasis", preemphasis, "pre-emphasis coefficient k in x[n]-k*x[n-1]; 0 = off");
    v("trim", trim, "trim leading/trailing silence like librosa.effects.trim");
    v("trim_top_db", trim_top_db, "trimming threshold in dB below the peak");
    v("trim_frame_length", trim_frame_length, "trimming analysis frame length, samples");
    v("trim_hop_length", trim_hop_length, "trimming analysis hop, samples");
    v("compression", compression, "log: ln(max(S, log_floor)) (NVIDIA); db: dB + normalization");
    v("log_floor", log_floor, "floor of the natural-log compression");
    v("min_level_db", min_level_db, "db compression: floor in dB");
    v("ref_level_db", ref_level_db, "db compression: reference level subtracted, dB");
    v("signal_normalization", signal_normalization,
      "db compression: map dB to [-max_abs_value, max_abs_value]");
    v("symmetric", symmetric, "normalization range symmetric (true) or [0, max_abs_value]");
    v("max_abs_value", max_abs_value, "normalization bound M");
    v("allow_clipping", allow_clipping, "clip normalized values to the range");
    v("linear", linear, "also produce linear-spectrogram targets (n_fft/2+1 bins)");
    v("waveforms", waveforms,
      "also keep the (trimmed, resampled) waveform each mel was computed from: what a vocoder "
      "trains on");
    v("mel_inverse", mel_inverse, "mel -> linear for synthesis: nnls or pinv");
    v("griffin_lim_iters", griffin_lim_iters, "Griffin-Lim iterations");
    v("griffin_lim_power", griffin_lim_power,
      "magnitudes are raised to this power before Griffin-Lim");
  }
  // Range and cross-field rules; throws UsageError naming the key path ("audio.win_length").
  void validate() const;
  int n_linear() const { return n_fft / 2 + 1; }
};

}  // namespace tts::config

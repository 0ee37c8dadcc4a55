#include "tts/config/audio_options.h"

namespace tts::config {

void AudioOptions::validate() const {
  require(sample_rate >= 1000 && sample_rate <= 384000, "audio.sample_rate", sample_rate,
          "must be between 1000 and 384000 Hz");
  require(n_fft >= 16, "audio.n_fft", n_fft, "must be at least 16");
  require(hop_length >= 1, "audio.hop_length", hop_length, "must be at least 1");
  require(win_length >= 1, "audio.win_length", win_length, "must be at least 1");
  constexpr const char* kFrameWhy = "speech uses 256 to 2048 samples";
  require_at_most("audio.n_fft", n_fft, kMaxFrameSamples, kFrameWhy);
  require_at_most("audio.hop_length", hop_length, kMaxFrameSamples, kFrameWhy);
  require_at_most("audio.trim_frame_length", trim_frame_length, kMaxFrameSamples, kFrameWhy);
  require_at_most("audio.trim_hop_length", trim_hop_length, kMaxFrameSamples, kFrameWhy);
  require_at_most("audio.n_mels", n_mels, kMaxMels, "models use 80 to 128 mel channels");
  require_at_most("audio.griffin_lim_iters", griffin_lim_iters, kMaxGriffinLimIters,
                  "30 to 100 iterations suffice");
  require(win_length <= n_fft, "audio.win_length", win_length,
          fmt::format("must be <= audio.n_fft ({}); lower win_length or raise n_fft", n_fft));
  require(magnitude_power > 0, "audio.magnitude_power", magnitude_power, "must be > 0");
  require(n_mels >= 1, "audio.n_mels", n_mels, "must be at least 1");
  require(fmin >= 0, "audio.fmin", fmin, "must be >= 0 Hz");
  require(fmax > fmin, "audio.fmax", fmax, fmt::format("must be > audio.fmin ({})", fmin));
  require(fmax <= sample_rate / 2.0, "audio.fmax", fmax,
          fmt::format("must be <= audio.sample_rate/2 ({}) (the Nyquist frequency)",
                      sample_rate / 2.0));
  require(preemphasis >= 0 && preemphasis < 1, "audio.preemphasis", preemphasis,
          "must be in [0, 1) (0 turns it off)");
  require(trim_top_db > 0, "audio.trim_top_db", trim_top_db, "must be > 0 dB");
  require(trim_frame_length >= 1, "audio.trim_frame_length", trim_frame_length,
          "must be at least 1");
  require(trim_hop_length >= 1, "audio.trim_hop_length", trim_hop_length, "must be at least 1");
  require(log_floor > 0, "audio.log_floor", log_floor, "must be > 0");
  require(min_level_db < 0, "audio.min_level_db", min_level_db, "must be < 0 dB");
  require(max_abs_value > 0, "audio.max_abs_value", max_abs_value, "must be > 0");
  require(griffin_lim_iters >= 1, "audio.griffin_lim_iters", griffin_lim_iters,
          "must be at least 1");
  require(griffin_lim_power > 0, "audio.griffin_lim_power", griffin_lim_power, "must be > 0");
}

}  // namespace tts::config

// Config section `wavenet`: the WaveNet vocoder (model.kind: wavenet). Names and defaults follow
// r9y9/wavenet_vocoder's hparams (egs/mol/conf/mol_wavenet.json); its optimizer and schedule
// (optimizer_params, lr_schedule_kwargs, batch_size) live in section `train`, its audio settings
// in section `audio`.
#pragma once

#include <vector>

#include "tts/config/field.h"

namespace tts::config {

// What the network's output parameterizes: a discretized mixture of logistics or of Gaussians.
enum class WavenetOutput { kLogistic, kNormal };
TTS_CHOICE_NAMES(WavenetOutput, {WavenetOutput::kLogistic, "Logistic"},
                 {WavenetOutput::kNormal, "Normal"});
// The waveform's form at the network's input (r9y9's input_type). Only raw is supported: r9y9's
// mulaw and mulaw-quantize are refused (import_r9y9 says why).
enum class WavenetInput { kRaw };
TTS_CHOICE_NAMES(WavenetInput, {WavenetInput::kRaw, "raw"});

// Ceilings no real WaveNet reaches (they size the network's weights and a batch's audio).
inline constexpr int kMaxWavenetLayers = 1024;
inline constexpr int kMaxWavenetChannels = 8192;
inline constexpr int kMaxTimeSteps = 1 << 22;
// Rows of the speaker embedding: multi-speaker corpora have hundreds to a few thousand speakers.
inline constexpr int kMaxWavenetSpeakers = 65536;

struct WavenetOptions {
  // Each field's meaning is documented once, in visit(); dumped configs carry it as a comment.
  WavenetInput input_type = WavenetInput::kRaw;
  int out_channels = 30;
  int layers = 24;
  int stacks = 4;
  int residual_channels = 128;
  int gate_channels = 256;
  int skip_out_channels = 128;
  double dropout = 0.0;
  int kernel_size = 3;
  int cin_pad = 2;
  std::vector<int> upsample_scales{4, 4, 4, 4};
  int freq_axis_kernel_size = 1;
  int gin_channels = -1;
  int n_speakers = 7;
  bool use_speaker_embedding = true;
  WavenetOutput output_distribution = WavenetOutput::kLogistic;
  double log_scale_min = -16.0;
  int quantize_channels = 65536;
  int max_time_steps = 10240;
  bool exponential_moving_average = true;
  double ema_decay = 0.9999;

  template <class V>
  void visit(V& v) {
    v("input_type", input_type,
      "waveform at the input: raw, in [-1, 1] (r9y9's mulaw kinds are not supported)");
    v("out_channels", out_channels,
      "output channels: 3 per mixture component; Normal also 2 (one Gaussian, no weight)");
    v("layers", layers, "dilated residual layers in all");
    v("stacks", stacks, "dilation cycles: layer i has dilation 2^(i mod (layers/stacks))");
    v("residual_channels", residual_channels, "channels of the residual path");
    v("gate_channels", gate_channels, "channels of the gated convolution (split in two halves)");
    v("skip_out_channels", skip_out_channels, "channels of the skip connections");
    v("dropout", dropout, "dropout probability before each dilated convolution, in training");
    v("kernel_size", kernel_size, "kernel of the dilated convolutions");
    v("cin_pad", cin_pad, "mel frames of context on each side of a training window");
    v("upsample_scales", upsample_scales,
      "the conditioning upsampler's scales; their product is audio.hop_length");
    v("freq_axis_kernel_size", freq_axis_kernel_size,
      "mel-axis taps of the upsampler's 2-d convolutions (odd; 1: time axis only)");
    v("gin_channels", gin_channels, "global (speaker) conditioning channels; <= 0 disables it");
    v("n_speakers", n_speakers, "speakers the embedding holds (with gin_channels > 0)");
    v("use_speaker_embedding", use_speaker_embedding,
      "global conditioning from speaker ids through an embedding (else from given features)");
    v("output_distribution", output_distribution, "Logistic or Normal mixture");
    v("log_scale_min", log_scale_min, "floor of the mixture components' log scale");
    v("quantize_channels", quantize_channels, "discretization levels of the mixture's likelihood");
    v("max_time_steps", max_time_steps,
      "samples of audio per training window (a multiple of audio.hop_length)");
    v("exponential_moving_average", exponential_moving_average,
      "keep an exponential moving average of the weights (what synthesis uses)");
    v("ema_decay", ema_decay, "decay of the moving average");
  }
  void validate() const;
};

}  // namespace tts::config

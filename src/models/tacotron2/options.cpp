#include "tts/models/tacotron2/options.h"

namespace tts::config {
namespace {

void require_positive(const char* key, int value) {
  require(value >= 1, key, value, "must be at least 1");
}

void require_width(const char* key, int value) {
  require_positive(key, value);
  require_at_most(key, value, kMaxModelWidth, "NVIDIA's widest layers have 1024 units");
}

void require_layers(const char* key, int value) {
  require_at_most(key, value, kMaxLayers, "NVIDIA's deepest stack has 5 layers");
}

void require_odd(const char* key, int value) {
  require(value >= 1 && value % 2 == 1, key, value,
          "must be an odd number >= 1 (so that convolutions keep the length)");
  require_at_most(key, value, kMaxKernelSize, "NVIDIA's longest kernel has 31 taps");
}

void require_probability(const char* key, double value) {
  require(value >= 0 && value < 1, key, value, "must be a dropout probability in [0, 1)");
}

}  // namespace

void Tacotron2Options::validate() const {
  require_width("model.symbols_embedding_dim", symbols_embedding_dim);
  require_odd("model.encoder_kernel_size", encoder_kernel_size);
  require_positive("model.encoder_n_convolutions", encoder_n_convolutions);
  require_layers("model.encoder_n_convolutions", encoder_n_convolutions);
  require(encoder_embedding_dim >= 2 && encoder_embedding_dim % 2 == 0,
          "model.encoder_embedding_dim", encoder_embedding_dim,
          "must be even (half per BiLSTM direction)");
  require_at_most("model.encoder_embedding_dim", encoder_embedding_dim, kMaxModelWidth,
                  "NVIDIA's widest layers have 1024 units");
  require_probability("model.p_encoder_dropout", p_encoder_dropout);
  require_positive("model.n_frames_per_step", n_frames_per_step);
  require_at_most("model.n_frames_per_step", n_frames_per_step, kMaxFramesPerStep,
                  "Tacotron predicts 1 to 5 frames a step");
  require_width("model.decoder_rnn_dim", decoder_rnn_dim);
  require_width("model.prenet_dim", prenet_dim);
  require_probability("model.p_prenet_dropout", p_prenet_dropout);
  require_positive("model.max_decoder_steps", max_decoder_steps);
  require_at_most("model.max_decoder_steps", max_decoder_steps, kMaxDecoderSteps,
                  "100,000 steps are about 19 minutes of speech");
  require(gate_threshold > 0 && gate_threshold < 1, "model.gate_threshold", gate_threshold,
          "must be in (0, 1)");
  require_probability("model.p_attention_dropout", p_attention_dropout);
  require_probability("model.p_decoder_dropout", p_decoder_dropout);
  require_width("model.attention_rnn_dim", attention_rnn_dim);
  require_width("model.attention_dim", attention_dim);
  require_width("model.attention_location_n_filters", attention_location_n_filters);
  require_odd("model.attention_location_kernel_size", attention_location_kernel_size);
  require_width("model.postnet_embedding_dim", postnet_embedding_dim);
  require_odd("model.postnet_kernel_size", postnet_kernel_size);
  require_positive("model.postnet_n_convolutions", postnet_n_convolutions);
  require_layers("model.postnet_n_convolutions", postnet_n_convolutions);
  require_probability("model.p_postnet_dropout", p_postnet_dropout);
  require_positive("model.cbhg_kernels", cbhg_kernels);
  require_layers("model.cbhg_kernels", cbhg_kernels);
  require_width("model.cbhg_conv_channels", cbhg_conv_channels);
  require_width("model.cbhg_projection_dim", cbhg_projection_dim);
  require(cbhg_highway_layers >= 0, "model.cbhg_highway_layers", cbhg_highway_layers,
          "must be >= 0");
  require_layers("model.cbhg_highway_layers", cbhg_highway_layers);
  require_width("model.cbhg_rnn_units", cbhg_rnn_units);
  require(speakers >= 0, "model.speakers", speakers,
          "must be >= 0 (0: a one-speaker model without speaker input)");
  require_at_most("model.speakers", speakers, kMaxSpeakers,
                  "LibriTTS, among the largest corpora, has about 2,500 speakers");
  require_width("model.speaker_embedding_dim", speaker_embedding_dim);
}

}  // namespace tts::config

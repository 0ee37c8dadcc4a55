#include "tts/config/model_options.h"

namespace tts::config {
namespace {

void require_positive(const char* key, int value) {
  require(value >= 1, key, value, "must be at least 1");
}

void require_odd(const char* key, int value) {
  require(value >= 1 && value % 2 == 1, key, value,
          "must be an odd number >= 1 (so that convolutions keep the length)");
}

void require_probability(const char* key, double value) {
  require(value >= 0 && value < 1, key, value, "must be a dropout probability in [0, 1)");
}

}  // namespace

void ModelOptions::validate() const {
  require_positive("model.symbols_embedding_dim", symbols_embedding_dim);
  require_odd("model.encoder_kernel_size", encoder_kernel_size);
  require_positive("model.encoder_n_convolutions", encoder_n_convolutions);
  require(encoder_embedding_dim >= 2 && encoder_embedding_dim % 2 == 0,
          "model.encoder_embedding_dim", encoder_embedding_dim,
          "must be even (half per BiLSTM direction)");
  require_probability("model.p_encoder_dropout", p_encoder_dropout);
  require_positive("model.n_frames_per_step", n_frames_per_step);
  require_positive("model.decoder_rnn_dim", decoder_rnn_dim);
  require_positive("model.prenet_dim", prenet_dim);
  require_probability("model.p_prenet_dropout", p_prenet_dropout);
  require_positive("model.max_decoder_steps", max_decoder_steps);
  require(gate_threshold > 0 && gate_threshold < 1, "model.gate_threshold", gate_threshold,
          "must be in (0, 1)");
  require_probability("model.p_attention_dropout", p_attention_dropout);
  require_probability("model.p_decoder_dropout", p_decoder_dropout);
  require_positive("model.attention_rnn_dim", attention_rnn_dim);
  require_positive("model.attention_dim", attention_dim);
  require_positive("model.attention_location_n_filters", attention_location_n_filters);
  require_odd("model.attention_location_kernel_size", attention_location_kernel_size);
  require_positive("model.postnet_embedding_dim", postnet_embedding_dim);
  require_odd("model.postnet_kernel_size", postnet_kernel_size);
  require_positive("model.postnet_n_convolutions", postnet_n_convolutions);
  require_probability("model.p_postnet_dropout", p_postnet_dropout);
  require_positive("model.cbhg_kernels", cbhg_kernels);
  require_positive("model.cbhg_conv_channels", cbhg_conv_channels);
  require_positive("model.cbhg_projection_dim", cbhg_projection_dim);
  require(cbhg_highway_layers >= 0, "model.cbhg_highway_layers", cbhg_highway_layers,
          "must be >= 0");
  require_positive("model.cbhg_rnn_units", cbhg_rnn_units);
}

}  // namespace tts::config

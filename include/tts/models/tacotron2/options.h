// Tacotron-2's options, the fields of config section `model` after `kind`
// (models/family_sections.h). Names and defaults follow NVIDIA/tacotron2's hparams.py; the optional
// linear head (predict_linear) is a CBHG as in Rayhane-mamah/Tacotron-2.
#pragma once

#include <string>

#include "tts/config/field.h"

namespace tts::config {

// Ceilings no real Tacotron-2 reaches: these numbers size the model's weights, so a checkpoint's
// config may not name a model that exhausts memory (the constructor also refuses a model past
// tacotron2::kMaxParameterBytes as a whole).
// A layer's width: NVIDIA's widest are its 1024-unit LSTMs.
inline constexpr int kMaxModelWidth = 8192;
// A convolution's kernel: NVIDIA's longest is the location features' 31 taps.
inline constexpr int kMaxKernelSize = 255;
// Stacked layers (convolutions, CBHG bank kernels and highways): NVIDIA's deepest stack is 5.
inline constexpr int kMaxLayers = 64;
// Frames per decoder step (r): Tacotron uses 1 to 5.
inline constexpr int kMaxFramesPerStep = 32;
// Decoder steps at inference: NVIDIA's 1000 is 11.6 s at r = 1; 100,000 is about 19 minutes.
inline constexpr int kMaxDecoderSteps = 100000;
// Rows of the speaker embedding: VCTK has 110 speakers, LibriTTS about 2,500.
inline constexpr int kMaxSpeakers = 10000;

// How the CPU's recurrent per-step products run (see model.recurrent_products).
enum class RecurrentProducts { kKernel, kGemm, kFastest };
TTS_CHOICE_NAMES(RecurrentProducts, {RecurrentProducts::kKernel, "kernel"},
                 {RecurrentProducts::kGemm, "gemm"}, {RecurrentProducts::kFastest, "fastest"});
// How Tacotron-2's decoder runs a step where the fused node applies (model.decoder_step): fused
// where its kernels have been checked (the CPU; CUDA runs composed), fused_cuda also with its CUDA
// kernels, which no GPU has run yet, or composed. The model resolves it once for its device
// (tacotron2::decoder_step_for).
enum class DecoderStep { kFused, kFusedCuda, kComposed };
TTS_CHOICE_NAMES(DecoderStep, {DecoderStep::kFused, "fused"},
                 {DecoderStep::kFusedCuda, "fused_cuda"}, {DecoderStep::kComposed, "composed"});
struct Tacotron2Options {
  // Each field's meaning is documented once, in visit(); dumped configs carry it as a comment.
  int symbols_embedding_dim = 512;
  int encoder_kernel_size = 5;
  int encoder_n_convolutions = 3;
  int encoder_embedding_dim = 512;
  double p_encoder_dropout = 0.5;
  int n_frames_per_step = 1;
  int decoder_rnn_dim = 1024;
  int prenet_dim = 256;
  double p_prenet_dropout = 0.5;
  int max_decoder_steps = 1000;
  double gate_threshold = 0.5;
  double p_attention_dropout = 0.1;
  double p_decoder_dropout = 0.1;
  int attention_rnn_dim = 1024;
  int attention_dim = 128;
  int attention_location_n_filters = 32;
  int attention_location_kernel_size = 31;
  int postnet_embedding_dim = 512;
  int postnet_kernel_size = 5;
  int postnet_n_convolutions = 5;
  double p_postnet_dropout = 0.5;
  bool zero_padding_in_convolutions = true;
  bool nvidia_postnet_gradient = false;
  bool predict_linear = false;
  int cbhg_kernels = 8;
  int cbhg_conv_channels = 128;
  int cbhg_projection_dim = 256;
  int cbhg_highway_layers = 4;
  int cbhg_rnn_units = 128;
  int speakers = 0;
  int speaker_embedding_dim = 64;
  // How the network computes, not what: the same weights train and speak either way.
  RecurrentProducts recurrent_products = RecurrentProducts::kKernel;
  DecoderStep decoder_step = DecoderStep::kFused;

  template <class V>
  void visit(V& v) {
    v("symbols_embedding_dim", symbols_embedding_dim, "character embedding size");
    v("encoder_kernel_size", encoder_kernel_size, "encoder convolution kernel (odd)");
    v("encoder_n_convolutions", encoder_n_convolutions, "encoder conv+batchnorm+ReLU layers");
    v("encoder_embedding_dim", encoder_embedding_dim,
      "encoder output size (BiLSTM, half per direction; even)");
    v("p_encoder_dropout", p_encoder_dropout, "dropout after each encoder convolution");
    v("n_frames_per_step", n_frames_per_step, "r: mel frames predicted per decoder step");
    v("decoder_rnn_dim", decoder_rnn_dim, "decoder LSTM cell size");
    v("prenet_dim", prenet_dim, "prenet layer size (2 layers)");
    v("p_prenet_dropout", p_prenet_dropout, "prenet dropout, on in training and inference");
    v("max_decoder_steps", max_decoder_steps, "inference stops after this many decoder steps");
    v("gate_threshold", gate_threshold, "inference stops when the stop probability exceeds this");
    v("p_attention_dropout", p_attention_dropout, "dropout on the attention LSTM output");
    v("p_decoder_dropout", p_decoder_dropout, "dropout on the decoder LSTM output");
    v("attention_rnn_dim", attention_rnn_dim, "attention LSTM cell size");
    v("attention_dim", attention_dim, "attention projection size");
    v("attention_location_n_filters", attention_location_n_filters,
      "location-feature convolution filters");
    v("attention_location_kernel_size", attention_location_kernel_size,
      "location-feature convolution kernel (odd)");
    v("postnet_embedding_dim", postnet_embedding_dim, "postnet channels");
    v("postnet_kernel_size", postnet_kernel_size, "postnet convolution kernel (odd)");
    v("postnet_n_convolutions", postnet_n_convolutions, "postnet layers");
    v("p_postnet_dropout", p_postnet_dropout, "dropout after each postnet convolution");
    v("zero_padding_in_convolutions", zero_padding_in_convolutions,
      "zero padded positions before each encoder and postnet convolution, so that an item's "
      "outputs do not depend on the batch's padding (what W ranks x B = 1 x W*B and exact resume "
      "rest on); false: as NVIDIA's model.py, whose convolutions (and BatchNorm statistics) see "
      "the padding's values: NVIDIA's outputs for a padded batch");
    v("nvidia_postnet_gradient", nvidia_postnet_gradient,
      "training with zero_padding_in_convolutions false: the postnet's first convolution takes "
      "its weight gradient from the decoder's outputs with the padded frames zeroed, as NVIDIA's "
      "training does (its mask_padding zeroes them in place after the postnet read them); only "
      "for reproducing NVIDIA's updates");
    v("predict_linear", predict_linear, "add a CBHG head predicting linear targets from mels");
    v("cbhg_kernels", cbhg_kernels, "CBHG: convolution bank kernel sizes 1..K");
    v("cbhg_conv_channels", cbhg_conv_channels, "CBHG: channels of each bank convolution");
    v("cbhg_projection_dim", cbhg_projection_dim, "CBHG: projection convolution channels");
    v("cbhg_highway_layers", cbhg_highway_layers, "CBHG: highway layers");
    v("cbhg_rnn_units", cbhg_rnn_units, "CBHG: GRU units per direction");
    v("speakers", speakers,
      "rows of the speaker embedding: 0 = a one-speaker model without speaker input (a store's "
      "speakers are then ignored); N >= 1 = a table of N speakers (at least the store's), each "
      "row initialized to zeros, projected to encoder_embedding_dim and added to every encoder "
      "output frame (docs/training.md, \"Several speakers\")");
    v("speaker_embedding_dim", speaker_embedding_dim,
      "size of a speaker embedding row (used when speakers >= 1)");
    v("recurrent_products", recurrent_products,
      "CPU: how the recurrent per-step products run: kernel (our small-batch kernel wherever it "
      "applies, up to 128 rows, else the BLAS) or gemm (always the BLAS): one path, so runs, "
      "ranks and resumed runs round alike; fastest (each shape timed once per process against "
      "the BLAS: two processes may choose differently, so a resumed run or another rank may "
      "round differently)");
    v("decoder_step", decoder_step,
      "the attention decoder's recurrent step as one autograd node (fused: its attention LSTM, "
      "attention and decoder LSTM forward in one call and backward in one node, on the CPU; "
      "CUDA runs composed), also on CUDA with its own kernels, which no GPU has run yet "
      "(fused_cuda), or composed of the per-part nodes (composed: the same values to float "
      "rounding); bf16 autocast always runs composed");
  }
  void validate() const;
};

}  // namespace tts::config

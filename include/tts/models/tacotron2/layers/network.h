// Tacotron-2 (Shen et al. 2018) with NVIDIA/tacotron2's architecture and initialization, plus an
// optional CBHG head predicting linear spectrograms from the postnet mel (Rayhane-mamah's).
// With configs/ljspeech_tacotron2.yaml and NVIDIA's 148-symbol table it has 28,193,153
// parameters, as NVIDIA's model.
//
// Parameters are registered in a fixed order with plain names (embedding.weight,
// encoder.conv0.weight, decoder.attention_rnn.weight_ih, postnet.conv4.bias, linear_head.*, ...)
// so that checkpoints compare by name across runs. With model.speakers >= 1,
// speaker_embedding.weight [speakers, speaker_embedding_dim] (zeros at initialization) and
// speaker_projection.weight [encoder_embedding_dim, speaker_embedding_dim] come last: a speaker's
// projected row is added to every encoder output frame, so every other layer keeps the one-speaker
// model's shape, and zero rows compute exactly the one-speaker model (docs/training.md, "Several
// speakers").
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>
#include <torch/types.h>

#include "tts/config/config.h"
#include "tts/models/parameter_budget.h"
#include "tts/models/tacotron2/layers/layers.h"

namespace tts::tacotron2 {

struct TacotronOutput {
  torch::Tensor mel;          // [B, T_mel, n_mels] decoder output before the postnet
  torch::Tensor mel_postnet;  // [B, T_mel, n_mels]
  torch::Tensor gate;         // [B, T_mel] stop-token logits
  torch::Tensor alignments;   // [B, T_mel / r, T_text]
  torch::Tensor linear;       // [B, T_mel, n_linear] when predict_linear, else undefined
  torch::Tensor mel_lengths;  // [B] int64 (inference: frames generated; training: the input's)
  int64_t r = 0;              // mel frames per decoder step it was produced with (set by the model)

  // [B] int64: the decoder steps that produced each utterance's frames (its alignment's rows).
  torch::Tensor decoder_lengths() const;
};

// Decoder steps that cover `frames` ([B] integer) mel frames: ceil(frames / r), the tensor form of
// tts::decoder_steps (core/frames.h). Throws tts::Error for r < 1 (an output not made by the
// model).
torch::Tensor decoder_steps(const torch::Tensor& frames, int64_t r);

class Tacotron2Impl : public torch::nn::Module {
 public:
  // n_symbols: size of the text symbol table (id 0 is padding); n_mels: mel channels;
  // n_linear: linear-spectrogram bins (n_fft/2 + 1), used only with predict_linear.
  // max_r > 0: built for every r up to max_r from the same parameters (train.r_schedule; see
  // DecoderImpl); 0: for model.n_frames_per_step alone.
  Tacotron2Impl(const config::ModelOptions& options, int64_t n_symbols, int64_t n_mels,
                int64_t n_linear, int64_t max_r = 0);
  // Switches the frames per decoder step (gradual training); needs max_r >= r. The model's r
  // lives in its decoder alone.
  void set_reduction_factor(int64_t r);
  int64_t reduction_factor() const;
  // How the recurrent per-step products run on the CPU (model.recurrent_products; layers.h).
  void set_recurrent_products(config::RecurrentProducts path);
  void set_decoder_step(config::DecoderStep how);
  // How the encoder's LSTM and the linear head's GRU keep the padding out (recurrent.h).
  void set_recurrence(const RecurrencePaths& paths);

  // Teacher forcing. text [B, T_text] int64 padded with 0; text_lengths [B] int64;
  // mel [B, T_mel, n_mels] with T_mel a multiple of r; mel_lengths [B] int64. Outputs at frames
  // >= mel_lengths are zero (mel, mel_postnet, linear). Dropout follows train()/eval() except the
  // prenet's, which is always on. `context` (training): keyed dropout masks and BatchNorm over
  // the global batch (batch_context.h); the default: libtorch's dropout, PyTorch's BatchNorm.
  // `speakers` [B] int64: each utterance's row of the speaker embedding, for a model with
  // model.speakers >= 1 (required there; refused, undefined, for a one-speaker model).
  TacotronOutput forward(const torch::Tensor& text, const torch::Tensor& text_lengths,
                         const torch::Tensor& mel, const torch::Tensor& mel_lengths,
                         const BatchContext& context = {}, const torch::Tensor& speakers = {});

  // Greedy, batched inference. Each item stops at its first frame whose stop probability passes
  // gate_threshold (or after max_decoder_steps); mel_lengths says how many frames it has, and
  // frames past them are zero. Call under torch::NoGradGuard and eval() for synthesis.
  // `context` keyed: each item's prenet dropout from its own stream (DecoderImpl::infer).
  // `speakers` as forward's.
  TacotronOutput infer(const torch::Tensor& text, const torch::Tensor& text_lengths,
                       const BatchContext& context = {}, const torch::Tensor& speakers = {});

  // Inference a piece at a time (speaking/speech_decoder.cpp) from the parts infer() runs, so that
  // the pieces compute what infer() computes: the memory of text (encode's); the decoder, stepped
  // (DecoderImpl::Rows); the postnet's mel of decoded frames [B, T, n_mels] of which the first
  // `lengths` [B] are the utterance's (finish's: the frames past them zeroed or seen, as
  // model.zero_padding_in_convolutions says), on a window of frames as on the whole; the frames
  // the postnet sees on each side of one; the linear head's spectrogram of a whole postnet mel
  // (its bidirectional GRU needs all of it), undefined without a linear head.
  torch::Tensor encode_text(const torch::Tensor& text, const torch::Tensor& text_lengths,
                            const torch::Tensor& speakers = {});
  Decoder& decoder() { return decoder_; }
  torch::Tensor postnet_mel(const torch::Tensor& decoded, const torch::Tensor& lengths,
                            const BatchContext& context = {});
  models::ReceptiveField postnet_field() const { return postnet_->receptive_field(); }
  torch::Tensor linear_of(const torch::Tensor& mel_postnet, const torch::Tensor& lengths);

  int64_t n_symbols() const { return n_symbols_; }
  // Rows of the speaker embedding (model.speakers); 0 for a one-speaker model.
  int64_t n_speakers() const { return n_speakers_; }
  int64_t n_mels() const { return n_mels_; }
  int64_t n_linear() const { return n_linear_; }

 private:
  TacotronOutput finish(DecoderOutput decoded, const torch::Tensor& mel_lengths,
                        const BatchContext& context);
  torch::Tensor encode(const torch::Tensor& text, const torch::Tensor& text_lengths,
                       const torch::Tensor& speakers, const BatchContext& context = {});

  bool zero_padding_in_convolutions_;
  int64_t n_symbols_, n_mels_, n_linear_, n_speakers_;
  torch::nn::Embedding embedding_{nullptr};
  Encoder encoder_{nullptr};
  Decoder decoder_{nullptr};
  Postnet postnet_{nullptr};
  CBHG linear_head_{nullptr};
  torch::nn::Embedding speaker_embedding_{nullptr};
  torch::nn::Linear speaker_projection_{nullptr};
};
TORCH_MODULE(Tacotron2);

// The model a run of `config` trains or synthesizes with, predicting `r` frames a decoder step (the
// phase in force): n_mels and, with model.predict_linear, n_linear from config.audio; built for
// every r of train.r_schedule from the same parameters; its per-step products run as
// model.recurrent_products says, its recurrences as recurrence_paths(device, train.cuda_graphs)
// says; on `device`.
Tacotron2 build_model(const config::Config& config, int64_t n_symbols, int r,
                      const torch::Device& device = torch::kCPU);

// The budget every family shares (models/parameter_budget.h).
using models::kMaxParameterBytes;

// count_parameters() of the Tacotron2 these constructor arguments build, from the shapes alone
// (a double: the arguments are not bounded yet when it runs).
double parameter_count_of(const config::ModelOptions& options, int64_t n_symbols, int64_t n_mels,
                          int64_t n_linear, int64_t max_r);

// Throws tts::Error, with the figure, when build_model(config, n_symbols, ...) would pass
// kMaxParameterBytes: a checkpoint's config is checked so before anything reads on.
void require_model_size(const config::Config& config, int64_t n_symbols);

}  // namespace tts::tacotron2

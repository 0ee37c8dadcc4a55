#include "tts/models/tacotron2/layers/network.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>

#include "tts/core/error.h"

namespace tts::tacotron2 {
namespace {

// The smallest and largest of `lengths`: from the batch's host copy when it brought one (no
// device synchronization: a training step's), else read from the tensor (one).
std::pair<int64_t, int64_t> length_range(const torch::Tensor& lengths,
                                         const std::vector<int64_t>& host) {
  if (!host.empty() && static_cast<int64_t>(host.size()) == lengths.size(0)) {
    const auto [low, high] = std::minmax_element(host.begin(), host.end());
    return {*low, *high};
  }
  const torch::Tensor both = torch::stack({lengths.min(), lengths.max()}).to(torch::kCPU);
  return {both[0].item<int64_t>(), both[1].item<int64_t>()};
}

void check_text(const torch::Tensor& text, const torch::Tensor& text_lengths,
                const std::vector<int64_t>& host_lengths) {
  TTS_CHECK(text.dim() == 2 && text.scalar_type() == torch::kInt64,
            "Tacotron2: expected text ids int64 [B, T_text], got {} {}",
            c10::toString(text.scalar_type()), c10::str(text.sizes()));
  TTS_CHECK(text_lengths.dim() == 1 && text_lengths.size(0) == text.size(0),
            "Tacotron2: expected text_lengths [{}] (one per utterance), got {}", text.size(0),
            c10::str(text_lengths.sizes()));
  const auto [shortest, longest] = length_range(text_lengths, host_lengths);
  TTS_CHECK(shortest >= 1 && longest <= text.size(1),
            "Tacotron2: text_lengths must be in [1, {}] (the padded text length), got {} to {}",
            text.size(1), shortest, longest);
}

void require_parameter_bytes(double parameters) {
  TTS_CHECK(parameters * sizeof(float) <= kMaxParameterBytes,
            "the config's model would have {:.0f} parameters ({:.1f} GB), past the limit of {:.0f} "
            "GB (NVIDIA's Tacotron-2 has 28 million, 0.1 GB); lower the model.* widths",
            parameters, parameters * sizeof(float) / 1e9, kMaxParameterBytes / 1e9);
}

// The linear bins of the model build_model() makes for `config`.
int64_t linear_bins(const config::Config& config) {
  return config.model.predict_linear ? config.audio.n_linear() : 0;
}

}  // namespace

Tacotron2Impl::Tacotron2Impl(const config::ModelOptions& options, int64_t n_symbols, int64_t n_mels,
                             int64_t n_linear, int64_t max_r)
    : zero_padding_in_convolutions_(options.zero_padding_in_convolutions),
      n_symbols_(n_symbols),
      n_mels_(n_mels),
      n_linear_(n_linear),
      n_speakers_(options.speakers) {
  options.validate();
  TTS_CHECK(n_symbols >= 2 && n_mels >= 1,
            "Tacotron2: need at least 2 symbols (padding + one) and 1 mel channel, got {} and {}",
            n_symbols, n_mels);
  TTS_CHECK(!options.predict_linear || n_linear >= 1,
            "Tacotron2: model.predict_linear needs n_linear >= 1 (n_fft/2 + 1), got {}", n_linear);
  require_parameter_bytes(parameter_count_of(options, n_symbols, n_mels, n_linear, max_r));
  embedding_ =
      register_module("embedding", torch::nn::Embedding(n_symbols, options.symbols_embedding_dim));
  {
    // NVIDIA's: uniform with the standard deviation of Xavier initialization.
    torch::NoGradGuard no_grad;
    double bound = std::sqrt(3.0) *
                   std::sqrt(2.0 / static_cast<double>(n_symbols + options.symbols_embedding_dim));
    embedding_->weight.uniform_(-bound, bound);
  }
  encoder_ = register_module("encoder", Encoder(options));
  decoder_ = register_module("decoder", Decoder(options, n_mels, max_r));
  postnet_ = register_module("postnet", Postnet(options, n_mels));
  if (options.predict_linear) {
    linear_head_ = register_module("linear_head", CBHG(options, n_mels, n_linear));
  }
  if (options.speakers > 0) {
    speaker_embedding_ = register_module(
        "speaker_embedding", torch::nn::Embedding(options.speakers, options.speaker_embedding_dim));
    speaker_projection_ =
        register_module("speaker_projection",
                        torch::nn::Linear(torch::nn::LinearOptions(options.speaker_embedding_dim,
                                                                   options.encoder_embedding_dim)
                                              .bias(false)));
    // Zero rows add nothing: the model starts as the one-speaker model it may be warm started from.
    torch::NoGradGuard no_grad;
    speaker_embedding_->weight.zero_();
  }
}

torch::Tensor Tacotron2Impl::encode(const torch::Tensor& text, const torch::Tensor& text_lengths,
                                    const torch::Tensor& speakers, const BatchContext& context) {
  check_text(text, text_lengths, context.text_lengths);
  torch::Tensor memory = encoder_->forward(embedding_(text), text_lengths, context);
  if (n_speakers_ == 0) {
    TTS_CHECK(!speakers.defined(),
              "Tacotron2: speaker ids given to a one-speaker model (model.speakers: 0); set "
              "model.speakers to train with speakers");
    return memory;
  }
  TTS_CHECK(speakers.defined(),
            "Tacotron2: a model of {} speakers (model.speakers) needs each utterance's speaker id",
            n_speakers_);
  TTS_CHECK(speakers.dim() == 1 && speakers.size(0) == text.size(0) &&
                speakers.scalar_type() == torch::kInt64,
            "Tacotron2: expected speaker ids int64 [{}] (one per utterance), got {} {}",
            text.size(0), c10::toString(speakers.scalar_type()), c10::str(speakers.sizes()));
  // Every frame of the memory the attention reads hears the speaker ("add" integration).
  torch::Tensor speaker = speaker_projection_(speaker_embedding_(speakers.to(memory.device())));
  return memory + speaker.unsqueeze(1).to(memory.dtype());
}

TacotronOutput Tacotron2Impl::finish(DecoderOutput decoded, const torch::Tensor& mel_lengths,
                                     const BatchContext& context) {
  torch::Tensor valid = padding_mask(mel_lengths, decoded.mel.size(1))
                            .logical_not()
                            .unsqueeze(2)
                            .to(decoded.mel.dtype());
  TacotronOutput out;
  out.mel = decoded.mel * valid;
  out.mel_postnet = postnet_mel(decoded.mel, mel_lengths, context);
  out.gate = decoded.gate;
  out.alignments = decoded.alignments;
  if (linear_head_) out.linear = linear_head_->forward(out.mel_postnet, mel_lengths, context);
  out.mel_lengths = mel_lengths;
  out.r = decoder_->r();
  return out;
}

torch::Tensor Tacotron2Impl::postnet_mel(const torch::Tensor& decoded, const torch::Tensor& lengths,
                                         const BatchContext& context) {
  torch::Tensor valid =
      padding_mask(lengths, decoded.size(1)).logical_not().unsqueeze(2).to(decoded.dtype());
  // NVIDIA's postnet sees the decoder's frames past the lengths too; both outputs are then masked.
  if (zero_padding_in_convolutions_) {
    const torch::Tensor mel = decoded * valid;
    return mel + postnet_->forward(mel, lengths, context);
  }
  return (decoded + postnet_->forward(decoded, lengths, context)) * valid;
}

torch::Tensor Tacotron2Impl::encode_text(const torch::Tensor& text,
                                         const torch::Tensor& text_lengths,
                                         const torch::Tensor& speakers) {
  return encode(text, text_lengths, speakers);
}

torch::Tensor Tacotron2Impl::linear_of(const torch::Tensor& mel_postnet,
                                       const torch::Tensor& lengths) {
  if (!linear_head_) return {};
  return linear_head_->forward(mel_postnet, lengths, {});
}

void Tacotron2Impl::set_reduction_factor(int64_t r) { decoder_->set_r(r); }

void Tacotron2Impl::set_recurrent_products(config::RecurrentProducts path) {
  encoder_->set_recurrent_products(path);
  decoder_->set_recurrent_products(path);
}

void Tacotron2Impl::set_decoder_step(config::DecoderStep how) { decoder_->set_decoder_step(how); }

void Tacotron2Impl::set_recurrence(const RecurrencePaths& paths) {
  encoder_->set_lstm_padding(paths.lstm);
  if (linear_head_) linear_head_->set_gru_padding(paths.gru);
}

int64_t Tacotron2Impl::reduction_factor() const { return decoder_->r(); }

TacotronOutput Tacotron2Impl::forward(const torch::Tensor& text, const torch::Tensor& text_lengths,
                                      const torch::Tensor& mel, const torch::Tensor& mel_lengths,
                                      const BatchContext& context, const torch::Tensor& speakers) {
  const int64_t r = decoder_->r();
  TTS_CHECK(mel.dim() == 3 && mel.size(0) == text.size(0) && mel.size(2) == n_mels_ &&
                mel.size(1) % r == 0 && mel.size(1) > 0,
            "Tacotron2: expected mel [B = {}, T_mel, n_mels = {}] with T_mel a positive multiple "
            "of r = {}, the frames per decoder step, got {} (pad the batch to a multiple of r)",
            text.size(0), n_mels_, r, c10::str(mel.sizes()));
  TTS_CHECK(mel_lengths.dim() == 1 && mel_lengths.size(0) == mel.size(0) &&
                length_range(mel_lengths, context.mel_lengths).second <= mel.size(1),
            "Tacotron2: expected mel_lengths [{}] <= {}, got {}", mel.size(0), mel.size(1),
            c10::str(mel_lengths.sizes()));
  torch::Tensor memory = encode(text, text_lengths, speakers, context);
  torch::Tensor mask = padding_mask(text_lengths, text.size(1)).to(memory.device());
  return finish(decoder_->forward(memory, mask, mel, context, mel_lengths.to(torch::kInt64)),
                mel_lengths.to(torch::kInt64), context);
}

TacotronOutput Tacotron2Impl::infer(const torch::Tensor& text, const torch::Tensor& text_lengths,
                                    const BatchContext& context, const torch::Tensor& speakers) {
  torch::Tensor memory = encode(text, text_lengths, speakers);
  torch::Tensor mask = padding_mask(text_lengths, text.size(1)).to(memory.device());
  auto [decoded, lengths] = decoder_->infer(memory, mask, context);
  return finish(std::move(decoded), lengths, {});
}

torch::Tensor decoder_steps(const torch::Tensor& frames, int64_t r) {
  // r 0 is a TacotronOutput the model did not make.
  TTS_CHECK(r >= 1,
            "decoder steps of r = {} frames each: r must be at least 1 (a TacotronOutput built "
            "by hand? copy the model's and replace its tensors, so that it keeps its r)",
            r);
  return torch::div(frames.to(torch::kInt64) + (r - 1), r, "floor");
}

torch::Tensor TacotronOutput::decoder_lengths() const { return decoder_steps(mel_lengths, r); }

Tacotron2 build_model(const config::Config& config, int64_t n_symbols, int r,
                      const torch::Device& device) {
  // The constructor takes the r to start with in its options: this copy is the argument, the
  // run's config is not changed.
  config::ModelOptions options = config.model;
  options.n_frames_per_step = r;
  Tacotron2 model(options, n_symbols, config.audio.n_mels, linear_bins(config),
                  config.train.max_scheduled_r());
  model->set_recurrent_products(config.model.recurrent_products);
  model->set_decoder_step(decoder_step_for(config.model.decoder_step, device));
  model->set_recurrence(recurrence_paths(device, config.train.cuda_graphs));
  model->to(device);
  return model;
}

namespace {

// Parameters of a layer: a dense or convolution weight with its bias, BatchNorm's scale and shift,
// an LSTM or GRU's weights and biases (`gates` per unit: 4 or 3).
double dense(double in, double out, bool bias) { return in * out + (bias ? out : 0); }
double conv(double in, double out, double kernel, bool bias) {
  return dense(in * kernel, out, bias);
}
double batch_norm(double channels) { return 2 * channels; }
double recurrent(double in, double hidden, double gates) {
  return gates * hidden * (in + hidden + 2);
}

double encoder_parameters(const config::ModelOptions& o) {
  const double c = o.encoder_embedding_dim;
  double total = 0;
  for (int i = 0; i < o.encoder_n_convolutions; ++i) {
    total +=
        conv(i == 0 ? o.symbols_embedding_dim : c, c, o.encoder_kernel_size, true) + batch_norm(c);
  }
  return total + 2 * recurrent(c, std::floor(c / 2), 4);  // bidirectional
}

double decoder_parameters(const config::ModelOptions& o, double n_mels, double max_r) {
  const double frames = max_r > 0 ? max_r : o.n_frames_per_step;
  const double prenet_in = max_r > 0 ? n_mels : n_mels * o.n_frames_per_step;
  const double c = o.encoder_embedding_dim, a = o.attention_rnn_dim, d = o.decoder_rnn_dim;
  const double attention =
      dense(a, o.attention_dim, false) + dense(c, o.attention_dim, false) +
      dense(o.attention_dim, 1, false) +
      conv(2, o.attention_location_n_filters, o.attention_location_kernel_size, false) +
      dense(o.attention_location_n_filters, o.attention_dim, false);
  return dense(prenet_in, o.prenet_dim, false) + dense(o.prenet_dim, o.prenet_dim, false) +
         recurrent(o.prenet_dim + c, a, 4) + attention + recurrent(a + c, d, 4) +
         dense(d + c, n_mels * frames, true) + dense(d + c, frames, true);
}

double postnet_parameters(const config::ModelOptions& o, double n_mels) {
  double total = 0;
  for (int i = 0; i < o.postnet_n_convolutions; ++i) {
    const double in = i == 0 ? n_mels : o.postnet_embedding_dim;
    const double out = i == o.postnet_n_convolutions - 1 ? n_mels : o.postnet_embedding_dim;
    total += conv(in, out, o.postnet_kernel_size, true) + batch_norm(out);
  }
  return total;
}

double cbhg_parameters(const config::ModelOptions& o, double in, double out) {
  const double channels = o.cbhg_conv_channels, projection = o.cbhg_projection_dim;
  const double units = o.cbhg_rnn_units;
  double total = 0;
  for (int k = 1; k <= o.cbhg_kernels; ++k)
    total += conv(in, channels, k, true) + batch_norm(channels);
  total += conv(channels * o.cbhg_kernels, projection, 3, true) + batch_norm(projection);
  total += conv(projection, in, 3, true) + batch_norm(in);
  total += dense(in, units, true) + o.cbhg_highway_layers * 2 * dense(units, units, true);
  return total + 2 * recurrent(units, units, 3) + dense(2 * units, out, true);
}

}  // namespace

double parameter_count_of(const config::ModelOptions& options, int64_t n_symbols, int64_t n_mels,
                          int64_t n_linear, int64_t max_r) {
  const double n_mels_d = static_cast<double>(n_mels);
  double total = static_cast<double>(n_symbols) * options.symbols_embedding_dim +
                 encoder_parameters(options) +
                 decoder_parameters(options, n_mels_d, static_cast<double>(max_r)) +
                 postnet_parameters(options, n_mels_d);
  if (options.predict_linear)
    total += cbhg_parameters(options, n_mels_d, static_cast<double>(n_linear));
  if (options.speakers > 0) {
    total += static_cast<double>(options.speakers) * options.speaker_embedding_dim +
             dense(options.speaker_embedding_dim, options.encoder_embedding_dim, false);
  }
  return total;
}

void require_model_size(const config::Config& config, int64_t n_symbols) {
  require_parameter_bytes(parameter_count_of(config.model, n_symbols, config.audio.n_mels,
                                             linear_bins(config), config.train.max_scheduled_r()));
}

}  // namespace tts::tacotron2

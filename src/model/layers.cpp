#include "tts/model/layers.h"

#include <torch/torch.h>

#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "autocast.h"
#include "tts/core/error.h"

namespace tts::model {
namespace {

namespace F = torch::nn::functional;

// Xavier-uniform weights with the gain torch.nn.init.calculate_gain gives the nonlinearity that
// follows (NVIDIA's LinearNorm and ConvNorm); biases keep PyTorch's default initialization.
constexpr double kGainLinear = 1.0;
const double kGainRelu = std::sqrt(2.0);
constexpr double kGainTanh = 5.0 / 3.0;

void xavier(torch::Tensor& weight, double gain) {
  torch::NoGradGuard no_grad;
  torch::nn::init::xavier_uniform_(weight, gain);
}

torch::nn::Linear make_linear(int64_t in, int64_t out, bool bias, double gain) {
  torch::nn::Linear linear(torch::nn::LinearOptions(in, out).bias(bias));
  xavier(linear->weight, gain);
  return linear;
}

torch::nn::Conv1d make_conv(int64_t in, int64_t out, int64_t kernel, bool bias, double gain) {
  torch::nn::Conv1d conv(torch::nn::Conv1dOptions(in, out, kernel).padding(kernel / 2).bias(bias));
  xavier(conv->weight, gain);
  return conv;
}

torch::Tensor maybe_dropout(const torch::Tensor& x, double p, bool training) {
  return training && p > 0 ? torch::dropout(x, p, true) : x;
}

// Padding mask [B, 1, T] as a float multiplier (1 = valid).
torch::Tensor valid_multiplier(const torch::Tensor& lengths, int64_t max_length,
                               const torch::TensorOptions& options) {
  return padding_mask(lengths, max_length).logical_not().unsqueeze(1).to(options);
}

// pack_padded_sequence + RNN + pad_packed_sequence back to [B, T, C] with the original T.
// In fp32 at least, with autocast off: the recurrent state runs over every step (autocast.h), and
// libtorch's autocast of cuDNN's RNN casts to fp16 whatever autocast's dtype, bf16 included.
template <class Rnn>
torch::Tensor run_packed(Rnn& rnn, const torch::Tensor& x_in, const torch::Tensor& lengths) {
  namespace rnn_utils = torch::nn::utils::rnn;
  detail::NoAutocast no_autocast;
  const torch::Tensor x = detail::at_least_float(x_in);
  auto packed = rnn_utils::pack_padded_sequence(x, lengths.to(torch::kCPU).to(torch::kInt64),
                                                /*batch_first=*/true, /*enforce_sorted=*/false);
  auto output = std::get<0>(rnn->forward_with_packed_input(packed));
  return std::get<0>(rnn_utils::pad_packed_sequence(output, /*batch_first=*/true, 0.0, x.size(1)));
}

}  // namespace

torch::Tensor padding_mask(const torch::Tensor& lengths, int64_t max_length) {
  auto positions = torch::arange(max_length, lengths.options().dtype(torch::kInt64));
  return positions.unsqueeze(0) >= lengths.to(torch::kInt64).unsqueeze(1);
}

// ---------------------------------------------------------------------------------------------

torch::Tensor bidirectional_lstm(torch::nn::LSTM& lstm, const torch::Tensor& x,
                                 const torch::Tensor& lengths, StepProductPath path) {
  TTS_CHECK(lstm->options.bidirectional() && lstm->options.num_layers() == 1 &&
                lstm->options.batch_first() && lstm->options.bias() &&
                lstm->options.proj_size() == 0,
            "bidirectional_lstm: expected a one-layer, bidirectional, batch-first LSTM with biases "
            "and no projection");
  // On CUDA, cuDNN's bidirectional LSTM over the packed batch (the same result: each item's
  // backward direction starts at its last position, padding outputs are zero) instead of ~2 x T
  // steps of small kernels.
  if (x.is_cuda()) return run_packed(lstm, x, lengths);
  auto params = lstm->named_parameters(/*recurse=*/false);
  int64_t batch = x.size(0), time = x.size(1), hidden = lstm->options.hidden_size();
  torch::Tensor valid = torch::arange(time, x.options().dtype(torch::kInt64))
                            .unsqueeze(0)
                            .lt(lengths.to(x.device(), torch::kInt64).unsqueeze(1))
                            .to(x.dtype());  // [B, T]
  std::vector<torch::Tensor> masks =
      valid.t().unsqueeze(2).expand({time, batch, hidden}).contiguous().unbind(0);
  std::vector<torch::Tensor> outputs;
  for (bool reverse : {false, true}) {
    std::string suffix = reverse ? "_l0_reverse" : "_l0";
    const torch::Tensor& weight_ih = params["weight_ih" + suffix];
    // Input projections and both biases for all steps at once: [T, B, 4H].
    std::vector<torch::Tensor> input_gates =
        torch::addmm(params["bias_ih" + suffix] + params["bias_hh" + suffix],
                     x.reshape({batch * time, -1}), weight_ih.t())
            .view({batch, time, 4 * hidden})
            .transpose(0, 1)
            .contiguous()
            .unbind(0);
    StepWeight recurrent = make_step_weight(path, params["weight_hh" + suffix]);
    torch::Tensor h = torch::zeros({batch, hidden}, x.options());
    torch::Tensor c = torch::zeros({batch, hidden}, x.options());
    std::vector<torch::Tensor> steps(time);
    for (int64_t i = 0; i < time; ++i) {
      int64_t t = reverse ? time - 1 - i : i;
      // h is zero at padded steps (the packed output's padding); the backward direction also
      // keeps c at zero there, so each item starts from a zero state at its last position.
      std::tie(h, c) = lstm_cell_pointwise(step_linear(recurrent, input_gates[t], h), c, masks[t]);
      if (reverse) c = c * masks[t];
      steps[t] = h;
    }
    outputs.push_back(torch::stack(steps, 1));
  }
  return torch::cat(outputs, 2);
}

EncoderImpl::EncoderImpl(const config::ModelOptions& options)
    : p_dropout_(options.p_encoder_dropout), zero_padding_(options.zero_padding_in_convolutions) {
  int64_t channels = options.encoder_embedding_dim;
  int64_t in = options.symbols_embedding_dim;
  for (int i = 0; i < options.encoder_n_convolutions; ++i) {
    convolutions_.push_back(
        register_module("conv" + std::to_string(i),
                        make_conv(in, channels, options.encoder_kernel_size, true, kGainRelu)));
    norms_.push_back(register_module("norm" + std::to_string(i), torch::nn::BatchNorm1d(channels)));
    in = channels;
  }
  lstm_ = register_module(
      "lstm",
      torch::nn::LSTM(
          torch::nn::LSTMOptions(channels, channels / 2).batch_first(true).bidirectional(true)));
}

torch::Tensor EncoderImpl::forward(const torch::Tensor& embedded, const torch::Tensor& lengths) {
  // NVIDIA's convolutions see the padding symbol's embedding (multiplier 1 everywhere).
  torch::Tensor valid = zero_padding_
                            ? valid_multiplier(lengths, embedded.size(1), embedded.options())
                            : torch::ones({1, 1, 1}, embedded.options());
  torch::Tensor x = embedded.transpose(1, 2) * valid;  // [B, C, T]
  for (size_t i = 0; i < convolutions_.size(); ++i) {
    x = maybe_dropout(torch::relu(norms_[i](convolutions_[i](x))), p_dropout_, is_training()) *
        valid;
  }
  return bidirectional_lstm(lstm_, x.transpose(1, 2), lengths, step_products_);
}

// ---------------------------------------------------------------------------------------------

AttentionImpl::AttentionImpl(int64_t query_dim, int64_t memory_dim, int64_t attention_dim,
                             int64_t n_filters, int64_t kernel_size)
    : padding_(kernel_size / 2) {
  query_layer_ =
      register_module("query_layer", make_linear(query_dim, attention_dim, false, kGainTanh));
  memory_layer_ =
      register_module("memory_layer", make_linear(memory_dim, attention_dim, false, kGainTanh));
  v_ = register_module("v", make_linear(attention_dim, 1, false, kGainLinear));
  location_conv_ =
      register_module("location_conv", make_conv(2, n_filters, kernel_size, false, kGainLinear));
  location_dense_ =
      register_module("location_dense", make_linear(n_filters, attention_dim, false, kGainTanh));
}

torch::Tensor AttentionImpl::process_memory(const torch::Tensor& memory) {
  return memory_layer_(memory).transpose(1, 2).contiguous();
}

torch::Tensor AttentionImpl::location_weight() {
  const torch::Tensor& conv = location_conv_->weight;  // [F, 2, K]
  return torch::mm(location_dense_->weight, conv.reshape({conv.size(0), -1}))
      .view({-1, conv.size(1), conv.size(2)});
}

StepWeight AttentionImpl::query_weight(StepProductPath path) {
  return make_step_weight(path, query_layer_->weight);
}

std::pair<torch::Tensor, torch::Tensor> AttentionImpl::step(
    const StepWeight& query_weight, const torch::Tensor& query, const torch::Tensor& processed,
    const torch::Tensor& memory, const torch::Tensor& previous_and_cumulative,
    const torch::Tensor& location, const torch::Tensor& mask) {
  torch::Tensor processed_query = step_linear(query_weight, {}, query);  // [B, A]
  torch::Tensor location_features =
      torch::conv1d(previous_and_cumulative, location, {}, 1, padding_);  // [B, A, T]
  torch::Tensor weights =
      attention_weights(location_features, processed, processed_query, v_->weight, mask);
  torch::Tensor context = torch::bmm(weights, memory).squeeze(1);
  return {context, weights};
}

// ---------------------------------------------------------------------------------------------

PrenetImpl::PrenetImpl(int64_t in_dim, int64_t dim, double p_dropout) : p_dropout_(p_dropout) {
  layer0_ = register_module("layer0", make_linear(in_dim, dim, false, kGainLinear));
  layer1_ = register_module("layer1", make_linear(dim, dim, false, kGainLinear));
}

torch::Tensor PrenetImpl::forward(const torch::Tensor& x) {
  torch::Tensor h = maybe_dropout(torch::relu(layer0_(x)), p_dropout_, true);
  return maybe_dropout(torch::relu(layer1_(h)), p_dropout_, true);
}

// ---------------------------------------------------------------------------------------------

LSTMCellImpl::LSTMCellImpl(int64_t input_size, int64_t hidden_size) {
  double bound = 1.0 / std::sqrt(static_cast<double>(hidden_size));
  auto uniform = [bound](std::vector<int64_t> shape) {
    return torch::empty(shape).uniform_(-bound, bound);
  };
  weight_ih = register_parameter("weight_ih", uniform({4 * hidden_size, input_size}));
  weight_hh = register_parameter("weight_hh", uniform({4 * hidden_size, hidden_size}));
  bias_ih = register_parameter("bias_ih", uniform({4 * hidden_size}));
  bias_hh = register_parameter("bias_hh", uniform({4 * hidden_size}));
}

// ---------------------------------------------------------------------------------------------

DecoderImpl::DecoderImpl(const config::ModelOptions& options, int64_t n_mels, int64_t max_r)
    : max_r_(max_r),
      n_mels_(n_mels),
      r_(options.n_frames_per_step),
      prenet_dim_(options.prenet_dim),
      encoder_dim_(options.encoder_embedding_dim),
      attention_rnn_dim_(options.attention_rnn_dim),
      decoder_rnn_dim_(options.decoder_rnn_dim),
      max_decoder_steps_(options.max_decoder_steps),
      gate_threshold_(options.gate_threshold),
      p_attention_dropout_(options.p_attention_dropout),
      p_decoder_dropout_(options.p_decoder_dropout) {
  TTS_CHECK(max_r_ == 0 || r_ <= max_r_,
            "decoder: r = {} frames per step exceeds the largest r of train.r_schedule ({})", r_,
            max_r_);
  const int64_t frames = max_r_ > 0 ? max_r_ : r_;  // frames the projections predict
  prenet_ = register_module(
      "prenet", Prenet(max_r_ > 0 ? n_mels : n_mels * r_, prenet_dim_, options.p_prenet_dropout));
  attention_rnn_ =
      register_module("attention_rnn", LSTMCell(prenet_dim_ + encoder_dim_, attention_rnn_dim_));
  attention_layer_ = register_module(
      "attention_layer",
      Attention(attention_rnn_dim_, encoder_dim_, options.attention_dim,
                options.attention_location_n_filters, options.attention_location_kernel_size));
  decoder_rnn_ =
      register_module("decoder_rnn", LSTMCell(attention_rnn_dim_ + encoder_dim_, decoder_rnn_dim_));
  linear_projection_ = register_module(
      "linear_projection",
      make_linear(decoder_rnn_dim_ + encoder_dim_, n_mels * frames, true, kGainLinear));
  // calculate_gain('sigmoid') is 1.
  gate_layer_ = register_module("gate_layer",
                                make_linear(decoder_rnn_dim_ + encoder_dim_, frames, true, 1.0));
}

void DecoderImpl::set_r(int64_t r) {
  TTS_CHECK(r >= 1 && (r == r_ || r <= max_r_),
            "decoder: cannot switch to r = {}: it was built for {} (set train.r_schedule so that "
            "its largest r covers every r used)",
            r, max_r_ > 0 ? fmt::format("r <= {}", max_r_) : fmt::format("r = {} alone", r_));
  r_ = r;
}

torch::Tensor DecoderImpl::prenet_input(const torch::Tensor& frames) const {
  return max_r_ > 0 ? frames.narrow(-1, (r_ - 1) * n_mels_, n_mels_) : frames;
}

std::vector<torch::Tensor> DecoderImpl::dropout_masks(double p, std::vector<int64_t> shape,
                                                      const torch::TensorOptions& options) {
  if (!is_training() || p == 0) return std::vector<torch::Tensor>(shape[0]);
  return torch::empty(shape, options).bernoulli_(1 - p).div_(1 - p).unbind(0);
}

DecoderImpl::StepContext DecoderImpl::step_context(const torch::Tensor& memory,
                                                   const torch::Tensor& mask) {
  StepContext c;
  c.memory = memory;
  // The attention's scores run in fp32 (autocast.h): cast the projected memory once, not per step.
  c.processed_memory = detail::at_least_float(attention_layer_->process_memory(memory));
  c.mask = mask.unsqueeze(1);
  c.location = attention_layer_->location_weight();
  c.query_weight = attention_layer_->query_weight(step_products_);
  c.attention_weight = make_step_weight(
      step_products_, attention_rnn_->weight_ih.narrow(1, prenet_dim_, encoder_dim_),
      attention_rnn_->weight_hh);
  c.decoder_weight =
      make_step_weight(step_products_, decoder_rnn_->weight_ih, decoder_rnn_->weight_hh);
  c.decoder_bias = decoder_rnn_->bias_ih + decoder_rnn_->bias_hh;
  return c;
}

DecoderState DecoderImpl::initial_state(const torch::Tensor& memory) {
  int64_t batch = memory.size(0);
  auto zeros = [&](std::vector<int64_t> shape) { return torch::zeros(shape, memory.options()); };
  return {zeros({batch, attention_rnn_dim_}), zeros({batch, attention_rnn_dim_}),
          zeros({batch, decoder_rnn_dim_}),   zeros({batch, decoder_rnn_dim_}),
          zeros({batch, 2, memory.size(1)}),  zeros({batch, encoder_dim_})};
}

torch::Tensor DecoderImpl::attention_input_gates(const torch::Tensor& prenet_out) {
  torch::Tensor weight = attention_rnn_->weight_ih.narrow(1, 0, prenet_dim_);
  torch::Tensor bias = attention_rnn_->bias_ih + attention_rnn_->bias_hh;
  std::vector<int64_t> sizes = prenet_out.sizes().vec();
  sizes.back() = 4 * attention_rnn_dim_;
  return torch::addmm(bias, prenet_out.reshape({-1, prenet_dim_}), weight.t()).view(sizes);
}

torch::Tensor DecoderImpl::step(const StepContext& c, const torch::Tensor& input_gates,
                                const torch::Tensor& attention_mask,
                                const torch::Tensor& decoder_mask, DecoderState& s) {
  torch::Tensor attention_gates =
      step_linear(c.attention_weight, input_gates, torch::cat({s.context, s.attention_h}, 1));
  std::tie(s.attention_h, s.attention_c) =
      lstm_cell_pointwise(attention_gates, s.attention_c, attention_mask);

  torch::Tensor weights;
  std::tie(s.context, weights) =
      attention_layer_->step(c.query_weight, s.attention_h, c.processed_memory, c.memory,
                             s.weights_and_cumulative, c.location, c.mask);
  s.weights_and_cumulative =
      torch::cat({weights, s.weights_and_cumulative.narrow(1, 1, 1) + weights}, 1);

  torch::Tensor decoder_gates = step_linear(c.decoder_weight, c.decoder_bias,
                                            torch::cat({s.attention_h, s.context, s.decoder_h}, 1));
  std::tie(s.decoder_h, s.decoder_c) =
      lstm_cell_pointwise(decoder_gates, s.decoder_c, decoder_mask);
  return weights;
}

std::pair<torch::Tensor, torch::Tensor> DecoderImpl::project(
    const torch::Tensor& hidden_and_context) {
  if (max_r_ == 0 || r_ == max_r_) {
    return {linear_projection_(hidden_and_context), gate_layer_(hidden_and_context)};
  }
  // The first r frames of the max_r the projections are built for.
  namespace F = torch::nn::functional;
  const int64_t width = n_mels_ * r_;
  return {F::linear(hidden_and_context, linear_projection_->weight.narrow(0, 0, width),
                    linear_projection_->bias.narrow(0, 0, width)),
          F::linear(hidden_and_context, gate_layer_->weight.narrow(0, 0, r_),
                    gate_layer_->bias.narrow(0, 0, r_))};
}

DecoderOutput DecoderImpl::forward(const torch::Tensor& memory, const torch::Tensor& mask,
                                   const torch::Tensor& mel) {
  int64_t batch = mel.size(0);
  TTS_CHECK(mel.dim() == 3 && mel.size(2) == n_mels_ && mel.size(1) % r_ == 0,
            "decoder: expected mel [B, T_mel, {}] with T_mel a multiple of r = {}, got {}", n_mels_,
            r_, c10::str(mel.sizes()));
  int64_t steps = mel.size(1) / r_;
  // Step t consumes the r frames of step t - 1 (a zero "go" frame first): [steps, B, r * n_mels].
  torch::Tensor previous = torch::cat(
      {torch::zeros({1, batch, r_ * n_mels_}, mel.options()),
       mel.reshape({batch, steps, r_ * n_mels_}).transpose(0, 1).narrow(0, 0, steps - 1)},
      0);
  std::vector<torch::Tensor> input_gates =
      attention_input_gates(prenet_(prenet_input(previous))).unbind(0);  // steps x [B, 4 H_att]

  StepContext c = step_context(memory, mask);
  DecoderState s = initial_state(memory);
  std::vector<torch::Tensor> attention_masks =
      dropout_masks(p_attention_dropout_, {steps, batch, attention_rnn_dim_}, memory.options());
  std::vector<torch::Tensor> decoder_masks =
      dropout_masks(p_decoder_dropout_, {steps, batch, decoder_rnn_dim_}, memory.options());
  std::vector<torch::Tensor> hidden, contexts, weights;
  hidden.reserve(steps);
  contexts.reserve(steps);
  weights.reserve(steps);
  for (int64_t t = 0; t < steps; ++t) {
    weights.push_back(step(c, input_gates[t], attention_masks[t], decoder_masks[t], s));
    hidden.push_back(s.decoder_h);
    contexts.push_back(s.context);
  }
  // The projections do not feed back in teacher forcing: one matrix product for all steps.
  auto [mel_out, gate_out] =
      project(torch::cat({torch::stack(hidden, 1), torch::stack(contexts, 1)}, 2));
  return {mel_out.reshape({batch, steps * r_, n_mels_}), gate_out.reshape({batch, steps * r_}),
          torch::cat(weights, 1)};
}

std::pair<DecoderOutput, torch::Tensor> DecoderImpl::infer(const torch::Tensor& memory,
                                                           const torch::Tensor& mask) {
  int64_t batch = memory.size(0);
  StepContext c = step_context(memory, mask);
  DecoderState s = initial_state(memory);
  torch::Tensor frame = torch::zeros({batch, r_ * n_mels_}, memory.options());
  auto long_options = memory.options().dtype(torch::kInt64);
  torch::Tensor lengths = torch::zeros({batch}, long_options);
  torch::Tensor finished = torch::zeros({batch}, memory.options().dtype(torch::kBool));
  torch::Tensor frame_index = torch::arange(r_, long_options);
  std::vector<torch::Tensor> mels, gates, weights;
  for (int64_t t = 0; t < max_decoder_steps_; ++t) {
    auto attention_mask =
        dropout_masks(p_attention_dropout_, {1, batch, attention_rnn_dim_}, memory.options())[0];
    auto decoder_mask =
        dropout_masks(p_decoder_dropout_, {1, batch, decoder_rnn_dim_}, memory.options())[0];
    weights.push_back(step(c, attention_input_gates(prenet_(prenet_input(frame))), attention_mask,
                           decoder_mask, s));
    auto [mel_out, gate_out] = project(torch::cat({s.decoder_h, s.context}, 1));
    mels.push_back(mel_out);
    gates.push_back(gate_out);
    frame = mel_out;
    // An item stopping in this step keeps the frames up to its first stopping frame.
    torch::Tensor stops = torch::sigmoid(gate_out) > gate_threshold_;  // [B, r]
    torch::Tensor first_stop = torch::where(stops, frame_index, r_).amin(1);
    torch::Tensor stopping = stops.any(1).logical_and(finished.logical_not());
    lengths = torch::where(finished, lengths,
                           torch::where(stopping, t * r_ + first_stop + 1, (t + 1) * r_));
    finished = finished.logical_or(stopping);
    if (finished.all().item<bool>()) break;
  }
  int64_t steps = static_cast<int64_t>(mels.size());
  DecoderOutput out{torch::stack(mels, 1).reshape({batch, steps * r_, n_mels_}),
                    torch::stack(gates, 1).reshape({batch, steps * r_}), torch::cat(weights, 1)};
  return {out, lengths};
}

// ---------------------------------------------------------------------------------------------

PostnetImpl::PostnetImpl(const config::ModelOptions& options, int64_t n_mels)
    : p_dropout_(options.p_postnet_dropout),
      zero_padding_(options.zero_padding_in_convolutions),
      nvidia_gradient_(options.nvidia_postnet_gradient) {
  int n = options.postnet_n_convolutions;
  int64_t channels = options.postnet_embedding_dim;
  for (int i = 0; i < n; ++i) {
    bool last = i == n - 1;
    int64_t in = i == 0 ? n_mels : channels;
    int64_t out = last ? n_mels : channels;
    convolutions_.push_back(register_module(
        "conv" + std::to_string(i),
        make_conv(in, out, options.postnet_kernel_size, true, last ? kGainLinear : kGainTanh)));
    norms_.push_back(register_module("norm" + std::to_string(i), torch::nn::BatchNorm1d(out)));
  }
}

torch::Tensor PostnetImpl::forward(const torch::Tensor& mel, const torch::Tensor& lengths) {
  torch::Tensor valid = valid_multiplier(lengths, mel.size(1), mel.options());
  torch::Tensor x = mel.transpose(1, 2);
  for (size_t i = 0; i < convolutions_.size(); ++i) {
    if (i == 0 && nvidia_gradient_ && !zero_padding_ && is_training() && mel.requires_grad()) {
      // conv(w, x) = conv(w, x * valid) + conv(w without gradient, x * (1 - valid)): the same
      // output and input gradient, the weight gradient from the zeroed input only.
      const torch::Tensor& weight = convolutions_[0]->weight;
      torch::Tensor masked = x * valid;
      torch::Tensor padded_part =
          torch::conv1d(x - masked, weight.detach(), {}, 1, weight.size(2) / 2);
      x = norms_[0](convolutions_[0](masked) + padded_part);
    } else {
      x = norms_[i](convolutions_[i](zero_padding_ ? x * valid : x));
    }
    if (i + 1 < convolutions_.size()) x = torch::tanh(x);
    x = maybe_dropout(x, p_dropout_, is_training());
  }
  return (x * valid).transpose(1, 2);
}

// ---------------------------------------------------------------------------------------------

CBHGImpl::CBHGImpl(const config::ModelOptions& options, int64_t in_dim, int64_t out_dim) {
  int64_t channels = options.cbhg_conv_channels;
  int64_t projection = options.cbhg_projection_dim;
  int64_t units = options.cbhg_rnn_units;
  for (int k = 1; k <= options.cbhg_kernels; ++k) {
    torch::nn::Conv1d conv(torch::nn::Conv1dOptions(in_dim, channels, k).padding(k / 2));
    bank_.push_back(register_module("bank" + std::to_string(k), conv));
    bank_norms_.push_back(
        register_module("bank_norm" + std::to_string(k), torch::nn::BatchNorm1d(channels)));
  }
  projection0_ = register_module(
      "projection0",
      torch::nn::Conv1d(
          torch::nn::Conv1dOptions(channels * options.cbhg_kernels, projection, 3).padding(1)));
  projection0_norm_ = register_module("projection0_norm", torch::nn::BatchNorm1d(projection));
  projection1_ = register_module(
      "projection1", torch::nn::Conv1d(torch::nn::Conv1dOptions(projection, in_dim, 3).padding(1)));
  projection1_norm_ = register_module("projection1_norm", torch::nn::BatchNorm1d(in_dim));
  highway_input_ = register_module("highway_input", torch::nn::Linear(in_dim, units));
  for (int i = 0; i < options.cbhg_highway_layers; ++i) {
    torch::nn::Linear h =
        register_module("highway" + std::to_string(i) + "_h", torch::nn::Linear(units, units));
    torch::nn::Linear t =
        register_module("highway" + std::to_string(i) + "_t", torch::nn::Linear(units, units));
    {
      // Rayhane's highway transform gate starts biased towards carrying the input.
      torch::NoGradGuard no_grad;
      t->bias.fill_(-1.0);
    }
    highways_.emplace_back(h, t);
  }
  gru_ = register_module(
      "gru",
      torch::nn::GRU(torch::nn::GRUOptions(units, units).batch_first(true).bidirectional(true)));
  output_ = register_module("output", torch::nn::Linear(2 * units, out_dim));
}

torch::Tensor CBHGImpl::forward(const torch::Tensor& x, const torch::Tensor& lengths) {
  int64_t frames = x.size(1);
  torch::Tensor valid = valid_multiplier(lengths, frames, x.options());  // [B, 1, T]
  torch::Tensor input = x.transpose(1, 2) * valid;                       // [B, C, T]
  std::vector<torch::Tensor> bank;
  for (size_t i = 0; i < bank_.size(); ++i) {
    // Even kernels give T + 1 outputs with symmetric padding; keep the first T.
    bank.push_back(torch::relu(bank_norms_[i](bank_[i](input).narrow(2, 0, frames))));
  }
  torch::Tensor y = torch::cat(bank, 1) * valid;
  // Max-pooling of width 2, stride 1, keeping T frames: max of frames t and t + 1.
  y = torch::max_pool1d(F::pad(y, F::PadFuncOptions({0, 1})), 2, 1) * valid;
  y = torch::relu(projection0_norm_(projection0_(y))) * valid;
  y = (projection1_norm_(projection1_(y)) + input) * valid;
  torch::Tensor h = highway_input_(y.transpose(1, 2));  // [B, T, units]
  for (auto& [transform, gate] : highways_) {
    torch::Tensor g = torch::sigmoid(gate(h));
    h = torch::relu(transform(h)) * g + h * (1 - g);
  }
  return output_(run_packed(gru_, h, lengths)) * valid.transpose(1, 2);
}

}  // namespace tts::model

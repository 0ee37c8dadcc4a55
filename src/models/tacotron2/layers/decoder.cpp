#include "tts/models/tacotron2/layers/decoder.h"

#include <torch/torch.h>

#include <cmath>
#include <tuple>
#include <vector>

#include "layer_init.h"
#include "tts/core/error.h"
#include "tts/core/frames.h"
#include "tts/models/tacotron2/kernels/decoder_step.h"
#include "tts/models/tacotron2/layers/network.h"

namespace tts::tacotron2 {

PrenetImpl::PrenetImpl(int64_t in_dim, int64_t dim, double p_dropout) : p_dropout_(p_dropout) {
  layer0_ = register_module("layer0", make_linear(in_dim, dim, false, kGainLinear));
  layer1_ = register_module("layer1", make_linear(dim, dim, false, kGainLinear));
}

torch::Tensor PrenetImpl::forward(const torch::Tensor& x, const torch::Tensor& mask0,
                                  const torch::Tensor& mask1, bool dropout) {
  auto drop = [&](const torch::Tensor& h, const torch::Tensor& mask) {
    return mask.defined() ? h * mask : maybe_dropout(h, p_dropout_, dropout);
  };
  return drop(torch::relu(layer1_(drop(torch::relu(layer0_(x)), mask0))), mask1);
}

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
  c.query_weight = attention_layer_->query_weight(recurrent_products_);
  c.attention_weight = make_step_weight(
      recurrent_products_, attention_rnn_->weight_ih.narrow(1, prenet_dim_, encoder_dim_),
      attention_rnn_->weight_hh);
  c.decoder_weight =
      make_step_weight(recurrent_products_, decoder_rnn_->weight_ih, decoder_rnn_->weight_hh);
  c.decoder_bias = decoder_rnn_->bias_ih + decoder_rnn_->bias_hh;
  c.v = attention_layer_->v_weight();
  c.location_padding = attention_layer_->location_padding();
  if (decoder_step_ == config::DecoderStep::kFused) {
    detail::share_step_constants(c.memory, c.processed_memory, c.location, c.v, c.decoder_bias,
                                 c.constant_gradients);
  }
  return c;
}

config::DecoderStep decoder_step_for(config::DecoderStep asked, const torch::Device& device) {
  switch (asked) {
    case config::DecoderStep::kFused:
      return device.is_cpu() ? config::DecoderStep::kFused : config::DecoderStep::kComposed;
    case config::DecoderStep::kFusedCuda:
      return config::DecoderStep::kFused;
    case config::DecoderStep::kComposed:
      break;
  }
  return config::DecoderStep::kComposed;
}

void DecoderImpl::set_decoder_step(config::DecoderStep how) {
  TTS_CHECK(how != config::DecoderStep::kFusedCuda,
            "the decoder takes model.decoder_step resolved for its device (decoder_step_for)");
  decoder_step_ = how;
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
  const detail::DecoderStepConstants constants{c.memory,
                                               c.processed_memory,
                                               c.mask,
                                               c.location,
                                               c.v,
                                               c.decoder_bias,
                                               &c.attention_weight,
                                               &c.query_weight,
                                               &c.decoder_weight,
                                               c.location_padding,
                                               c.constant_gradients};
  if (decoder_step_ == config::DecoderStep::kFused &&
      detail::fused_decoder_step_applies(constants, input_gates, attention_mask, decoder_mask, s)) {
    return detail::fused_decoder_step(constants, input_gates, attention_mask, decoder_mask, s);
  }
  torch::Tensor attention_gates =
      recurrent_linear(c.attention_weight, input_gates, torch::cat({s.context, s.attention_h}, 1));
  std::tie(s.attention_h, s.attention_c) =
      lstm_cell_pointwise(attention_gates, s.attention_c, attention_mask);

  torch::Tensor weights;
  std::tie(s.context, weights) =
      attention_layer_->step(c.query_weight, s.attention_h, c.processed_memory, c.memory,
                             s.weights_and_cumulative, c.location, c.mask);
  s.weights_and_cumulative =
      torch::cat({weights, s.weights_and_cumulative.narrow(1, 1, 1) + weights}, 1);

  torch::Tensor decoder_gates = recurrent_linear(
      c.decoder_weight, c.decoder_bias, torch::cat({s.attention_h, s.context, s.decoder_h}, 1));
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
                                   const torch::Tensor& mel, const BatchContext& context,
                                   const torch::Tensor& mel_lengths) {
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
  // Keyed masks (Note [Dropout keyed by utterance]) cover each row's own decoder steps.
  const bool keyed = context.keyed();
  TTS_CHECK(!keyed || mel_lengths.defined(),
            "decoder: keyed dropout needs each row's mel_lengths (the masks' extents)");
  const torch::Tensor row_steps = keyed ? decoder_steps(mel_lengths, r_) : torch::Tensor();
  auto keyed_mask = [&](double p, uint64_t layer, int64_t channels) {
    return step_major_mask(p, layer, steps, channels, row_steps, context, memory.options());
  };
  auto step_masks = [&](double p, uint64_t layer, int64_t channels) {
    if (!keyed || !is_training())
      return dropout_masks(p, {steps, batch, channels}, memory.options());
    torch::Tensor masks = keyed_mask(p, layer, channels);
    return masks.defined() ? masks.contiguous().unbind(0) : std::vector<torch::Tensor>(steps);
  };
  const double p_prenet = context.prenet_dropout ? prenet_->p_dropout() : 0.0;
  torch::Tensor prenet_out =
      keyed ? prenet_->forward(prenet_input(previous),
                               keyed_mask(p_prenet, dropout_layer::kPrenet, prenet_dim_),
                               keyed_mask(p_prenet, dropout_layer::kPrenet + 1, prenet_dim_),
                               context.prenet_dropout)
            : prenet_->forward(prenet_input(previous), {}, {}, context.prenet_dropout);
  std::vector<torch::Tensor> input_gates =
      attention_input_gates(prenet_out).unbind(0);  // steps x [B, 4 H_att]

  StepContext c = step_context(memory, mask);
  DecoderState s = initial_state(memory);
  std::vector<torch::Tensor> attention_masks =
      step_masks(p_attention_dropout_, dropout_layer::kAttentionRnn, attention_rnn_dim_);
  std::vector<torch::Tensor> decoder_masks =
      step_masks(p_decoder_dropout_, dropout_layer::kDecoderRnn, decoder_rnn_dim_);
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

DecoderImpl::Rows DecoderImpl::start(const torch::Tensor& memory, const torch::Tensor& mask,
                                     const BatchContext& context) {
  const int64_t batch = memory.size(0);
  Rows rows;
  rows.memory = memory;
  rows.mask = mask;
  rows.prenet_dropout = context.prenet_dropout;
  // Keyed prenet masks, every row over all max_decoder_steps steps: [B, max steps, C].
  const double p_prenet = context.prenet_dropout ? prenet_->p_dropout() : 0.0;
  if (context.keyed() && p_prenet > 0) {
    const torch::Tensor row_steps =
        torch::full({batch}, max_decoder_steps_, memory.options().dtype(torch::kInt64));
    for (int layer = 0; layer < 2; ++layer) {
      rows.prenet_masks[layer] =
          step_major_mask(p_prenet, dropout_layer::kPrenet + layer, max_decoder_steps_, prenet_dim_,
                          row_steps, context, memory.options())
              .transpose(0, 1)
              .contiguous();
    }
  }
  rows.state = initial_state(memory);
  rows.frame = torch::zeros({batch, r_ * n_mels_}, memory.options());
  rows.steps.assign(static_cast<size_t>(batch), 0);
  return rows;
}

DecoderImpl::RowsStep DecoderImpl::advance(Rows& rows) {
  const int64_t batch = rows.size();
  if (!rows.context) rows.context = step_context(rows.memory, rows.mask);
  torch::Tensor prenet_out;
  if (rows.prenet_masks[0].defined()) {
    // Each row's masks at its own step.
    const torch::Tensor index = torch::tensor(rows.steps, torch::kInt64).to(rows.memory.device());
    const torch::Tensor row = torch::arange(batch, index.options());
    prenet_out =
        prenet_->forward(prenet_input(rows.frame), rows.prenet_masks[0].index({row, index}),
                         rows.prenet_masks[1].index({row, index}), true);
  } else {
    prenet_out = prenet_->forward(prenet_input(rows.frame), {}, {}, rows.prenet_dropout);
  }
  auto attention_mask =
      dropout_masks(p_attention_dropout_, {1, batch, attention_rnn_dim_}, rows.memory.options())[0];
  auto decoder_mask =
      dropout_masks(p_decoder_dropout_, {1, batch, decoder_rnn_dim_}, rows.memory.options())[0];
  RowsStep out;
  out.weights = step(*rows.context, attention_input_gates(prenet_out), attention_mask, decoder_mask,
                     rows.state);
  std::tie(out.frames, out.gate) =
      project(torch::cat({rows.state.decoder_h, rows.state.context}, 1));
  rows.frame = out.frames;
  for (int64_t& steps : rows.steps) ++steps;
  return out;
}

namespace {

// `tensor` with its dimension `dim` cut or padded (with `fill`) to `length`.
torch::Tensor fit_axis(const torch::Tensor& tensor, int64_t dim, int64_t length, double fill) {
  const int64_t have = tensor.size(dim);
  if (have == length) return tensor;
  if (have > length) return tensor.narrow(dim, 0, length);
  std::vector<int64_t> shape = tensor.sizes().vec();
  shape[static_cast<size_t>(dim)] = length - have;
  return torch::cat({tensor, torch::full(shape, fill, tensor.options())}, dim);
}

// Every tensor of `rows` that holds a row per sentence (dimension 0), in one list, so that
// keeping and joining rows cannot miss one; undefined ones (unkeyed prenet masks) are skipped.
std::vector<torch::Tensor*> row_tensors(DecoderImpl::Rows& rows) {
  DecoderState& s = rows.state;
  return {&rows.memory, &rows.mask,     &rows.prenet_masks[0],    &rows.prenet_masks[1],
          &rows.frame,  &s.attention_h, &s.attention_c,           &s.decoder_h,
          &s.decoder_c, &s.context,     &s.weights_and_cumulative};
}

// The tensors of `rows` with a text axis: its dimension, and what a padded position holds.
struct TextAxis {
  torch::Tensor* tensor;
  int64_t dim;
  double fill;
};
std::vector<TextAxis> text_tensors(DecoderImpl::Rows& rows) {
  return {{&rows.memory, 1, 0.0},
          {&rows.mask, 1, 1.0},  // padded text is masked
          {&rows.state.weights_and_cumulative, 2, 0.0}};
}

// The rows' text axis cut or padded to `length`.
void fit_text(DecoderImpl::Rows& rows, int64_t length) {
  for (TextAxis& axis : text_tensors(rows)) {
    *axis.tensor = fit_axis(*axis.tensor, axis.dim, length, axis.fill);
  }
}

}  // namespace

void DecoderImpl::keep(Rows& rows, const std::vector<int64_t>& kept) const {
  const torch::Tensor index = torch::tensor(kept, torch::kInt64).to(rows.memory.device());
  for (torch::Tensor* t : row_tensors(rows)) {
    if (t->defined()) *t = t->index_select(0, index);
  }
  std::vector<int64_t> steps;
  for (int64_t row : kept) steps.push_back(rows.steps[static_cast<size_t>(row)]);
  rows.steps = std::move(steps);
  rows.context.reset();
  // The text axis as long as the longest kept text.
  if (!kept.empty()) fit_text(rows, rows.mask.logical_not().sum(1).max().item<int64_t>());
}

void DecoderImpl::join(Rows& rows, Rows more) const {
  if (rows.size() == 0) {
    rows = std::move(more);
    return;
  }
  TTS_CHECK(rows.prenet_masks[0].defined() == more.prenet_masks[0].defined(),
            "decoder: rows with keyed prenet masks join only rows with keyed masks");
  const int64_t text = std::max(rows.memory.size(1), more.memory.size(1));
  fit_text(rows, text);
  fit_text(more, text);
  const std::vector<torch::Tensor*> into = row_tensors(rows);
  const std::vector<torch::Tensor*> from = row_tensors(more);
  for (size_t i = 0; i < into.size(); ++i) {
    if (into[i]->defined()) *into[i] = torch::cat({*into[i], *from[i]}, 0);
  }
  rows.steps.insert(rows.steps.end(), more.steps.begin(), more.steps.end());
  rows.context.reset();
}

std::pair<DecoderOutput, torch::Tensor> DecoderImpl::infer(const torch::Tensor& memory,
                                                           const torch::Tensor& mask,
                                                           const BatchContext& context) {
  const int64_t batch = memory.size(0);
  Rows rows = start(memory, mask, context);
  auto long_options = memory.options().dtype(torch::kInt64);
  torch::Tensor lengths = torch::zeros({batch}, long_options);
  torch::Tensor finished = torch::zeros({batch}, memory.options().dtype(torch::kBool));
  torch::Tensor frame_index = torch::arange(r_, long_options);
  std::vector<torch::Tensor> mels, gates, weights;
  for (int64_t t = 0; t < max_decoder_steps_; ++t) {
    RowsStep out = advance(rows);
    weights.push_back(out.weights);
    mels.push_back(out.frames);
    gates.push_back(out.gate);
    // An item stopping in this step keeps the frames up to its first stopping frame.
    torch::Tensor stops = torch::sigmoid(out.gate) > gate_threshold_;  // [B, r]
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

}  // namespace tts::tacotron2

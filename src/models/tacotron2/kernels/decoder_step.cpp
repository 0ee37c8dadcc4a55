// The fused decoder step (decoder_step.h). Forward: the attention LSTM's gates (one product from
// its input gates), its element-wise part, the query product, the location convolution, the
// scores and softmax, the context, the cumulative weights, the decoder LSTM's gates (one product)
// and its element-wise part. Backward: the same parts in reverse, the weight gradients of the
// three step weights buffered as recurrent_linear buffers them (StepGradient), the convolution's by
// libtorch's own convolution_backward, the context's by the two products BmmBackward runs.
#include "tts/models/tacotron2/kernels/decoder_step.h"

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <array>
#include <vector>

#include "autocast.h"
#include "fused_backward.h"
#include "fused_kernels.h"
#include "recurrent_product.h"

namespace tts::tacotron2::detail {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// What the node reads without a gradient edge of its own.
struct Plain {
  const DecoderStepConstants* constants;
  torch::Tensor attention_mask, decoder_mask;  // dropout masks, or empty tensors
};

// A stand-in for an undefined tensor in saved_data's tensor lists (which hold defined tensors).
const torch::Tensor& empty_tensor() {
  static const torch::Tensor empty = torch::empty({0});
  return empty;
}
torch::Tensor or_empty(const torch::Tensor& t) { return t.defined() ? t : empty_tensor(); }
torch::Tensor or_undefined(const torch::Tensor& t) { return t.numel() == 0 ? torch::Tensor() : t; }

// A RecurrentWeight's product weight, gradient buffers and panels, in and out of saved_data: the
// node's "kept" list holds the two masks, then kWeightEntries for each of the three weights (in
// the order attention, query, decoder: kept_weight), then the constants' gradient sums (kSums).
constexpr size_t kWeightEntries = 6;
constexpr size_t kept_weight(size_t i) { return 2 + i * kWeightEntries; }
constexpr size_t kSums = kept_weight(3);
void push_weight(std::vector<torch::Tensor>& out, const RecurrentWeight& w) {
  out.push_back(w.weight);
  out.push_back(or_empty(w.gradient.sum));
  out.push_back(or_empty(w.gradient.inputs));
  out.push_back(or_empty(w.gradient.grads));
  out.push_back(or_empty(w.gradient.rows));
  out.push_back(or_empty(w.panels));
}
StepGradient gradient_at(const std::vector<torch::Tensor>& v, size_t i) {
  return {or_undefined(v[i + 1]), or_undefined(v[i + 2]), or_undefined(v[i + 3]),
          or_undefined(v[i + 4])};
}
torch::Tensor panels_at(const std::vector<torch::Tensor>& v, size_t i) {
  return or_undefined(v[i + 5]);
}

torch::Tensor contiguous_or_zeros(const torch::Tensor& grad, const torch::Tensor& like) {
  return grad.defined() ? grad.contiguous() : torch::zeros_like(like);
}

// The CPU's attention kernels of the step: attention_score_forward_cpu and the cumulative
// weights; the weights' three gradients summed, then attention_score_backward_cpu.
AttentionStepForward attention_forward_cpu(const torch::Tensor& location,
                                           const torch::Tensor& processed,
                                           const torch::Tensor& query, const torch::Tensor& v,
                                           const torch::Tensor& mask,
                                           const torch::Tensor& weights_and_cumulative) {
  auto [activations, weights] = attention_score_forward_cpu(location, processed, query, v, mask);
  torch::Tensor new_cumulative = torch::empty_like(weights_and_cumulative);
  const int64_t batch = weights.size(0), time = weights.size(2);
  AT_DISPATCH_FLOATING_TYPES(weights.scalar_type(), "decoder_step_cumulative", [&] {
    const scalar_t* w = weights.data_ptr<scalar_t>();
    const scalar_t* previous = weights_and_cumulative.data_ptr<scalar_t>();
    scalar_t* out = new_cumulative.data_ptr<scalar_t>();
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t t = 0; t < time; ++t) {
        out[(2 * b) * time + t] = w[b * time + t];
        out[(2 * b + 1) * time + t] = previous[(2 * b + 1) * time + t] + w[b * time + t];
      }
    }
  });
  return {activations, weights, new_cumulative};
}

std::tuple<torch::Tensor, torch::Tensor, torch::Tensor> attention_backward_cpu(
    const torch::Tensor& activations, const torch::Tensor& weights, const torch::Tensor& v,
    const torch::Tensor& grad_weights, const torch::Tensor& grad_cumulative,
    const torch::Tensor& grad_weights_out) {
  const int64_t batch = weights.size(0), time = weights.size(2);
  AT_DISPATCH_FLOATING_TYPES(weights.scalar_type(), "decoder_step_weights_backward", [&] {
    scalar_t* g = grad_weights.data_ptr<scalar_t>();
    const scalar_t* gc = grad_cumulative.defined() ? grad_cumulative.data_ptr<scalar_t>() : nullptr;
    const scalar_t* go =
        grad_weights_out.defined() ? grad_weights_out.data_ptr<scalar_t>() : nullptr;
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t t = 0; t < time; ++t) {
        scalar_t sum = g[b * time + t];
        if (gc) sum += gc[(2 * b) * time + t] + gc[(2 * b + 1) * time + t];
        if (go) sum += go[b * time + t];
        g[b * time + t] = sum;
      }
    }
  });
  return attention_score_backward_cpu(activations, weights, v, grad_weights);
}

const StepKernels kCpuKernels{lstm_pointwise_forward_cpu, lstm_pointwise_backward_cpu,
                              attention_forward_cpu, attention_backward_cpu};

class DecoderStep : public torch::autograd::Function<DecoderStep> {
 public:
  static variable_list forward(AutogradContext* ctx, const torch::Tensor& input_gates,
                               const torch::Tensor& attention_h, const torch::Tensor& attention_c,
                               const torch::Tensor& decoder_h, const torch::Tensor& decoder_c,
                               const torch::Tensor& weights_and_cumulative,
                               const torch::Tensor& context,
                               const torch::Tensor& attention_weight_t,
                               const torch::Tensor& query_weight_t,
                               const torch::Tensor& decoder_weight_t,
                               const torch::Tensor& decoder_bias, const torch::Tensor& processed,
                               const torch::Tensor& memory, const torch::Tensor& location,
                               const torch::Tensor& v, Plain plain) {
    const DecoderStepConstants& k = *plain.constants;
    const StepKernels& kernels = *step_kernels(input_gates.device());
    // The attention LSTM.
    torch::Tensor x_attention = torch::cat({context, attention_h}, 1);
    torch::Tensor attention_gates =
        recurrent_product(input_gates, x_attention, attention_weight_t, k.attention_weight->path,
                          k.attention_weight->panels_t);
    LstmPointwiseForward attention =
        kernels.lstm_forward(attention_gates, attention_c, plain.attention_mask);
    // The attention.
    torch::Tensor query = recurrent_product({}, attention.h, query_weight_t, k.query_weight->path,
                                            k.query_weight->panels_t);
    torch::Tensor location_features =
        torch::conv1d(weights_and_cumulative, location, {}, 1, k.padding);
    auto [activations, weights, new_cumulative] = kernels.attention_forward(
        location_features, processed, query, v, k.mask, weights_and_cumulative);
    // The context as a tensor of its own (not a view), written by the product.
    torch::Tensor new_context = torch::empty({weights.size(0), memory.size(2)}, memory.options());
    torch::Tensor context_3d = new_context.unsqueeze(1);
    torch::bmm_out(context_3d, weights, memory);
    // The decoder LSTM.
    torch::Tensor x_decoder = torch::cat({attention.h, new_context, decoder_h}, 1);
    torch::Tensor decoder_gates =
        recurrent_product(decoder_bias, x_decoder, decoder_weight_t, k.decoder_weight->path,
                          k.decoder_weight->panels_t);
    LstmPointwiseForward decoder =
        kernels.lstm_forward(decoder_gates, decoder_c, plain.decoder_mask);

    ctx->save_for_backward({x_attention, attention.activations, attention_c, attention.tanh_c,
                            weights_and_cumulative, activations, memory, location, v, x_decoder,
                            decoder.activations, decoder_c, decoder.tanh_c, weights});
    std::vector<torch::Tensor> kept{plain.attention_mask, plain.decoder_mask};
    push_weight(kept, *k.attention_weight);
    push_weight(kept, *k.query_weight);
    push_weight(kept, *k.decoder_weight);
    const StepConstantGradients& sums = k.gradients;
    for (const torch::Tensor* t :
         {&sums.memory, &sums.processed_memory, &sums.location, &sums.v, &sums.decoder_bias}) {
      kept.push_back(or_empty(*t));
    }
    ctx->saved_data["kept"] = kept;
    ctx->saved_data["paths"] = std::vector<int64_t>{
        static_cast<int64_t>(k.attention_weight->path), static_cast<int64_t>(k.query_weight->path),
        static_cast<int64_t>(k.decoder_weight->path), k.padding};
    return {attention.h, attention.c, decoder.h, decoder.c, new_cumulative, new_context, weights};
  }

  // Over 80 lines: the forward's kernels undone in reverse order on the tensors the forward
  // saved, one straight sequence (pieces would pass a dozen saved tensors between them).
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    check_not_double_backward("DecoderStep");
    const variable_list saved = ctx->get_saved_variables();
    const torch::Tensor &x_attention = saved[0], &attention_activations = saved[1],
                        &attention_c = saved[2], &attention_tanh_c = saved[3],
                        &weights_and_cumulative = saved[4], &activations = saved[5],
                        &memory = saved[6], &location = saved[7], &v = saved[8],
                        &x_decoder = saved[9], &decoder_activations = saved[10],
                        &decoder_c = saved[11], &decoder_tanh_c = saved[12], &weights = saved[13];
    const std::vector<torch::Tensor> kept = ctx->saved_data["kept"].toTensorVector();
    const std::vector<int64_t> paths = ctx->saved_data["paths"].toIntVector();
    const torch::Tensor& attention_mask = kept[0];
    const torch::Tensor& decoder_mask = kept[1];
    const torch::Tensor &attention_weight = kept[kept_weight(0)],
                        &query_weight = kept[kept_weight(1)],
                        &decoder_weight = kept[kept_weight(2)];
    const auto path = [&](size_t i) { return static_cast<RecurrentProductPath>(paths[i]); };
    // The sums of the constants' gradients (memory, processed memory, location, v, bias), or none.
    const bool summed = kept[kSums].numel() > 0;
    auto hand_out = [&](size_t sum, const torch::Tensor& grad) {
      if (!summed || !grad.defined()) return grad;
      torch::Tensor target = kept[kSums + sum];
      target.add_(grad);
      return torch::Tensor();
    };
    const int64_t h_attention = attention_c.size(1), h_decoder = decoder_c.size(1);
    const int64_t encoder = memory.size(2);
    const StepKernels& kernels = *step_kernels(weights.device());

    // The decoder LSTM.
    auto [grad_decoder_gates, grad_decoder_c] = kernels.lstm_backward(
        decoder_activations, decoder_c, decoder_tanh_c, decoder_mask,
        contiguous_or_zeros(grads[2], decoder_c), contiguous_or_zeros(grads[3], decoder_c));
    torch::Tensor grad_bias =
        ctx->needs_input_grad(10) ? grad_decoder_gates.sum(0) : torch::Tensor();
    torch::Tensor grad_x_decoder = recurrent_product({}, grad_decoder_gates, decoder_weight,
                                                     path(2),  // [B, H_att + E + H_dec]
                                                     panels_at(kept, kept_weight(2)));
    if (ctx->needs_input_grad(9)) {
      StepGradient gradient = gradient_at(kept, kept_weight(2));
      if (gradient.defined()) add_step_rows(gradient, x_decoder, grad_decoder_gates);
    }
    torch::Tensor grad_attention_h = grad_x_decoder.narrow(1, 0, h_attention);
    if (grads[0].defined()) grad_attention_h = grad_attention_h + grads[0];
    torch::Tensor grad_context = grad_x_decoder.narrow(1, h_attention, encoder);
    if (grads[5].defined()) grad_context = grad_context + grads[5];
    torch::Tensor grad_decoder_h = grad_x_decoder.narrow(1, h_attention + encoder, h_decoder);

    // The context: the two products of BmmBackward.
    torch::Tensor grad_context_3d = grad_context.unsqueeze(1);  // [B, 1, E]
    torch::Tensor grad_weights = grad_context_3d.bmm(memory.transpose(1, 2)).contiguous();
    torch::Tensor grad_memory = weights.transpose(1, 2).bmm(grad_context_3d);
    // The weights reach the cumulative output twice, and the weights output.
    const torch::Tensor grad_cumulative =
        grads[4].defined() ? grads[4].contiguous() : torch::Tensor();
    const torch::Tensor grad_weights_out =
        grads[6].defined() ? grads[6].contiguous() : torch::Tensor();
    auto [grad_score, grad_query, grad_v] = kernels.attention_backward(
        activations, weights, v, grad_weights, grad_cumulative, grad_weights_out);
    // The location convolution.
    const int64_t padding = paths[3];
    auto [grad_previous, grad_location, grad_unused] = at::convolution_backward(
        grad_score, weights_and_cumulative, location, c10::nullopt, {1}, {padding}, {1}, false, {0},
        1, {ctx->needs_input_grad(5), ctx->needs_input_grad(13), false});
    (void)grad_unused;
    if (grad_cumulative.defined() && grad_previous.defined()) {
      // The cumulative weights pass on to the next step's.
      grad_previous.narrow(1, 1, 1).add_(grad_cumulative.narrow(1, 1, 1));
    }
    // The query.
    grad_attention_h = recurrent_product(grad_attention_h.contiguous(), grad_query, query_weight,
                                         path(1), panels_at(kept, kept_weight(1)));
    if (ctx->needs_input_grad(8)) {
      StepGradient gradient = gradient_at(kept, kept_weight(1));
      if (gradient.defined()) {
        add_step_rows(gradient, x_decoder.narrow(1, 0, h_attention), grad_query);
      }
    }
    // The attention LSTM.
    auto [grad_attention_gates, grad_attention_c] =
        kernels.lstm_backward(attention_activations, attention_c, attention_tanh_c, attention_mask,
                              grad_attention_h, contiguous_or_zeros(grads[1], attention_c));
    torch::Tensor grad_x_attention =
        recurrent_product({}, grad_attention_gates, attention_weight, path(0),  // [B, E + H_att]
                          panels_at(kept, kept_weight(0)));
    if (ctx->needs_input_grad(7)) {
      StepGradient gradient = gradient_at(kept, kept_weight(0));
      if (gradient.defined()) add_step_rows(gradient, x_attention, grad_attention_gates);
    }
    variable_list out(16);
    out[0] = grad_attention_gates;
    out[1] = grad_x_attention.narrow(1, encoder, h_attention);
    out[2] = grad_attention_c;
    out[3] = grad_decoder_h;
    out[4] = grad_decoder_c;
    out[5] = grad_previous;
    out[6] = grad_x_attention.narrow(1, 0, encoder);
    out[10] = hand_out(4, grad_bias);
    out[11] = hand_out(1, grad_score);
    out[12] = hand_out(0, grad_memory);
    out[13] = hand_out(2, grad_location);
    out[14] = hand_out(3, grad_v);
    return out;
  }
};

// (memory, processed memory, location, v, bias; the sums of their gradients) -> the five tensors
// as they are, for the steps to read; backward hands out the sums, plus what else reached the
// outputs, and clears the sums (a retained graph's next backward).
class StepConstants : public torch::autograd::Function<StepConstants> {
 public:
  static variable_list forward(AutogradContext* ctx, const torch::Tensor& memory,
                               const torch::Tensor& processed, const torch::Tensor& location,
                               const torch::Tensor& v, const torch::Tensor& bias,
                               const StepConstantGradients& sums) {
    ctx->set_materialize_grads(false);
    ctx->saved_data["sums"] = std::vector<torch::Tensor>{sums.memory, sums.processed_memory,
                                                         sums.location, sums.v, sums.decoder_bias};
    return {memory, processed, location, v, bias};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    check_not_double_backward("StepConstants");
    const std::vector<torch::Tensor> sums = ctx->saved_data["sums"].toTensorVector();
    variable_list out(6);
    for (size_t i = 0; i < sums.size(); ++i) {
      out[i] = grads[i].defined() ? sums[i] + grads[i] : sums[i].clone();
      sums[i].zero_();
    }
    return out;
  }
};

bool float_or_double(const torch::Tensor& t) {
  return t.scalar_type() == torch::kFloat || t.scalar_type() == torch::kDouble;
}

}  // namespace

bool fused_decoder_step_applies(const DecoderStepConstants& k, const torch::Tensor& input_gates,
                                const torch::Tensor& attention_mask,
                                const torch::Tensor& decoder_mask, const DecoderState& s) {
  const torch::Device device = input_gates.device();
  if (step_kernels(device) == nullptr || !float_or_double(input_gates) || autocast_dtype(device)) {
    return false;
  }
  const at::ScalarType dtype = input_gates.scalar_type();
  for (const torch::Tensor* t :
       {&s.attention_h, &s.attention_c, &s.decoder_h, &s.decoder_c, &s.weights_and_cumulative,
        &s.context, &k.memory, &k.processed_memory, &k.location, &k.v, &k.decoder_bias,
        &k.attention_weight->weight, &k.query_weight->weight, &k.decoder_weight->weight}) {
    if (!t->defined() || t->device() != device || t->scalar_type() != dtype) return false;
  }
  for (const torch::Tensor* t : {&attention_mask, &decoder_mask}) {
    if (t->defined() && (t->device() != device || t->scalar_type() != dtype)) return false;
  }
  const int64_t batch = input_gates.size(0), time = k.memory.size(1);
  return k.mask.device() == device && k.mask.scalar_type() == torch::kBool && k.mask.dim() == 3 &&
         k.mask.size(0) == batch && k.mask.size(1) == 1 && k.mask.size(2) == time &&
         k.mask.is_contiguous() && k.processed_memory.size(2) == time &&
         k.processed_memory.is_contiguous() && k.memory.is_contiguous() && k.v.dim() == 1 &&
         k.v.is_contiguous() && input_gates.is_contiguous() &&
         s.weights_and_cumulative.is_contiguous() && s.attention_c.is_contiguous() &&
         s.decoder_c.is_contiguous();
}

const StepKernels* step_kernels(const torch::Device& device) {
  if (device.is_cpu()) return &kCpuKernels;
#ifdef TTS_WITH_CUDA
  if (device.is_cuda()) return &cuda_step_kernels();
#endif
  return nullptr;
}

void share_step_constants(torch::Tensor& memory, torch::Tensor& processed_memory,
                          torch::Tensor& location, torch::Tensor& v, torch::Tensor& decoder_bias,
                          StepConstantGradients& gradients) {
  std::array<torch::Tensor*, 5> tensors{&memory, &processed_memory, &location, &v, &decoder_bias};
  bool needs_grad = false;
  for (torch::Tensor* t : tensors) {
    if (step_kernels(t->device()) == nullptr || t->device() != memory.device() ||
        !float_or_double(*t) || t->scalar_type() != memory.scalar_type()) {
      return;
    }
    needs_grad = needs_grad || t->requires_grad();
  }
  if (!torch::GradMode::is_enabled() || !needs_grad || autocast_dtype(memory.device())) return;
  {
    torch::NoGradGuard no_grad;
    gradients = {torch::zeros_like(memory), torch::zeros_like(processed_memory),
                 torch::zeros_like(location), torch::zeros_like(v),
                 torch::zeros_like(decoder_bias)};
  }
  variable_list shared =
      StepConstants::apply(memory, processed_memory, location, v, decoder_bias, gradients);
  for (size_t i = 0; i < tensors.size(); ++i) *tensors[i] = shared[i];
}

torch::Tensor fused_decoder_step(const DecoderStepConstants& k, const torch::Tensor& input_gates,
                                 const torch::Tensor& attention_mask,
                                 const torch::Tensor& decoder_mask, DecoderState& s) {
  NoAutocast no_autocast;
  Plain plain{&k, attention_mask.defined() ? attention_mask.contiguous() : empty_tensor(),
              decoder_mask.defined() ? decoder_mask.contiguous() : empty_tensor()};
  variable_list out = DecoderStep::apply(
      input_gates, s.attention_h, s.attention_c, s.decoder_h, s.decoder_c, s.weights_and_cumulative,
      s.context, k.attention_weight->weight_t, k.query_weight->weight_t, k.decoder_weight->weight_t,
      k.decoder_bias, k.processed_memory, k.memory, k.location, k.v, plain);
  s.attention_h = out[0];
  s.attention_c = out[1];
  s.decoder_h = out[2];
  s.decoder_c = out[3];
  s.weights_and_cumulative = out[4];
  s.context = out[5];
  return out[6];
}

}  // namespace tts::tacotron2::detail

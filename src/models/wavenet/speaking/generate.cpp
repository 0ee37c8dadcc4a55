#include "tts/models/wavenet/speaking/generate.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "tts/core/cpu_features.h"
#include "tts/core/error.h"
#include "tts/models/convolution_stream.h"
#include "tts/models/wavenet/layers/mixture.h"

namespace tts::wavenet {
namespace {

// Samples whose conditioning projections one matrix product computes: large enough for the BLAS
// to run near its peak, small enough to stay in cache.
constexpr int64_t kConditioningBlock = 64;

// out [rows, n] += a [rows, k] @ b [k, n], all contiguous. Four rows of b a pass, so each output
// element is loaded and stored a quarter as often; the compiler vectorizes the inner loop.
[[gnu::always_inline]] inline void accumulate_body(int64_t rows, int64_t k, int64_t n,
                                                   const float* __restrict a,
                                                   const float* __restrict b,
                                                   float* __restrict out) {
  for (int64_t r = 0; r < rows; ++r) {
    float* __restrict o = out + r * n;
    const float* ar = a + r * k;
    int64_t i = 0;
    for (; i + 4 <= k; i += 4) {
      const float v0 = ar[i], v1 = ar[i + 1], v2 = ar[i + 2], v3 = ar[i + 3];
      const float* b0 = b + i * n;
      const float* b1 = b0 + n;
      const float* b2 = b1 + n;
      const float* b3 = b2 + n;
      for (int64_t j = 0; j < n; ++j) o[j] += v0 * b0[j] + v1 * b1[j] + v2 * b2[j] + v3 * b3[j];
    }
    for (; i < k; ++i) {
      const float v = ar[i];
      const float* bi = b + i * n;
      for (int64_t j = 0; j < n; ++j) o[j] += v * bi[j];
    }
  }
}

#if TTS_X86_KERNELS
__attribute__((target("avx2,fma"))) void accumulate_avx2(int64_t rows, int64_t k, int64_t n,
                                                         const float* a, const float* b,
                                                         float* out) {
  accumulate_body(rows, k, n, a, b, out);
}
#endif

void accumulate(int64_t rows, int64_t k, int64_t n, const float* a, const float* b, float* out) {
#if TTS_X86_KERNELS
  if (cpu::has_avx2_fma()) return accumulate_avx2(rows, k, n, a, b, out);
#endif
  accumulate_body(rows, k, n, a, b, out);
}

// A weight as the steps multiply with it: [in, out] contiguous, from a conv weight [out, in, 1].
torch::Tensor step_weight(const WeightNormConv& conv) {
  return conv->weight().detach().to(torch::kCPU, torch::kFloat).squeeze(2).t().contiguous();
}
torch::Tensor step_bias(const WeightNormConv& conv) {
  return conv->bias.detach().to(torch::kCPU, torch::kFloat).contiguous();
}

// One residual layer's weights and input queue.
struct LayerState {
  int64_t dilation;
  torch::Tensor conv;           // [k, R, G]: tap j multiplies the input (k-1-j)*dilation steps back
  torch::Tensor out_skip;       // [G/2, R + S]: conv1x1_out and conv1x1_skip side by side
  torch::Tensor out_skip_bias;  // [R + S]
  torch::Tensor queue;  // [(k-1)*dilation + 1, B, R], a ring: step t's input at t mod length
};

// The network folded into plain matrices for one batch, stepped one sample at a time.
class Incremental {
 public:
  // `conditioning` [T, B, n_mels]: the upsampled mels of the samples known so far (extend()
  // appends the next ones).
  Incremental(WaveNet& model, const torch::Tensor& conditioning, const torch::Tensor& g)
      : options_(model->options()) {
    TTS_CHECK(!model->is_training(),
              "WaveNet generation: the model is in training mode (dropout); call model->eval()");
    torch::NoGradGuard no_grad;
    batch_ = conditioning.size(1);
    const int64_t r = options_.residual_channels;
    const int64_t gate = options_.gate_channels;
    conditioning_ = conditioning.to(torch::kCPU, torch::kFloat).contiguous();
    steps_ = conditioning_.size(0);
    // Every layer's conditioning weight side by side, its conv bias and the speaker's projection
    // folded into one bias per utterance: [B, L*G].
    std::vector<torch::Tensor> cond_weights;
    std::vector<torch::Tensor> cond_biases;
    torch::Tensor speaker = model->global_features(g, batch_);  // [B, gin, 1] or undefined
    for (auto& layer : model->layers) {
      cond_weights.push_back(step_weight(layer->conv1x1c));
      torch::Tensor bias = step_bias(layer->conv).expand({batch_, gate});
      if (speaker.defined()) {
        bias =
            bias +
            speaker.squeeze(2).to(torch::kCPU, torch::kFloat).matmul(step_weight(layer->conv1x1g));
      }
      cond_biases.push_back(bias);
      LayerState state;
      state.dilation = layer->conv->dilation;
      state.conv = layer->conv->weight()
                       .detach()
                       .to(torch::kCPU, torch::kFloat)
                       .permute({2, 1, 0})
                       .contiguous();
      state.out_skip =
          torch::cat({step_weight(layer->conv1x1_out), step_weight(layer->conv1x1_skip)}, 1)
              .contiguous();
      state.out_skip_bias =
          torch::cat({step_bias(layer->conv1x1_out), step_bias(layer->conv1x1_skip)}).contiguous();
      state.queue = torch::zeros({(options_.kernel_size - 1) * state.dilation + 1, batch_, r});
      layers_.push_back(state);
    }
    cond_weight_ = torch::cat(cond_weights, 1).contiguous();  // [n_mels, L*G]
    cond_bias_ = torch::cat(cond_biases, 1).contiguous();     // [B, L*G]
    first_weight_ = step_weight(model->first_conv).reshape({r});
    first_bias_ = step_bias(model->first_conv);
    last1_ = step_weight(model->last_conv1);
    last1_bias_ = step_bias(model->last_conv1);
    last3_ = step_weight(model->last_conv3);
    last3_bias_ = step_bias(model->last_conv3);
    const int64_t s = options_.skip_out_channels;
    x_ = torch::zeros({batch_, r});
    gate_ = torch::zeros({batch_, gate});
    z_ = torch::zeros({batch_, gate / 2});
    out_skip_ = torch::zeros({batch_, r + s});
    skips_ = torch::zeros({batch_, s});
    hidden_ = torch::zeros({batch_, s});
    logits_ = torch::zeros({batch_, options_.out_channels});
  }

  // Samples whose conditioning is known: step(t) takes t below it.
  int64_t steps() const { return steps_; }
  int64_t batch() const { return batch_; }
  // Appends the conditioning of the next samples [n, B, n_mels].
  void extend(const torch::Tensor& columns) {
    conditioning_ = torch::cat({conditioning_, columns.to(torch::kCPU, torch::kFloat)}, 0);
    steps_ += columns.size(0);
  }
  // Whether step(t) may run now: it starts a block of conditioning products (t a multiple of
  // kConditioningBlock) only when the whole block is known or `complete` (no more will come), so
  // that the blocks, and the sums in them, are the same however the conditioning arrived.
  bool ready(int64_t t, bool complete) const {
    return t < steps_ &&
           (t % kConditioningBlock != 0 || complete || steps_ - t >= kConditioningBlock);
  }

  // The output [B, C] of step t for the inputs input[b] (the sample before t); a view of a
  // buffer the next step overwrites.
  const torch::Tensor& step(int64_t t, const float* input) {
    if (t % kConditioningBlock == 0) project_conditioning(t);
    const int64_t r = options_.residual_channels;
    const int64_t gate = options_.gate_channels;
    const int64_t half = gate / 2;
    const int64_t s = options_.skip_out_channels;
    const int64_t k = options_.kernel_size;
    const int64_t lg = static_cast<int64_t>(layers_.size()) * gate;
    float* x = x_.data_ptr<float>();
    const float* fw = first_weight_.data_ptr<float>();
    const float* fb = first_bias_.data_ptr<float>();
    for (int64_t b = 0; b < batch_; ++b) {
      for (int64_t i = 0; i < r; ++i) x[b * r + i] = input[b] * fw[i] + fb[i];
    }
    float* skips = skips_.data_ptr<float>();
    std::fill(skips, skips + batch_ * s, 0.0f);
    const float* cond = block_.data_ptr<float>() + (t % kConditioningBlock) * batch_ * lg;
    const float root_half = static_cast<float>(std::sqrt(0.5));
    float* gate_values = gate_.data_ptr<float>();
    float* z = z_.data_ptr<float>();
    float* os = out_skip_.data_ptr<float>();
    for (size_t l = 0; l < layers_.size(); ++l) {
      LayerState& layer = layers_[l];
      const int64_t length = layer.queue.size(0);
      float* queue = layer.queue.data_ptr<float>();
      std::copy(x, x + batch_ * r, queue + (t % length) * batch_ * r);
      for (int64_t b = 0; b < batch_; ++b) {
        std::copy(cond + b * lg + l * gate, cond + b * lg + (l + 1) * gate, gate_values + b * gate);
      }
      const float* w = layer.conv.data_ptr<float>();
      for (int64_t j = 0; j < k; ++j) {
        const int64_t back = (k - 1 - j) * layer.dilation;
        if (back > t) continue;  // before the first sample: the queue's zeros
        const float* tap = queue + ((t - back) % length) * batch_ * r;
        accumulate(batch_, r, gate, tap, w + j * r * gate, gate_values);
      }
      // tanh(a) * sigmoid(b), with tanh(a) = 2 sigmoid(2a) - 1: one vectorized sigmoid for both.
      for (int64_t b = 0; b < batch_; ++b) {
        for (int64_t i = 0; i < half; ++i) gate_values[b * gate + i] *= 2.0f;
      }
      gate_.sigmoid_();
      for (int64_t b = 0; b < batch_; ++b) {
        const float* a = gate_values + b * gate;
        for (int64_t i = 0; i < half; ++i) z[b * half + i] = (2.0f * a[i] - 1.0f) * a[half + i];
      }
      const float* bias = layer.out_skip_bias.data_ptr<float>();
      for (int64_t b = 0; b < batch_; ++b) std::copy(bias, bias + r + s, os + b * (r + s));
      accumulate(batch_, half, r + s, z, layer.out_skip.data_ptr<float>(), os);
      for (int64_t b = 0; b < batch_; ++b) {
        for (int64_t i = 0; i < r; ++i) {
          x[b * r + i] = (os[b * (r + s) + i] + x[b * r + i]) * root_half;
        }
        for (int64_t i = 0; i < s; ++i) skips[b * s + i] += os[b * (r + s) + r + i];
      }
    }
    const float scale = static_cast<float>(std::sqrt(1.0 / static_cast<double>(layers_.size())));
    for (int64_t i = 0; i < batch_ * s; ++i) skips[i] = std::max(skips[i] * scale, 0.0f);
    dense(skips_, last1_, last1_bias_, hidden_);
    float* hidden = hidden_.data_ptr<float>();
    for (int64_t i = 0; i < batch_ * s; ++i) hidden[i] = std::max(hidden[i], 0.0f);
    dense(hidden_, last3_, last3_bias_, logits_);
    return logits_;
  }

 private:
  // out [B, N] = bias + in [B, K] @ weight [K, N].
  void dense(const torch::Tensor& in, const torch::Tensor& weight, const torch::Tensor& bias,
             torch::Tensor& out) {
    const int64_t n = weight.size(1);
    const float* b = bias.data_ptr<float>();
    float* o = out.data_ptr<float>();
    for (int64_t row = 0; row < batch_; ++row) std::copy(b, b + n, o + row * n);
    accumulate(batch_, weight.size(0), n, in.data_ptr<float>(), weight.data_ptr<float>(), o);
  }

  // The conditioning of every layer for samples t .. t + kConditioningBlock: [n, B, L*G].
  void project_conditioning(int64_t t) {
    const int64_t n = std::min(kConditioningBlock, steps_ - t);
    // Rows before t are used up: drop them (a stream's conditioning then stays a block long).
    conditioning_ = conditioning_.narrow(0, t - base_, steps_ - t);
    base_ = t;
    torch::Tensor c = conditioning_.narrow(0, 0, n).reshape({n * batch_, -1});
    block_ = torch::addmm(cond_bias_.repeat({n, 1}), c, cond_weight_).contiguous();
  }

  config::WavenetOptions options_;
  int64_t batch_ = 0;
  int64_t steps_ = 0;
  torch::Tensor conditioning_;  // [T - base_, B, n_mels]: rows base_ .. T of the conditioning
  int64_t base_ = 0;
  torch::Tensor cond_weight_;  // [n_mels, L*G]
  torch::Tensor cond_bias_;    // [B, L*G]
  torch::Tensor block_;        // [kConditioningBlock, B, L*G]
  std::vector<LayerState> layers_;
  torch::Tensor first_weight_, first_bias_;  // [R]
  torch::Tensor last1_, last1_bias_;         // [S, S], [S]
  torch::Tensor last3_, last3_bias_;         // [S, C], [C]
  // Buffers every step reuses.
  torch::Tensor x_, gate_, z_, out_skip_, skips_, hidden_, logits_;
};

// A mel [B, n_mels, F + 2*cin_pad] upsampled to the conditioning [F * hop, B, n_mels].
torch::Tensor conditioning_of(WaveNet& model, const torch::Tensor& mel) {
  TTS_CHECK(mel.dim() == 3 && mel.size(1) == model->cin_channels() &&
                mel.size(2) > 2 * model->options().cin_pad,
            "WaveNet generation: expected mels [B, {}, frames + {}] (2*cin_pad frames of "
            "context: pad_mel()), found {}",
            model->cin_channels(), 2 * model->options().cin_pad, mel.sizes());
  torch::NoGradGuard no_grad;
  return model->upsample_net->forward(mel.to(model->first_conv->weight_v.device()))
      .to(torch::kCPU, torch::kFloat)
      .permute({2, 0, 1})
      .contiguous();
}

// Steps `net` from sample `t` while it may (Incremental::ready), each sample drawn from the
// previous one's output; appends the samples of row 0 to `out` when given. Returns the next t.
int64_t run_steps(Incremental& net, int64_t t, bool complete, const config::WavenetOptions& options,
                  at::Generator& generator, std::vector<float>& previous, torch::Tensor* audio,
                  std::vector<float>* out) {
  for (; net.ready(t, complete); ++t) {
    torch::Tensor sample =
        sample_mixture(net.step(t, previous.data()), options.output_distribution, generator);
    std::copy(sample.data_ptr<float>(), sample.data_ptr<float>() + net.batch(), previous.begin());
    if (audio != nullptr) (*audio)[t].copy_(sample);
    if (out != nullptr) out->push_back(previous[0]);
  }
  return t;
}

// One utterance generated as its mel frames come: the frames upsampled a window at a time with the
// upsampling network's reach around each chunk (upsampling_field), the samples stepped as far as
// the conditioning goes.
class GenerationStream final : public models::VocoderStream {
 public:
  GenerationStream(WaveNet& model, uint64_t seed, const torch::Tensor& g, models::ChunkPlan plan)
      : model_(model),
        upsampled_(
            [this](const torch::Tensor& frames) {
              const torch::Tensor mel = pad_mel(frames.t().unsqueeze(0), model_->options().cin_pad);
              return conditioning_of(model_, mel).squeeze(1);  // [n * hop, n_mels]
            },
            model->cin_channels(), model->hop(), upsampling_field(model->options()), plan),
        net_(model, torch::zeros({0, 1, model->cin_channels()}), g),
        generator_(at::detail::createCPUGenerator(seed)),
        previous_(1, 0.0f) {}

  std::vector<float> push(const torch::Tensor& frames, bool last) override {
    torch::NoGradGuard no_grad;
    const torch::Tensor columns = upsampled_.push(frames, last);
    if (columns.defined()) net_.extend(columns.unsqueeze(1));
    std::vector<float> samples;
    t_ = run_steps(net_, t_, last, model_->options(), generator_, previous_, nullptr, &samples);
    return samples;
  }

 private:
  WaveNet model_;
  models::WindowedNetwork upsampled_;
  Incremental net_;
  at::Generator generator_;
  std::vector<float> previous_;  // r9y9 starts from a zero sample
  int64_t t_ = 0;
};

}  // namespace

models::ReceptiveField upsampling_field(const config::WavenetOptions& options) {
  models::ReceptiveField field;
  // The edge frames repeated cin_pad times (pad_mel) and conv_in's 2*cin_pad+1 taps over them.
  field.convolution(2 * options.cin_pad + 1);
  for (int64_t scale : options.upsample_scales) {
    field.stretch(scale);
    field.convolution(2 * scale + 1);
  }
  return field;
}

torch::Tensor generate(WaveNet& model, const torch::Tensor& mel, uint64_t seed,
                       const torch::Tensor& g) {
  torch::NoGradGuard no_grad;
  Incremental net(model, conditioning_of(model, mel), g);
  at::Generator generator = at::detail::createCPUGenerator(seed);
  torch::Tensor audio = torch::zeros({net.steps(), net.batch()});
  std::vector<float> previous(net.batch(), 0.0f);  // r9y9 starts from a zero sample
  run_steps(net, 0, true, model->options(), generator, previous, &audio, nullptr);
  return audio.t().contiguous();
}

std::unique_ptr<models::VocoderStream> generation_stream(WaveNet& model, uint64_t seed,
                                                         const torch::Tensor& g,
                                                         const models::ChunkPlan& plan) {
  return std::make_unique<GenerationStream>(model, seed, g, plan);
}

torch::Tensor incremental_logits(WaveNet& model, const torch::Tensor& mel, const torch::Tensor& x,
                                 const torch::Tensor& g) {
  torch::NoGradGuard no_grad;
  Incremental net(model, conditioning_of(model, mel), g);
  TTS_CHECK(x.dim() == 3 && x.size(0) == net.batch() && x.size(1) == 1 && x.size(2) == net.steps(),
            "incremental_logits: expected inputs [{}, 1, {}] for the mels given, found {}",
            net.batch(), net.steps(), x.sizes());
  torch::Tensor inputs = x.squeeze(1).t().to(torch::kCPU, torch::kFloat).contiguous();  // [T, B]
  torch::Tensor out = torch::empty({net.steps(), net.batch(), model->options().out_channels});
  for (int64_t t = 0; t < net.steps(); ++t) {
    out[t].copy_(net.step(t, inputs.data_ptr<float>() + t * net.batch()));
  }
  return out.permute({1, 2, 0}).contiguous();
}

}  // namespace tts::wavenet

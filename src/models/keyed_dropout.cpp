#include "tts/models/keyed_dropout.h"

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <cmath>
#include <limits>

#include "tts/core/cpu_features.h"
#include "tts/core/error.h"
#include "tts/core/hash.h"

namespace tts::models {
namespace {

constexpr int64_t kLow32 = 0xFFFFFFFFLL;
constexpr uint32_t kLayerSalt = 0x9e3779b9U;

uint32_t low32(uint64_t x) { return static_cast<uint32_t>(x & 0xFFFFFFFFULL); }
uint32_t high32(uint64_t x) { return static_cast<uint32_t>(x >> 32); }

// A 64-bit value folded into a well-mixed 32-bit one.
uint32_t fold(uint64_t x, uint32_t salt) { return mix32(low32(x) ^ mix32(high32(x) ^ salt)); }

uint32_t seed_key(uint64_t seed) { return fold(mix64(seed), 0); }
uint32_t layer_key(uint64_t layer) { return fold(layer, kLayerSalt); }

// x * c mod 2^32 for x an int64 tensor in [0, 2^32): in 16-bit halves of c, never past 2^49.
torch::Tensor mul32(const torch::Tensor& x, uint32_t c) {
  const int64_t low = c & 0xFFFFU;
  const int64_t high = c >> 16;
  return (x * low + (x * high).bitwise_and(0xFFFF) * 65536).bitwise_and(kLow32);
}

torch::Tensor xor_shift(const torch::Tensor& x, int bits) {
  return x.bitwise_xor(torch::bitwise_right_shift(x, bits));
}

// The keep threshold on a hash's top 24 bits: kept when below it (a float uniform u < 1 - p).
int64_t keep_threshold(double p) { return static_cast<int64_t>(std::ceil((1 - p) * 16777216.0)); }

void check_mask_request(double p, int64_t T, int64_t C, const torch::Tensor& lengths,
                        int64_t rows) {
  TTS_CHECK(p > 0 && p < 1, "keyed dropout: p = {} is not in (0, 1)", p);
  TTS_CHECK(T >= 0 && C >= 0 && (T == 0 || C <= std::numeric_limits<uint32_t>::max() / T),
            "keyed dropout: a mask of {} x {} positions per row, past 2^32", T, C);
  TTS_CHECK(lengths.defined() && lengths.dim() == 1 && lengths.size(0) == rows &&
                lengths.scalar_type() == torch::kInt64,
            "keyed dropout: lengths int64 [{}] (one per utterance) expected, got {}", rows,
            lengths.defined() ? c10::str(lengths.sizes()) : std::string("none"));
}

// Row b's kept values at one step t: element c of `row` (C of them) is `kept` when the hash of
// (row_key, position + c) falls below the threshold, else 0. Integer arithmetic, so the AVX2
// build of the loop gives the same values as the portable one.
inline void fill_row(float* row, int64_t C, uint32_t row_key, uint32_t position, uint32_t threshold,
                     float kept) {
  for (int64_t c = 0; c < C; ++c) {
    const uint32_t h = mix32(row_key ^ mix32(position + static_cast<uint32_t>(c)));
    row[c] = (h >> 8) < threshold ? kept : 0.0f;
  }
}

#if TTS_X86_KERNELS
__attribute__((target("avx2"))) void fill_row_avx2(float* row, int64_t C, uint32_t row_key,
                                                   uint32_t position, uint32_t threshold,
                                                   float kept) {
  fill_row(row, C, row_key, position, threshold, kept);
}
#endif

}  // namespace

torch::Tensor mix32(const torch::Tensor& x) {
  torch::Tensor y = mul32(xor_shift(x, 16), 0x7feb352dU);
  y = mul32(xor_shift(y, 15), 0x846ca68bU);
  return xor_shift(y, 16);
}

KeyedDropout::KeyedDropout(uint64_t seed, int64_t step, const std::vector<std::string>& ids,
                           const torch::Device& device) {
  const uint32_t step_key = fold(static_cast<uint64_t>(step), seed_key(seed));
  std::vector<int64_t> keys;
  keys.reserve(ids.size());
  for (const std::string& id : ids) {
    keys.push_back(mix32(static_cast<uint32_t>(utterance_key(id)) ^ step_key));
  }
  keys_ = torch::tensor(keys, torch::kInt64).to(device);
}

KeyedDropout::KeyedDropout(uint64_t seed, const torch::Tensor& step,
                           const torch::Tensor& utterance_keys) {
  TTS_CHECK(step.defined() && step.dim() == 0 && step.scalar_type() == torch::kInt64,
            "keyed dropout: the step must be a 0-dim int64 tensor");
  TTS_CHECK(utterance_keys.defined() && utterance_keys.dim() == 1 &&
                utterance_keys.scalar_type() == torch::kInt64,
            "keyed dropout: utterance keys int64 [B] expected (Batch::utterance_keys)");
  torch::NoGradGuard no_grad;
  // fold(step, seed_key) and mix32(key ^ step_key), as the host constructor computes them.
  const torch::Tensor s = step.to(utterance_keys.device());
  const torch::Tensor high =
      mix32(torch::bitwise_right_shift(s, 32).bitwise_xor(static_cast<int64_t>(seed_key(seed))));
  const torch::Tensor step_key = mix32(s.bitwise_and(kLow32).bitwise_xor(high));
  keys_ = mix32(utterance_keys.bitwise_xor(step_key));
}

torch::Tensor KeyedDropout::mask(uint64_t layer, double p, int64_t T, int64_t C,
                                 const std::vector<int64_t>& lengths,
                                 const torch::TensorOptions& options) const {
  return mask(layer, p, T, C, torch::tensor(lengths, torch::kInt64), options);
}

torch::Tensor KeyedDropout::mask(uint64_t layer, double p, int64_t T, int64_t C,
                                 const torch::Tensor& lengths,
                                 const torch::TensorOptions& options) const {
  check_mask_request(p, T, C, lengths, rows());
  if (options.device().type() != torch::kCPU || keys_.device().type() != torch::kCPU) {
    return mask_by_tensor_operations(layer, p, T, C, lengths, options);
  }
  torch::NoGradGuard no_grad;
  const torch::Tensor lengths_here = lengths.to(torch::kCPU).contiguous();
  const torch::Tensor keys = keys_.contiguous();
  torch::Tensor mask = torch::empty({rows(), T, C}, options.dtype(torch::kFloat32));
  const int64_t* length = lengths_here.data_ptr<int64_t>();
  const int64_t* key = keys.data_ptr<int64_t>();
  float* out = mask.data_ptr<float>();
  const uint32_t layer_hash = layer_key(layer);
  const uint32_t threshold = static_cast<uint32_t>(keep_threshold(p));
  // In float the kept value is written at once; another dtype scales after its conversion, as
  // mask_by_tensor_operations does (1 / (1 - p) rounded to that dtype, not to float's).
  const bool in_float = options.dtype() == caffe2::TypeMeta::Make<float>();
  const float kept_value = in_float ? static_cast<float>(1 / (1 - p)) : 1.0f;
  const int64_t row_size = T * C;
#if TTS_X86_KERNELS
  const bool avx2 = cpu::has_avx2_fma();
#endif
  at::parallel_for(0, rows() * T, 16, [&](int64_t begin, int64_t end) {
    for (int64_t bt = begin; bt < end; ++bt) {
      const int64_t b = bt / T;
      const int64_t t = bt % T;
      float* row = out + b * row_size + t * C;
      if (t >= length[b]) {
        std::fill(row, row + C, 0.0f);
        continue;
      }
      const uint32_t row_key = mix32(static_cast<uint32_t>(key[b]) ^ layer_hash);
      const auto position = static_cast<uint32_t>(t * C);
#if TTS_X86_KERNELS
      if (avx2) {
        fill_row_avx2(row, C, row_key, position, threshold, kept_value);
        continue;
      }
#endif
      fill_row(row, C, row_key, position, threshold, kept_value);
    }
  });
  return in_float ? mask : mask.to(options.dtype()).mul_(1 / (1 - p));
}

torch::Tensor KeyedDropout::mask_by_tensor_operations(uint64_t layer, double p, int64_t T,
                                                      int64_t C, const torch::Tensor& lengths,
                                                      const torch::TensorOptions& options) const {
  check_mask_request(p, T, C, lengths, rows());
  torch::NoGradGuard no_grad;
  const torch::Device device = options.device();
  const auto long_options = torch::TensorOptions().dtype(torch::kInt64).device(device);
  const torch::Tensor row_keys =
      mix32(keys_.to(device).bitwise_xor(static_cast<int64_t>(layer_key(layer))));
  const torch::Tensor positions = mix32(torch::arange(T * C, long_options)).view({1, T, C});
  const torch::Tensor hashes = mix32(row_keys.view({-1, 1, 1}).bitwise_xor(positions));
  const torch::Tensor kept = torch::bitwise_right_shift(hashes, 8).lt(keep_threshold(p));
  const torch::Tensor inside =
      torch::arange(T, long_options).view({1, T, 1}).lt(lengths.to(device).view({-1, 1, 1}));
  return kept.logical_and(inside).to(options.dtype()).mul_(1 / (1 - p));
}

}  // namespace tts::models

#include "tts/models/keyed_dropout.h"

#include <ATen/Context.h>
#include <ATen/core/Generator.h>
#include <torch/torch.h>

#include "tts/core/error.h"
#include "tts/core/hash.h"

namespace tts::models {
namespace {

// The device's default generator, re-seeded per row while the masks are drawn and put back as it
// was after: the process's own stream (validation's prenet, a resumed run) is not touched.
class BorrowedGenerator {
 public:
  explicit BorrowedGenerator(const torch::Device& device)
      : generator_(at::globalContext().defaultGenerator(device)), state_(generator_.get_state()) {}
  ~BorrowedGenerator() { generator_.set_state(state_); }
  BorrowedGenerator(const BorrowedGenerator&) = delete;
  BorrowedGenerator& operator=(const BorrowedGenerator&) = delete;

  at::Generator& seeded(uint64_t seed) {
    generator_.set_current_seed(seed);
    return generator_;
  }

 private:
  at::Generator generator_;
  torch::Tensor state_;
};

}  // namespace

KeyedDropout::KeyedDropout(uint64_t seed, int64_t step, const std::vector<std::string>& ids) {
  keys_.reserve(ids.size());
  // Stable across builds, platforms and processes (std::hash is not).
  const uint64_t step_key = mix64(mix64(seed) ^ static_cast<uint64_t>(step));
  for (const std::string& id : ids) {
    keys_.push_back(hash_id(id, static_cast<int64_t>(step_key)));
  }
}

uint64_t KeyedDropout::seed_of(int64_t row, uint64_t layer) const {
  return mix64(keys_.at(static_cast<size_t>(row)) ^ mix64(layer));
}

torch::Tensor KeyedDropout::mask(uint64_t layer, double p, int64_t T, int64_t C,
                                 const std::vector<int64_t>& lengths,
                                 const torch::TensorOptions& options) const {
  TTS_CHECK(p > 0 && p < 1, "keyed dropout: p = {} is not in (0, 1)", p);
  TTS_CHECK(static_cast<int64_t>(lengths.size()) == rows(),
            "keyed dropout: {} lengths for a batch of {} utterances", lengths.size(), rows());
  torch::NoGradGuard no_grad;
  const torch::Device device = options.device();
  torch::Tensor mask = torch::zeros({rows(), T, C}, options);
  BorrowedGenerator generator(device);
  const auto uniform = torch::TensorOptions().device(device).dtype(torch::kFloat32);
  for (int64_t b = 0; b < rows(); ++b) {
    const int64_t length = lengths[static_cast<size_t>(b)];
    TTS_CHECK(length >= 0 && length <= T,
              "keyed dropout: row {} has length {}, outside the batch's [0, {}]", b, length, T);
    if (length == 0) continue;
    torch::Tensor u = torch::rand({length, C}, generator.seeded(seed_of(b, layer)), uniform);
    mask.select(0, b).narrow(0, 0, length).copy_(u.lt(1 - p));
  }
  return mask.mul_(1 / (1 - p));
}

}  // namespace tts::models

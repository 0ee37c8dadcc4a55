// checkpoint::read_optimizer_state, the import of a checkpoint's Adam state (train --resume,
// inspect, synthesize), on fuzzed values. An input that starts as a zip is a whole torch.save
// file: read_torch_file, then its "adam" dict (seeds: a small checkpoint of ours). Any other input
// describes an "adam" dict value by value (format below), so that every check (the options of
// each group, the lengths and kinds of the lists, finite moments, second moments never negative)
// meets arbitrary numbers: NaN, infinities, negative zero, subnormals. Besides success or a
// tts::Error, a state the import accepts that breaks what the checks promise is a finding.
#include <torch/torch.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "checkpoint/optimizer_state.h"
#include "fuzz_input.h"
#include "tts/formats/torch_file.h"

namespace {

using tts::checkpoint::OptimizerState;
using tts::formats::PickleValue;
using Kind = PickleValue::Kind;
using Value = std::shared_ptr<PickleValue>;

// The bytes of a structured input, read from the front; zeros once they run out.
class Bytes {
 public:
  Bytes(const uint8_t* data, size_t size) : data_(data), left_(size) {}
  uint8_t byte() {
    if (left_ == 0) return 0;
    --left_;
    return *data_++;
  }
  template <class T>
  T raw() {
    unsigned char bits[sizeof(T)] = {};
    for (auto& b : bits) b = byte();
    T value;
    std::memcpy(&value, bits, sizeof(T));
    return value;
  }

 private:
  const uint8_t* data_;
  size_t left_;
};

// Structured input, byte by byte:
//   groups (% 4); per group 6 options (lr, beta1, beta2, eps, weight_decay, amsgrad), each a code:
//   0-11 a value of kDoubles, else the next 8 bytes as a double; per group its size (int8; 127:
//   2^41); a flags byte (1: drop the key numbered by the next byte % 6; 2: one more item in the
//   list numbered by the next byte % 4; 4: an item of another kind in list (next byte % 6));
//   then per parameter (at most 16): its step (int8), and exp_avg, exp_avg_sq, max_exp_avg_sq,
//   each a tensor: length (% 5), dtype (odd: float64, else float32), values (codes: 0-11 a value of
//   kFloats, else the next 4 bytes as a float).
constexpr double kDoubles[] = {0,  1e-3, 0.9,      0.999,     1e-8, 1,
                               -1, NAN,  INFINITY, -INFINITY, -0.0, 1e300};
constexpr float kFloats[] = {0,         1,     -1,     1e-3f,   NAN,   INFINITY,
                             -INFINITY, -0.0f, 1e-30f, -1e-30f, 3e38f, 1e-45f};
const char* const kKeys[] = {"group_options", "group_sizes", "steps",
                             "exp_avg",       "exp_avg_sq",  "max_exp_avg_sq"};

Value make(Kind kind) {
  auto value = std::make_shared<PickleValue>();
  value->kind = kind;
  return value;
}

double any_double(Bytes& in) {
  const uint8_t code = in.byte();
  return code < 12 ? kDoubles[code] : in.raw<double>();
}

Value any_tensor(Bytes& in) {
  const int64_t n = in.byte() % 5;
  const bool wide = in.byte() % 2 == 1;
  torch::Tensor t = torch::empty({n}, wide ? torch::kFloat64 : torch::kFloat32);
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t code = in.byte();
    const float x = code < 12 ? kFloats[code] : in.raw<float>();
    if (wide) {
      t.data_ptr<double>()[i] = x;
    } else {
      t.data_ptr<float>()[i] = x;
    }
  }
  Value value = make(Kind::Tensor);
  value->tensor = t;
  return value;
}

Value structured_adam(Bytes& in) {
  const int groups = in.byte() % 4;
  Value lists[6];
  for (auto& list : lists) list = make(Kind::List);
  int64_t params = 0;
  for (int g = 0; g < groups; ++g) {
    for (int o = 0; o < 6; ++o) {
      Value option = make(Kind::Float);
      option->real = any_double(in);
      lists[0]->items.push_back(option);
    }
  }
  for (int g = 0; g < groups; ++g) {
    const auto code = static_cast<int8_t>(in.byte());
    Value size = make(Kind::Int);
    size->integer = code == 127 ? (int64_t{1} << 41) : code;
    if (code > 0 && code != 127) params += code;
    lists[1]->items.push_back(size);
  }
  const uint8_t flags = in.byte();
  const int dropped = flags & 1 ? in.byte() % 6 : -1;
  const int longer = flags & 2 ? 2 + in.byte() % 4 : -1;
  const int odd_kind = flags & 4 ? in.byte() % 6 : -1;
  params = std::min<int64_t>(params, 16);
  for (int64_t i = 0; i < params + 1; ++i) {
    if (i == params && longer < 0) break;
    Value step = make(Kind::Int);
    step->integer = static_cast<int8_t>(in.byte());
    Value moments[3] = {any_tensor(in), any_tensor(in), any_tensor(in)};
    for (int l = 2; l < 6; ++l) {
      if (i == params && l != longer) continue;
      lists[l]->items.push_back(l == 2 ? step : moments[l - 3]);
    }
  }
  if (odd_kind >= 0) lists[odd_kind]->items.push_back(make(Kind::String));
  Value adam = make(Kind::Dict);
  for (int k = 0; k < 6; ++k) {
    if (k == dropped) continue;
    Value key = make(Kind::String);
    key->text = kKeys[k];
    adam->entries.emplace_back(key, lists[k]);
  }
  return adam;
}

[[noreturn]] void broken_promise(const char* what) {
  std::fprintf(stderr, "read_optimizer_state accepted %s\n", what);
  std::abort();
}

// What the import promises of a state it accepts.
void check_promises(const OptimizerState& state) {
  for (const auto& g : state.groups) {
    if (!(std::isfinite(g.lr) && g.lr >= 0))
      broken_promise("a learning rate below 0 or not finite");
    if (!(g.beta1 >= 0 && g.beta1 < 1 && g.beta2 >= 0 && g.beta2 < 1)) {
      broken_promise("a beta outside [0, 1)");
    }
    if (!(std::isfinite(g.eps) && g.eps >= 0)) broken_promise("a negative or non-finite eps");
    if (!(std::isfinite(g.weight_decay) && g.weight_decay >= 0)) {
      broken_promise("a negative or non-finite weight decay");
    }
  }
  for (const auto& p : state.params) {
    for (const torch::Tensor* t : {&p.exp_avg, &p.exp_avg_sq, &p.max_exp_avg_sq}) {
      if (t->defined() && t->is_floating_point() && !torch::isfinite(*t).all().item<bool>()) {
        broken_promise("a non-finite moment");
      }
    }
    for (const torch::Tensor* t : {&p.exp_avg_sq, &p.max_exp_avg_sq}) {
      if (t->defined() && t->numel() > 0 && (*t < 0).any().item<bool>()) {
        broken_promise("a negative second moment");
      }
    }
  }
}

void import(const PickleValue& adam) {
  check_promises(tts::checkpoint::read_optimizer_state(adam, "fuzz.pt"));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  torch::set_num_threads(1);
  if (size >= 4 && std::memcmp(data, "PK\x03\x04", 4) == 0) {
    const std::string path = tts::fuzz::write_input(data, size, ".pt");
    tts::fuzz::expect_success_or_error([&] {
      const PickleValue root = tts::formats::read_torch_file(path);
      if (root.kind != Kind::Dict) return;
      if (const PickleValue* adam = root.find("adam");
          adam != nullptr && adam->kind == Kind::Dict) {
        import(*adam);
      }
    });
    return 0;
  }
  Bytes in(data, size);
  const Value adam = structured_adam(in);
  tts::fuzz::expect_success_or_error([&] { import(*adam); });
  return 0;
}

#include "tts/models/hifigan/conversion/jik876.h"

#include <torch/torch.h>

#include <cmath>
#include <functional>

#include "jik876_internal.h"
#include "tts/checkpoint/state_dict.h"
#include "tts/checkpoint/state_dict_keys.h"
#include "tts/core/error.h"
#include "tts/core/fs.h"
#include "tts/formats/torch_file.h"
#include "tts/models/hifigan/layers/discriminators.h"
#include "tts/models/hifigan/layers/generator.h"

namespace tts::hifigan {
using formats::PickleValue;
using Kind = PickleValue::Kind;
using Value = std::shared_ptr<PickleValue>;
namespace {

// jik876 writes these eight digits of the step into its file names.
constexpr int kStepDigits = 8;

// The networks of a config, built to check files against and to order their tensors.
struct Networks {
  Generator generator;
  MultiPeriodDiscriminator mpd;
  MultiScaleDiscriminator msd;
  explicit Networks(const config::Config& config)
      : generator(config.hifigan, config.audio.n_mels),
        mpd(config.hifigan.discriminator_divisor),
        msd(config.hifigan.discriminator_divisor) {}
  // optim_d's parameters: jik876 chains the MSD's before the MPD's.
  std::vector<torch::Tensor> discriminator_parameters() {
    std::vector<torch::Tensor> out = msd->parameters();
    for (const torch::Tensor& p : mpd->parameters()) out.push_back(p);
    return out;
  }
  // The names of those parameters, in the same order (for errors about their optimizer state).
  std::vector<std::string> generator_parameter_names() { return names(*generator, "generator."); }
  std::vector<std::string> discriminator_parameter_names() {
    std::vector<std::string> out = names(*msd, "msd.");
    for (std::string& name : names(*mpd, "mpd.")) out.push_back(std::move(name));
    return out;
  }

 private:
  static std::vector<std::string> names(torch::nn::Module& module, const std::string& prefix) {
    std::vector<std::string> out;
    for (const auto& item : module.named_parameters()) out.push_back(prefix + item.key());
    return out;
  }
};

// --- reading ---

const PickleValue& entry(const PickleValue& dict, const std::string& key, const std::string& file,
                         const std::string& what) {
  const PickleValue* value = dict.find(key);
  TTS_CHECK(value != nullptr, "'{}' has no '{}'; expected {} (jik876/hifi-gan's train.py)", file,
            key, what);
  return *value;
}

double number(const PickleValue& v, const std::string& file, const std::string& key) {
  if (v.kind == Kind::Float) return v.real;
  if (v.kind == Kind::Int) return static_cast<double>(v.integer);
  if (v.kind == Kind::Tensor && v.tensor.numel() == 1) return v.tensor.item<double>();
  throw Error(fmt::format("'{}': '{}' is a {}; expected a number", file, key, v.kind_name()));
}

std::map<std::string, torch::Tensor> state_dict(const PickleValue& dict, const std::string& file,
                                                const std::string& key) {
  return checkpoint::foreign_state_dict(
      dict, file, fmt::format("'{}': a state dict of jik876's networks", key), true);
}

// Throws unless `tensors` holds every tensor of `module`, by name and shape, and nothing else.
void check_fits(torch::nn::Module& module, const std::map<std::string, torch::Tensor>& tensors,
                const std::string& what, const std::string& config_source) {
  checkpoint::StateDictOptions options;
  options.file = what;
  options.fix = [&](const std::vector<checkpoint::TensorMatch>&) {
    return fmt::format(
        "the networks are those of {} (hifigan.*, audio.n_mels): give the config.json the file "
        "was trained with",
        config_source);
  };
  checkpoint::match_state_dict(checkpoint::model_tensors(module), tensors, options);
}

AdamState adam_state(const PickleValue& optimizer, const std::vector<torch::Tensor>& parameters,
                     const std::vector<std::string>& names, const std::string& file,
                     const std::string& key) {
  const std::string what = "an AdamW state_dict";
  const PickleValue& groups = entry(optimizer, "param_groups", file, what);
  TTS_CHECK(groups.kind == Kind::List && groups.items.size() == 1,
            "'{}': '{}' has {} parameter groups; jik876's optimizers have one", file, key,
            groups.kind == Kind::List ? groups.items.size() : 0);
  const PickleValue& group = *groups.items[0];
  const PickleValue& ids = entry(group, "params", file, what);
  TTS_CHECK(ids.kind == Kind::List && ids.items.size() == parameters.size(),
            "'{}': '{}' covers {} parameters; the networks of the config have {}", file, key,
            ids.kind == Kind::List ? ids.items.size() : 0, parameters.size());
  AdamState out;
  out.lr = number(entry(group, "lr", file, what), file, key + " lr");
  const PickleValue* initial = group.find("initial_lr");
  out.initial_lr = initial != nullptr ? number(*initial, file, key + " initial_lr") : out.lr;
  for (double lr : {out.lr, out.initial_lr}) {
    TTS_CHECK(std::isfinite(lr) && lr >= 0,
              "'{}': '{}' has the learning rate {}; expected a finite rate of 0 or more", file, key,
              lr);
  }
  out.params.resize(parameters.size());
  const PickleValue& states = entry(optimizer, "state", file, what);
  TTS_CHECK(states.kind == Kind::Dict, "'{}': '{}' state is a {}; expected a dict", file, key,
            states.kind_name());
  for (const auto& [id, state] : states.entries) {
    size_t position = ids.items.size();
    for (size_t i = 0; i < ids.items.size(); ++i) {
      if (id->kind == Kind::Int && ids.items[i]->kind == Kind::Int &&
          ids.items[i]->integer == id->integer) {
        position = i;
      }
    }
    TTS_CHECK(position < parameters.size(),
              "'{}': '{}' has a state for a parameter it does not list", file, key);
    AdamParamState& p = out.params[position];
    const std::string where = fmt::format("{} state {} ({})", key, position, names.at(position));
    for (auto [name, tensor] : {std::pair<const char*, torch::Tensor*>{"exp_avg", &p.exp_avg},
                                {"exp_avg_sq", &p.exp_avg_sq}}) {
      const PickleValue& v = entry(*state, name, file, "AdamW's exp_avg, exp_avg_sq and step");
      TTS_CHECK(v.kind == Kind::Tensor && v.tensor.sizes() == parameters[position].sizes(),
                "'{}': {} {} has shape {}; its parameter (number {} in the optimizer's order) has "
                "shape {}",
                file, where, name,
                v.kind == Kind::Tensor ? v.tensor.sizes().vec() : std::vector<int64_t>{}, position,
                parameters[position].sizes().vec());
      *tensor = v.tensor;
    }
    checkpoint::require_adam_moments(p.exp_avg, p.exp_avg_sq, torch::Tensor(),
                                     fmt::format("'{}': {}", file, where));
    const double step = number(entry(*state, "step", file, "AdamW's step"), file, where);
    TTS_CHECK(std::isfinite(step) && step >= 0 && step <= 1e15,
              "'{}': {} step is {}; expected a count of updates", file, where, step);
    p.step = static_cast<int64_t>(step);
  }
  return out;
}

int64_t integer(const PickleValue& root, const std::string& key, const std::string& file) {
  const PickleValue& v = entry(root, key, file, "its counters steps and epoch");
  TTS_CHECK(v.kind == Kind::Int, "'{}': '{}' is a {}; expected an integer", file, key,
            v.kind_name());
  return v.integer;
}

// --- writing ---

Value make(Kind kind, const std::function<void(PickleValue&)>& set = nullptr) {
  auto v = std::make_shared<PickleValue>();
  v->kind = kind;
  if (set) set(*v);
  return v;
}
Value text(const std::string& s) {
  return make(Kind::String, [&](PickleValue& v) { v.text = s; });
}
Value integer_value(int64_t i) {
  return make(Kind::Int, [&](PickleValue& v) { v.integer = i; });
}
Value real_value(double x) {
  return make(Kind::Float, [&](PickleValue& v) { v.real = x; });
}
Value boolean_value(bool b) {
  return make(Kind::Bool, [&](PickleValue& v) { v.boolean = b; });
}
Value tensor_value(const torch::Tensor& t) {
  return make(Kind::Tensor, [&](PickleValue& v) { v.tensor = t; });
}

// `tensors` in the order PyTorch's state_dict() lists `module`'s: per module, parameters then
// buffers, parents before children.
Value ordered_state_dict(torch::nn::Module& module,
                         const std::map<std::string, torch::Tensor>& tensors) {
  Value dict = make(Kind::Dict);
  for (const auto& item : module.named_modules("", /*include_self=*/true)) {
    const std::string prefix = item.key().empty() ? "" : item.key() + ".";
    for (const auto& p : item.value()->named_parameters(/*recurse=*/false)) {
      dict->entries.emplace_back(text(prefix + p.key()),
                                 tensor_value(tensors.at(prefix + p.key())));
    }
    for (const auto& b : item.value()->named_buffers(/*recurse=*/false)) {
      dict->entries.emplace_back(text(prefix + b.key()),
                                 tensor_value(tensors.at(prefix + b.key())));
    }
  }
  return dict;
}

// torch.optim.AdamW's state_dict() for jik876's one group of `count` parameters (torch 1.13's
// keys, which later versions read too).
Value adam_state_dict(const AdamState& state, size_t count, const config::TrainOptions& train) {
  Value states = make(Kind::Dict);
  for (size_t i = 0; i < state.params.size(); ++i) {
    const AdamParamState& p = state.params[i];
    if (!p.exp_avg.defined()) continue;
    Value s = make(Kind::Dict);
    s->entries = {{text("step"), tensor_value(torch::tensor(static_cast<float>(p.step)))},
                  {text("exp_avg"), tensor_value(p.exp_avg)},
                  {text("exp_avg_sq"), tensor_value(p.exp_avg_sq)}};
    states->entries.emplace_back(integer_value(static_cast<int64_t>(i)), s);
  }
  Value ids = make(Kind::List);
  for (size_t i = 0; i < count; ++i) ids->items.push_back(integer_value(static_cast<int64_t>(i)));
  Value betas = make(Kind::Tuple);
  betas->items = {real_value(train.adam_beta1), real_value(train.adam_beta2)};
  Value group = make(Kind::Dict);
  group->entries = {{text("lr"), real_value(state.lr)},
                    {text("betas"), betas},
                    {text("eps"), real_value(train.adam_eps)},
                    {text("weight_decay"), real_value(train.weight_decay)},
                    {text("amsgrad"), boolean_value(false)},
                    {text("foreach"), make(Kind::None)},
                    {text("maximize"), boolean_value(false)},
                    {text("capturable"), boolean_value(false)},
                    {text("initial_lr"), real_value(state.initial_lr)},
                    {text("params"), ids}};
  Value groups = make(Kind::List);
  groups->items = {group};
  Value out = make(Kind::Dict);
  out->entries = {{text("state"), states}, {text("param_groups"), groups}};
  return out;
}

void check_adam(const AdamState& state, const std::vector<torch::Tensor>& parameters,
                const char* key) {
  TTS_CHECK(state.params.size() == parameters.size(),
            "export_jik876: {} has states of {} parameters; the networks have {}", key,
            state.params.size(), parameters.size());
  for (size_t i = 0; i < parameters.size(); ++i) {
    const AdamParamState& p = state.params[i];
    TTS_CHECK(!p.exp_avg.defined() ||
                  (p.exp_avg.sizes() == parameters[i].sizes() && p.exp_avg_sq.defined() &&
                   p.exp_avg_sq.sizes() == parameters[i].sizes()),
              "export_jik876: {} state {} does not have its parameter's shape {}", key, i,
              parameters[i].sizes().vec());
  }
}

}  // namespace

HifiganImport import_jik876(const std::string& generator_file, const std::string& do_file,
                            const std::string& config_json, const config::Config& base) {
  const config::Config config =
      config_json.empty() ? base : hifigan_config_from_json(config_json, base);
  const std::string source =
      config_json.empty() ? std::string("the config") : fmt::format("'{}'", config_json);
  HifiganImport out;
  out.config = config;
  out.hifigan = config.hifigan;
  out.audio = config.audio;
  out.train = config.train;
  Networks networks(config);
  const PickleValue g = formats::read_torch_file(generator_file);
  out.generator = state_dict(entry(g, "generator", generator_file, "{'generator': state_dict}"),
                             generator_file, "generator");
  check_fits(*networks.generator, out.generator,
             fmt::format("jik876 generator file '{}'", generator_file), source);
  if (do_file.empty()) return out;
  const PickleValue d = formats::read_torch_file(do_file);
  const std::string what = "{'mpd', 'msd', 'optim_g', 'optim_d', 'steps', 'epoch'}";
  out.mpd = state_dict(entry(d, "mpd", do_file, what), do_file, "mpd");
  out.msd = state_dict(entry(d, "msd", do_file, what), do_file, "msd");
  check_fits(*networks.mpd, out.mpd, fmt::format("jik876 file '{}' (mpd)", do_file), source);
  check_fits(*networks.msd, out.msd, fmt::format("jik876 file '{}' (msd)", do_file), source);
  out.optim_g = adam_state(entry(d, "optim_g", do_file, what), networks.generator->parameters(),
                           networks.generator_parameter_names(), do_file, "optim_g");
  out.optim_d = adam_state(entry(d, "optim_d", do_file, what), networks.discriminator_parameters(),
                           networks.discriminator_parameter_names(), do_file, "optim_d");
  out.steps = integer(d, "steps", do_file);
  out.epoch = integer(d, "epoch", do_file);
  if (d.find("batch_in_epoch") != nullptr) {
    out.batch_in_epoch = integer(d, "batch_in_epoch", do_file);
    TTS_CHECK(out.batch_in_epoch >= 0, "'{}': 'batch_in_epoch' is {}; expected 0 or more", do_file,
              out.batch_in_epoch);
  }
  return out;
}

void export_jik876(const Jik876State& state, const std::string& out_dir,
                   const config::Config& config) {
  TTS_USAGE_CHECK(config.audio.n_mels == 80,
                  "audio.n_mels is {}: jik876's Generator reads 80 mel channels "
                  "(Conv1d(80, ...) in its models.py), so its code cannot load this generator",
                  config.audio.n_mels);
  TTS_USAGE_CHECK(state.steps >= 0 && state.steps < 100000000,
                  "export_jik876: step {} does not fit jik876's {} digits of g_XXXXXXXX",
                  state.steps, kStepDigits);
  Networks networks(config);
  const std::string source = "the config";
  check_fits(*networks.generator, state.generator, "the generator to export", source);
  const bool discriminators = !state.mpd.empty() || !state.msd.empty();
  if (discriminators) {
    check_fits(*networks.mpd, state.mpd, "the MPD to export", source);
    check_fits(*networks.msd, state.msd, "the MSD to export", source);
  }
  create_folder(out_dir);
  const std::string suffix = fmt::format("{:0{}d}", state.steps, kStepDigits);
  PickleValue g;
  g.kind = Kind::Dict;
  g.entries = {{text("generator"), ordered_state_dict(*networks.generator, state.generator)}};
  formats::write_torch_file(out_dir + "/g_" + suffix, g);
  if (discriminators) {
    const std::vector<torch::Tensor> g_params = networks.generator->parameters();
    const std::vector<torch::Tensor> d_params = networks.discriminator_parameters();
    // jik876 loads both optimizer states unconditionally: without ours, fresh ones.
    AdamState fresh;
    fresh.lr = fresh.initial_lr = config.train.learning_rate;
    const AdamState optim_g = state.optim_g.value_or(fresh);
    const AdamState optim_d = state.optim_d.value_or(fresh);
    if (state.optim_g) check_adam(optim_g, g_params, "optim_g");
    if (state.optim_d) check_adam(optim_d, d_params, "optim_d");
    PickleValue d;
    d.kind = Kind::Dict;
    d.entries = {{text("mpd"), ordered_state_dict(*networks.mpd, state.mpd)},
                 {text("msd"), ordered_state_dict(*networks.msd, state.msd)},
                 {text("optim_g"), adam_state_dict(optim_g, g_params.size(), config.train)},
                 {text("optim_d"), adam_state_dict(optim_d, d_params.size(), config.train)},
                 {text("steps"), integer_value(state.steps)},
                 {text("epoch"), integer_value(state.epoch)},
                 {text("batch_in_epoch"), integer_value(state.batch_in_epoch)}};
    formats::write_torch_file(out_dir + "/do_" + suffix, d);
  }
  write_file_atomic(out_dir + "/config.json", jik876_config_json(config));
}

}  // namespace tts::hifigan

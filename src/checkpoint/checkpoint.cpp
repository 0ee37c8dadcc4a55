#include "tts/checkpoint/checkpoint.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

#include "optimizer_state.h"
#include "tts/checkpoint/optimizer_compat.h"
#include "tts/checkpoint/state_dict.h"
#include "tts/core/error.h"
#include "tts/core/fs.h"
#include "tts/core/logging.h"
#include "tts/formats/torch_file.h"
#include "tts/text/symbols.h"

namespace tts::checkpoint {
using formats::PickleValue;
namespace fs = std::filesystem;
namespace {

// Format 2 holds the optimizer's state as data ("adam"); format 1 held a TorchScript archive of it
// ("optimizer"), which is read for everything but resuming.
constexpr const char* kFormat = "tts-train-checkpoint-2";
constexpr const char* kFormatWithArchive = "tts-train-checkpoint-1";
using Kind = PickleValue::Kind;

// An undefined tensor (no max_exp_avg_sq without amsgrad) is stored as an empty one.
torch::Tensor stored(const torch::Tensor& tensor) {
  return tensor.defined() ? tensor.detach().to(torch::kCPU).clone() : torch::empty({0});
}

c10::impl::GenericDict adam_dict(const OptimizerState& state) {
  c10::List<double> options;
  c10::List<int64_t> group_sizes;
  for (const auto& group : state.groups) {
    for (double option : {group.lr, group.beta1, group.beta2, group.eps, group.weight_decay,
                          group.amsgrad ? 1.0 : 0.0}) {
      options.push_back(option);
    }
    group_sizes.push_back(group.params);
  }
  c10::List<int64_t> steps;  // -1: no state yet
  c10::List<at::Tensor> exp_avg, exp_avg_sq, max_exp_avg_sq;
  for (const auto& param : state.params) {
    steps.push_back(param.has_state ? param.step : -1);
    exp_avg.push_back(stored(param.exp_avg));
    exp_avg_sq.push_back(stored(param.exp_avg_sq));
    max_exp_avg_sq.push_back(stored(param.max_exp_avg_sq));
  }
  c10::impl::GenericDict adam(c10::StringType::get(), c10::AnyType::get());
  adam.insert(std::string("group_options"), options);
  adam.insert(std::string("group_sizes"), group_sizes);
  adam.insert(std::string("steps"), steps);
  adam.insert(std::string("exp_avg"), exp_avg);
  adam.insert(std::string("exp_avg_sq"), exp_avg_sq);
  adam.insert(std::string("max_exp_avg_sq"), max_exp_avg_sq);
  return adam;
}

// step_00001234.pt -> 1234; -1 for other names.
// The N of a checkpoint named exactly `step_N.pt` (N: 1 to 18 digits), or -1 for any other name:
// a name such as "step_1';x;#.pt" is no checkpoint, whatever digits it starts with.
int64_t step_of(const fs::path& file) {
  const std::string name = file.filename().string();
  constexpr size_t kPrefix = 5;  // "step_"
  constexpr size_t kSuffix = 3;  // ".pt"
  if (name.size() < kPrefix + 1 + kSuffix || name.size() > kPrefix + 18 + kSuffix ||
      name.compare(0, kPrefix, "step_") != 0 ||
      name.compare(name.size() - kSuffix, kSuffix, ".pt") != 0) {
    return -1;
  }
  int64_t step = 0;
  for (size_t i = kPrefix; i < name.size() - kSuffix; ++i) {
    if (name[i] < '0' || name[i] > '9') return -1;
    step = step * 10 + (name[i] - '0');  // at most 18 digits: no overflow
  }
  return step;
}

// Whether `name` is what a checkpoint save killed halfway leaves behind: exactly the temporary
// name AtomicFile (fs.h) gives step_N.pt, step_<1 to 18 digits>.pt.tmp.<16 hex digits>.
bool is_save_temporary(const std::string& name) {
  const std::string marker = ".tmp.";
  const size_t at = name.rfind(marker);
  if (at == std::string::npos) return false;
  const std::string suffix = name.substr(at + marker.size());
  if (suffix.size() != 16 || suffix.find_first_not_of("0123456789abcdef") != std::string::npos) {
    return false;
  }
  return step_of(name.substr(0, at)) >= 0;
}

// The moments and group options of an Adam-family optimizer (torch::optim::Adam or AdamW: the
// same state, the same options) into `captured`, and back.
template <class Options, class ParamState, class Optimizer>
void capture_adam(Optimizer& adam, OptimizerState& captured) {
  for (auto& group : adam.param_groups()) {
    const auto& options = static_cast<const Options&>(group.options());
    captured.groups.push_back({options.lr(), std::get<0>(options.betas()),
                               std::get<1>(options.betas()), options.eps(), options.weight_decay(),
                               options.amsgrad(), static_cast<int64_t>(group.params().size())});
    for (const auto& param : group.params()) {
      OptimizerState::Param stored_param;
      auto it = adam.state().find(compat::optimizer_state_key(adam, param));
      if (it != adam.state().end()) {
        const auto& s = static_cast<const ParamState&>(*it->second);
        stored_param.has_state = true;
        stored_param.step = s.step();
        stored_param.exp_avg = stored(s.exp_avg());
        stored_param.exp_avg_sq = stored(s.exp_avg_sq());
        if (s.max_exp_avg_sq().defined()) stored_param.max_exp_avg_sq = stored(s.max_exp_avg_sq());
      }
      captured.params.push_back(std::move(stored_param));
    }
  }
}

template <class Options, class ParamState, class Optimizer>
void restore_adam(const OptimizerState& state, Optimizer& adam) {
  auto& groups = adam.param_groups();
  TTS_CHECK(groups.size() == state.groups.size(),
            "the checkpoint's optimizer has {} parameter groups, this one {}; resume with the "
            "config the checkpoint was trained with",
            state.groups.size(), groups.size());
  size_t index = 0;
  for (size_t g = 0; g < groups.size(); ++g) {
    const OptimizerState::Group& stored_group = state.groups[g];
    TTS_CHECK(static_cast<int64_t>(groups[g].params().size()) == stored_group.params,
              "the checkpoint's optimizer group {} has {} parameters, this model {}; resume with "
              "the config the checkpoint was trained with",
              g, stored_group.params, groups[g].params().size());
    auto& options = static_cast<Options&>(groups[g].options());
    options.lr(stored_group.lr)
        .betas({stored_group.beta1, stored_group.beta2})
        .eps(stored_group.eps)
        .weight_decay(stored_group.weight_decay)
        .amsgrad(stored_group.amsgrad);
    for (const auto& param : groups[g].params()) {
      const OptimizerState::Param& stored_param = state.params.at(index++);
      if (!stored_param.has_state) continue;
      auto fits = [&](const torch::Tensor& t) { return t.defined() && t.sizes() == param.sizes(); };
      TTS_CHECK(fits(stored_param.exp_avg) && fits(stored_param.exp_avg_sq) &&
                    (!stored_param.max_exp_avg_sq.defined() || fits(stored_param.max_exp_avg_sq)),
                "the checkpoint's Adam moments of parameter {} have shape [{}], the parameter "
                "[{}]; resume with the config the checkpoint was trained with",
                index - 1, fmt::join(stored_param.exp_avg.sizes(), ", "),
                fmt::join(param.sizes(), ", "));
      // On the device (and dtype) of the parameter, whatever device the checkpoint came from.
      auto place = [&](const torch::Tensor& t) {
        return t.to(param.options(), /*non_blocking=*/false, /*copy=*/true);
      };
      auto param_state = std::make_unique<ParamState>();
      param_state->step(stored_param.step);
      param_state->exp_avg(place(stored_param.exp_avg));
      param_state->exp_avg_sq(place(stored_param.exp_avg_sq));
      if (stored_param.max_exp_avg_sq.defined()) {
        param_state->max_exp_avg_sq(place(stored_param.max_exp_avg_sq));
      }
      adam.state()[compat::optimizer_state_key(adam, param)] = std::move(param_state);
    }
  }
}

}  // namespace

std::map<std::string, torch::Tensor> tensors_with_prefix(const Checkpoint& checkpoint,
                                                         const std::string& prefix) {
  std::map<std::string, torch::Tensor> out;
  for (const auto& [name, tensor] : checkpoint.tensors) {
    if (name.rfind(prefix, 0) == 0) out[name.substr(prefix.size())] = tensor;
  }
  return out;
}

Checkpoint capture(torch::nn::Module& model,
                   const std::vector<torch::optim::Optimizer*>& optimizers,
                   const TrainingState& state, const std::string& config_yaml) {
  Checkpoint checkpoint;
  checkpoint.state = state;
  checkpoint.config_yaml = config_yaml;
  torch::NoGradGuard no_grad;
  for (const auto& item : model.named_parameters()) {
    checkpoint.tensors.emplace_back(item.key(), item.value().detach().to(torch::kCPU).clone());
    checkpoint.parameter_names.push_back(item.key());
  }
  for (const auto& item : model.named_buffers()) {
    checkpoint.tensors.emplace_back(item.key(), item.value().detach().to(torch::kCPU).clone());
  }
  for (torch::optim::Optimizer* optimizer : optimizers) {
    OptimizerState& captured = checkpoint.optimizers.emplace_back();
    if (auto* adam = dynamic_cast<torch::optim::Adam*>(optimizer)) {
      capture_adam<torch::optim::AdamOptions, torch::optim::AdamParamState>(*adam, captured);
    } else if (auto* adamw = dynamic_cast<torch::optim::AdamW*>(optimizer)) {
      capture_adam<torch::optim::AdamWOptions, torch::optim::AdamWParamState>(*adamw, captured);
    } else {
      throw Error("checkpoints hold the state of torch::optim::Adam and AdamW only");
    }
  }
  at::Generator generator = at::detail::getDefaultCPUGenerator();
  checkpoint.rng_state = generator.get_state();
  for (const auto& parameter : model.parameters()) {
    if (parameter.is_cuda()) {
      checkpoint.cuda_rng_state =
          at::globalContext().defaultGenerator(parameter.device()).get_state();
    }
    break;
  }
  return checkpoint;
}

void restore_model(const Checkpoint& checkpoint, torch::nn::Module& model,
                   const std::string& source) {
  StateDictOptions options;
  options.file = fmt::format("checkpoint '{}'", source);
  options.fix = [&](const std::vector<TensorMatch>&) {
    return fmt::format(
        "use the config the checkpoint was trained with (it is stored in the checkpoint: "
        "tts-train inspect {})",
        source);
  };
  std::map<std::string, torch::Tensor> stored(checkpoint.tensors.begin(), checkpoint.tensors.end());
  copy_matched(match_state_dict(model_tensors(model), stored, options).matched);
}

void restore_optimizer(const Checkpoint& checkpoint, size_t slot,
                       torch::optim::Optimizer& optimizer) {
  if (checkpoint.optimizers.empty()) return;  // weights only (an import): a fresh optimizer
  TTS_CHECK(slot < checkpoint.optimizers.size(),
            "the checkpoint holds the state of {} optimizer(s), this model trains with more; "
            "resume with the config the checkpoint was trained with",
            checkpoint.optimizers.size());
  const OptimizerState& state = checkpoint.optimizers[slot];
  if (state.empty()) return;
  TTS_CHECK(state.unread_archive_of.empty(),
            "{}: written by an older tts-train (format {}), whose optimizer state is a TorchScript "
            "archive; tts-train no longer loads one, since it can carry code that runs on load. "
            "Continue from its weights with a fresh optimizer: train --init-from {} (a new run "
            "directory), or resume with the tts-train version that wrote it",
            state.unread_archive_of, kFormatWithArchive, state.unread_archive_of);
  if (auto* adam = dynamic_cast<torch::optim::Adam*>(&optimizer)) {
    restore_adam<torch::optim::AdamOptions, torch::optim::AdamParamState>(state, *adam);
  } else if (auto* adamw = dynamic_cast<torch::optim::AdamW*>(&optimizer)) {
    restore_adam<torch::optim::AdamWOptions, torch::optim::AdamWParamState>(state, *adamw);
  } else {
    throw Error("checkpoints hold the state of torch::optim::Adam and AdamW only");
  }
}

void restore_rng(const Checkpoint& checkpoint, const torch::Device& device) {
  if (checkpoint.rng_state.defined()) {
    at::Generator generator = at::detail::getDefaultCPUGenerator();
    generator.set_state(checkpoint.rng_state);
  }
  if (device.is_cuda() && checkpoint.cuda_rng_state.defined()) {
    at::Generator generator = at::globalContext().defaultGenerator(device);
    generator.set_state(checkpoint.cuda_rng_state);
  }
}

void write_checkpoint(const std::string& path, const Checkpoint& checkpoint) {
  // Never a checkpoint that resuming would refuse (training skips an update that would make a
  // weight non-finite, so only a bug reaches this).
  const std::string fix = "not written: a checkpoint must hold finite weights and moments";
  for (const auto& [name, tensor] : checkpoint.tensors) {
    require_finite(tensor, fmt::format("{}: tensor '{}'", path, name), fix);
  }
  for (const OptimizerState& optimizer : checkpoint.optimizers) {
    for (size_t i = 0; i < optimizer.params.size(); ++i) {
      const OptimizerState::Param& p = optimizer.params[i];
      for (const torch::Tensor* moment : {&p.exp_avg, &p.exp_avg_sq, &p.max_exp_avg_sq}) {
        require_finite(*moment, fmt::format("{}: the Adam state of parameter {}", path, i), fix);
      }
    }
  }
  c10::Dict<std::string, at::Tensor> tensors;
  for (const auto& [name, tensor] : checkpoint.tensors) tensors.insert(name, tensor);
  c10::List<std::string> parameter_names;
  for (const auto& name : checkpoint.parameter_names) parameter_names.push_back(name);
  c10::impl::GenericDict dict(c10::StringType::get(), c10::AnyType::get());
  dict.insert(std::string("format"), std::string(kFormat));
  dict.insert("step", checkpoint.state.step);
  dict.insert("epoch", checkpoint.state.epoch);
  dict.insert("batch_in_epoch", checkpoint.state.batch_in_epoch);
  dict.insert("world_size", checkpoint.state.world_size);
  if (checkpoint.state.best_val_step >= 0) {
    dict.insert("best_val_loss", checkpoint.state.best_val_loss);
    dict.insert("best_val_step", checkpoint.state.best_val_step);
    dict.insert("validations_since_best", checkpoint.state.validations_since_best);
  }
  dict.insert("batch_size", static_cast<int64_t>(checkpoint.state.phase.batch_size));
  dict.insert("r", static_cast<int64_t>(checkpoint.state.phase.r));
  dict.insert("config", checkpoint.config_yaml);
  dict.insert("model", tensors);
  dict.insert("parameter_names", parameter_names);
  // The first optimizer under "adam" (what every version reads), the others in order.
  dict.insert(
      std::string("adam"),
      adam_dict(checkpoint.optimizers.empty() ? OptimizerState{} : checkpoint.optimizers.front()));
  if (checkpoint.optimizers.size() > 1) {
    c10::impl::GenericList more(c10::AnyType::get());
    for (size_t i = 1; i < checkpoint.optimizers.size(); ++i) {
      more.push_back(adam_dict(checkpoint.optimizers[i]));
    }
    dict.insert(std::string("more_adam"), more);
  }
  dict.insert("rng_state", checkpoint.rng_state.defined() ? checkpoint.rng_state
                                                          : torch::empty({0}, torch::kUInt8));
  dict.insert("cuda_rng_state", checkpoint.cuda_rng_state.defined()
                                    ? checkpoint.cuda_rng_state
                                    : torch::empty({0}, torch::kUInt8));
  c10::Dict<std::string, double> metrics;
  for (const auto& [name, value] : checkpoint.metrics) metrics.insert(name, value);
  dict.insert("metrics", metrics);
  if (!checkpoint.symbols.empty()) {
    c10::List<std::string> symbols;
    for (const auto& symbol : checkpoint.symbols) symbols.push_back(symbol);
    dict.insert("symbols", symbols);
  }
  if (!checkpoint.speakers.empty()) {
    c10::List<std::string> speakers;
    for (const auto& speaker : checkpoint.speakers) speakers.push_back(speaker);
    dict.insert("speakers", speakers);
  }
  std::vector<char> bytes = torch::pickle_save(c10::IValue(dict));
  write_file_atomic(path, std::string(bytes.begin(), bytes.end()));
}

std::string save_checkpoint(const std::string& dir, const Checkpoint& checkpoint, int keep,
                            int64_t spare_step) {
  create_folder(dir);
  std::string name = fmt::format("step_{:08d}.pt", checkpoint.state.step);
  std::string path = (fs::path(dir) / name).string();
  write_checkpoint(path, checkpoint);
  replace_symlink((fs::path(dir) / "latest").string(), name);

  std::vector<std::string> files = checkpoint_files(dir);
  std::error_code ec;  // a file that cannot be removed stays: the next save tries again
  for (size_t i = static_cast<size_t>(std::max(keep, 1)); i < files.size(); ++i) {
    if (spare_step >= 0 && step_of(files[i]) == spare_step) continue;
    fs::remove(files[i], ec);  // a symlink is removed itself, never what it points to
  }
  return path;
}

std::vector<std::string> checkpoint_files(const std::string& path) {
  fs::path p(path);
  std::error_code ec;
  // A run's checkpoints/ and its latest are looked at, never followed (load_checkpoint refuses a
  // checkpoints/ link and a step_N.pt that is not a regular file).
  if (fs::exists(fs::symlink_status(p / "checkpoints", ec))) p /= "checkpoints";
  if (p.filename() == "latest") p = p.parent_path();  // the newest step_N.pt, as latest points
  if (!fs::is_directory(p, ec)) return {p.string()};
  create_folder(p.string());  // an existing real folder passes; a link is refused by name
  std::vector<std::pair<int64_t, std::string>> found;
  for (fs::directory_iterator it(p, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    int64_t step = step_of(it->path());
    if (step >= 0) found.emplace_back(step, it->path().string());
  }
  TTS_CHECK(!ec, "cannot list the checkpoints in '{}': {}", p.string(), ec.message());
  std::sort(found.rbegin(), found.rend());
  std::vector<std::string> files;
  for (auto& [step, file] : found) files.push_back(file);
  return files;
}

std::vector<std::string> remove_save_temporaries(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(dir, ec))) return {};  // none yet, or not a folder
  std::vector<std::string> removed;
  for (fs::directory_iterator it(dir, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code status_error;
    // A regular file itself: a link of that name, a folder or a FIFO is not ours and stays.
    if (!is_save_temporary(name) ||
        !fs::is_regular_file(fs::symlink_status(it->path(), status_error))) {
      continue;
    }
    std::error_code remove_error;  // one that cannot be removed stays for the next start
    if (fs::remove(it->path(), remove_error)) removed.push_back(name);
  }
  std::sort(removed.begin(), removed.end());
  return removed;
}

Checkpoint load_checkpoint(const std::string& path, CheckpointRead read) {
  std::error_code ec;
  std::string file = path;
  if (fs::is_directory(path, ec) || fs::path(path).filename() == "latest") {
    std::vector<std::string> files = checkpoint_files(path);
    TTS_CHECK(!files.empty(),
              "no checkpoint in '{}': expected step_N.pt files written by tts-train train", path);
    file = files.front();
  }
  TTS_CHECK(fs::exists(fs::symlink_status(file, ec)), "checkpoint '{}' does not exist", file);
  // Opened once, a regular file and not a link out of the run nor a FIFO: every check and read
  // below goes through this descriptor, so a file swapped under the name after a check is never
  // what is read.
  const FileDescriptor fd = open_regular_file_for_read(file);
  const int64_t size = file_size(fd, file);
  TTS_CHECK(formats::is_zip_file(fd, file),
            "checkpoint '{}' is corrupt or not a checkpoint ({} bytes, not the zip archive "
            "tts-train writes); use an earlier checkpoint",
            file, size);
  const PickleValue root = [&] {
    try {
      return formats::read_torch_file(fd, file);
    } catch (const Error& e) {
      throw Error(
          fmt::format("checkpoint '{}' is corrupt or not a checkpoint: {}", file, e.what()));
    }
  }();
  return checkpoint_from_value(root, file, read);
}

namespace {

// The optimizers' states of `root` (a checkpoint of `format`) into `checkpoint`: format 2's data,
// or format 1's archive, recorded as unread.
void read_optimizers(const PickleValue& root, const std::string& file, const std::string& format,
                     Checkpoint& checkpoint) {
  if (format == kFormat) {
    OptimizerState first =
        read_optimizer_state(checkpoint_entry(root, "adam", Kind::Dict, file), file);
    if (!first.empty()) checkpoint.optimizers.push_back(std::move(first));
    if (root.find("more_adam") != nullptr) {
      for (const PickleValue* adam : checkpoint_list(root, "more_adam", Kind::Dict, file)) {
        checkpoint.optimizers.push_back(read_optimizer_state(*adam, file));
      }
    }
  } else if (checkpoint_entry(root, "optimizer", Kind::Tensor, file).tensor.numel() > 0) {
    checkpoint.optimizers.emplace_back().unread_archive_of = file;
  }
}

}  // namespace

Checkpoint checkpoint_from_value(const PickleValue& root, const std::string& file,
                                 CheckpointRead read) {
  TTS_CHECK(root.kind == Kind::Dict,
            "checkpoint '{}' is not a tts-train checkpoint (it holds a {}, expected a dict)", file,
            root.kind_name());
  const std::string& format = checkpoint_entry(root, "format", Kind::String, file).text;
  TTS_CHECK(format == kFormat || format == kFormatWithArchive,
            "checkpoint '{}' has format '{}'; this tts-train reads '{}' and '{}'", file, format,
            kFormat, kFormatWithArchive);
  auto integer = [&](const char* key) {
    return checkpoint_entry(root, key, Kind::Int, file).integer;
  };
  Checkpoint checkpoint;
  checkpoint.state.step = integer("step");
  checkpoint.state.epoch = integer("epoch");
  checkpoint.state.batch_in_epoch = integer("batch_in_epoch");
  checkpoint.state.world_size = integer("world_size");
  if (root.find("best_val_step") != nullptr) {  // absent before early stopping
    checkpoint.state.best_val_step = integer("best_val_step");
    checkpoint.state.validations_since_best = integer("validations_since_best");
    checkpoint.state.best_val_loss =
        checkpoint_entry(root, "best_val_loss", Kind::Float, file).real;
    TTS_CHECK(checkpoint.state.best_val_step >= 0 &&
                  checkpoint.state.best_val_step <= checkpoint.state.step &&
                  checkpoint.state.validations_since_best >= 0,
              "checkpoint '{}': best_val_step {} and validations_since_best {} must be counts, "
              "the step at most the checkpoint's step {}",
              file, checkpoint.state.best_val_step, checkpoint.state.validations_since_best,
              checkpoint.state.step);
  }
  // The phase's numbers size the model (r) and its batches: within the config's ceilings.
  auto count = [&](const char* key, int ceiling) {
    const int64_t value = integer(key);
    TTS_CHECK(value >= 0 && value <= ceiling,
              "checkpoint '{}': {} is {}, expected a count from 0 to {}", file, key, value,
              ceiling);
    return static_cast<int>(value);
  };
  checkpoint.state.phase.batch_size = count("batch_size", config::kMaxBatchSize);
  if (root.find("r") != nullptr) checkpoint.state.phase.r = count("r", config::kMaxFramesPerStep);
  checkpoint.config_yaml = checkpoint_entry(root, "config", Kind::String, file).text;
  for (const auto& [key, value] : checkpoint_entry(root, "model", Kind::Dict, file).entries) {
    TTS_CHECK(key->kind == Kind::String && value->kind == Kind::Tensor,
              "checkpoint '{}': the model holds a {} under a {} key, expected tensors by name",
              file, value->kind_name(), key->kind_name());
    checkpoint.tensors.emplace_back(key->text, value->tensor);
  }
  for (const PickleValue* name : checkpoint_list(root, "parameter_names", Kind::String, file)) {
    checkpoint.parameter_names.push_back(name->text);
  }
  if (read == CheckpointRead::kWhole) read_optimizers(root, file, format, checkpoint);
  const torch::Tensor& rng = checkpoint_entry(root, "rng_state", Kind::Tensor, file).tensor;
  if (rng.numel() > 0) checkpoint.rng_state = rng;
  if (root.find("cuda_rng_state") != nullptr) {
    const torch::Tensor& cuda_rng =
        checkpoint_entry(root, "cuda_rng_state", Kind::Tensor, file).tensor;
    if (cuda_rng.numel() > 0) checkpoint.cuda_rng_state = cuda_rng;
  }
  if (root.find("metrics") != nullptr) {  // absent before alignment metrics
    for (const auto& [key, value] : checkpoint_entry(root, "metrics", Kind::Dict, file).entries) {
      TTS_CHECK(key->kind == Kind::String && value->kind == Kind::Float,
                "checkpoint '{}': the metrics hold a {} under a {} key, expected numbers by name",
                file, value->kind_name(), key->kind_name());
      checkpoint.metrics.emplace_back(key->text, value->real);
    }
  }
  if (root.find("symbols") != nullptr) {  // absent in older versions and vocoders
    for (const PickleValue* symbol : checkpoint_list(root, "symbols", Kind::String, file)) {
      checkpoint.symbols.push_back(symbol->text);
    }
  }
  if (root.find("speakers") != nullptr) {  // absent for one-speaker models and older versions
    for (const PickleValue* speaker : checkpoint_list(root, "speakers", Kind::String, file)) {
      checkpoint.speakers.push_back(speaker->text);
    }
  }
  return checkpoint;
}

config::Config checkpoint_config(const Checkpoint& checkpoint, const std::string& source) {
  const std::string where = source + " (config)";
  // The config is part of the file, not the user's: what it gets wrong is the file's error (exit
  // code 1, not a usage error's 2).
  try {
    return config::parse_config(checkpoint.config_yaml, where);
  } catch (const Error& e) {
    const std::string message = e.what();
    throw Error(message.rfind(where, 0) == 0 ? message : where + ": " + message);
  }
}

data::Phase checkpoint_phase(const Checkpoint& checkpoint, const config::Config& config) {
  const data::Phase& stored = checkpoint.state.phase;
  return {stored.r > 0 ? stored.r : config.model.n_frames_per_step,
          stored.batch_size > 0 ? stored.batch_size : config.train.batch_size};
}

Checkpoint load_newest_checkpoint(const std::string& path, std::string* loaded_from,
                                  CheckpointRead read) {
  std::vector<std::string> files = checkpoint_files(path);
  std::error_code ec;
  TTS_CHECK(!files.empty() && fs::exists(fs::symlink_status(files.front(), ec)),
            "no checkpoint in '{}': expected step_N.pt files written by tts-train train", path);
  std::string errors;
  for (const auto& file : files) {
    try {
      Checkpoint checkpoint = load_checkpoint(file, read);
      if (!errors.empty()) {
        log::get("train")->warn("{}; using the previous checkpoint {} instead", errors, file);
      }
      if (loaded_from != nullptr) *loaded_from = file;
      return checkpoint;
    } catch (const Error& e) {
      errors += (errors.empty() ? "" : "; ") + std::string(e.what());
    }
  }
  throw Error(fmt::format("no readable checkpoint in '{}': {}", path, errors));
}

}  // namespace tts::checkpoint

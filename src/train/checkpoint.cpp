#include "tts/train/checkpoint.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/serialize.h>
#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "tts/core/error.h"
#include "tts/core/fs.h"
#include "tts/core/logging.h"

namespace tts::train {
namespace fs = std::filesystem;
namespace {

constexpr const char* kFormat = "tts-train-checkpoint-1";

torch::Tensor bytes_tensor(const std::string& bytes) {
  auto tensor = torch::empty({static_cast<int64_t>(bytes.size())}, torch::kUInt8);
  std::memcpy(tensor.data_ptr(), bytes.data(), bytes.size());
  return tensor;
}

std::string tensor_bytes(const torch::Tensor& tensor) {
  auto contiguous = tensor.contiguous();
  return std::string(static_cast<const char*>(contiguous.data_ptr()),
                     static_cast<size_t>(contiguous.numel()));
}

// step_00001234.pt -> 1234; -1 for other names.
int64_t step_of(const fs::path& file) {
  std::string name = file.filename().string();
  if (name.rfind("step_", 0) != 0 || file.extension() != ".pt") return -1;
  try {
    return std::stoll(name.substr(5, name.size() - 8));
  } catch (const std::exception&) {
    return -1;
  }
}

const c10::IValue& entry(const c10::impl::GenericDict& dict, const char* key,
                         const std::string& path) {
  auto it = dict.find(key);
  TTS_CHECK(it != dict.end(), "{}: not a tts-train checkpoint (no '{}' entry)", path, key);
  return it->value();
}

}  // namespace

Checkpoint capture(torch::nn::Module& model, torch::optim::Optimizer* optimizer,
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
  if (optimizer != nullptr) {
    std::ostringstream stream;
    torch::save(*optimizer, stream);
    checkpoint.optimizer = stream.str();
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
  std::map<std::string, torch::Tensor> stored(checkpoint.tensors.begin(), checkpoint.tensors.end());
  std::vector<std::string> missing;
  std::vector<std::string> mismatched;
  torch::NoGradGuard no_grad;
  auto copy = [&](const std::string& name, torch::Tensor& target) {
    auto it = stored.find(name);
    if (it == stored.end()) {
      missing.push_back(name);
      return;
    }
    if (it->second.sizes() != target.sizes()) {
      mismatched.push_back(fmt::format("{} (checkpoint {}, model {})", name,
                                       fmt::join(it->second.sizes(), "x"),
                                       fmt::join(target.sizes(), "x")));
    } else {
      target.copy_(it->second);
    }
    stored.erase(it);
  };
  for (auto& item : model.named_parameters()) copy(item.key(), item.value());
  for (auto& item : model.named_buffers()) copy(item.key(), item.value());
  std::vector<std::string> unexpected;
  for (const auto& [name, tensor] : stored) unexpected.push_back(name);
  if (!missing.empty() || !mismatched.empty() || !unexpected.empty()) {
    throw Error(fmt::format(
        "{}: the checkpoint does not fit the model built from the config (missing: {}; shape "
        "differs: {}; not in the model: {}); use the config the checkpoint was trained with "
        "(it is stored in the checkpoint: tts-train inspect {})",
        source, missing.empty() ? "none" : fmt::format("{}", fmt::join(missing, ", ")),
        mismatched.empty() ? "none" : fmt::format("{}", fmt::join(mismatched, ", ")),
        unexpected.empty() ? "none" : fmt::format("{}", fmt::join(unexpected, ", ")), source));
  }
}

void restore_optimizer(const Checkpoint& checkpoint, torch::optim::Optimizer& optimizer) {
  if (checkpoint.optimizer.empty()) return;
  // torch::load would put each state tensor back on the device it was saved from (cuda:0 of
  // rank 0): map everything to where this optimizer's parameters live.
  torch::Device device(torch::kCPU);
  for (const auto& group : optimizer.param_groups()) {
    if (!group.params().empty()) {
      device = group.params().front().device();
      break;
    }
  }
  std::istringstream stream(checkpoint.optimizer);
  torch::serialize::InputArchive archive;
  archive.load_from(stream, device);
  optimizer.load(archive);
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
  dict.insert("batch_size", checkpoint.state.batch_size);
  dict.insert("r", checkpoint.state.r);
  dict.insert("config", checkpoint.config_yaml);
  dict.insert("model", tensors);
  dict.insert("parameter_names", parameter_names);
  dict.insert("optimizer", bytes_tensor(checkpoint.optimizer));
  dict.insert("rng_state", checkpoint.rng_state.defined() ? checkpoint.rng_state
                                                          : torch::empty({0}, torch::kUInt8));
  dict.insert("cuda_rng_state", checkpoint.cuda_rng_state.defined()
                                    ? checkpoint.cuda_rng_state
                                    : torch::empty({0}, torch::kUInt8));
  c10::Dict<std::string, double> metrics;
  for (const auto& [name, value] : checkpoint.metrics) metrics.insert(name, value);
  dict.insert("metrics", metrics);
  std::vector<char> bytes = torch::pickle_save(c10::IValue(dict));
  write_file_atomic(path, std::string(bytes.begin(), bytes.end()));
}

std::string save_checkpoint(const std::string& dir, const Checkpoint& checkpoint, int keep) {
  fs::create_directories(dir);
  std::string name = fmt::format("step_{:08d}.pt", checkpoint.state.step);
  std::string path = (fs::path(dir) / name).string();
  write_checkpoint(path, checkpoint);

  fs::path latest = fs::path(dir) / "latest";
  fs::path temporary_link = fs::path(dir) / ("latest.tmp." + std::to_string(getpid()));
  fs::remove(temporary_link);
  fs::create_symlink(name, temporary_link);
  fs::rename(temporary_link, latest);

  std::vector<std::string> files = checkpoint_files(dir);
  for (size_t i = static_cast<size_t>(std::max(keep, 1)); i < files.size(); ++i) {
    fs::remove(files[i]);
  }
  return path;
}

std::vector<std::string> checkpoint_files(const std::string& path) {
  fs::path p(path);
  if (fs::is_directory(p / "checkpoints")) p /= "checkpoints";
  if (p.filename() == "latest") p = p.parent_path();  // the newest step_N.pt, as latest points
  if (!fs::is_directory(p)) return {p.string()};
  std::vector<std::pair<int64_t, std::string>> found;
  for (const auto& item : fs::directory_iterator(p)) {
    int64_t step = step_of(item.path());
    if (step >= 0 && item.is_regular_file()) found.emplace_back(step, item.path().string());
  }
  std::sort(found.rbegin(), found.rend());
  std::vector<std::string> files;
  for (auto& [step, file] : found) files.push_back(file);
  return files;
}

Checkpoint load_checkpoint(const std::string& path) {
  std::string file = path;
  if (fs::is_directory(path)) {
    std::vector<std::string> files = checkpoint_files(path);
    TTS_CHECK(!files.empty(),
              "no checkpoint in '{}': expected step_N.pt files written by tts-train train", path);
    file = files.front();
  }
  TTS_CHECK(fs::exists(file), "checkpoint '{}' does not exist", file);
  if (fs::is_symlink(file)) {  // name the file `latest` points to in what follows
    file = (fs::path(file).parent_path() / fs::read_symlink(file)).string();
  }
  std::string bytes = read_file(file);
  c10::IValue value;
  try {
    value = torch::pickle_load(std::vector<char>(bytes.begin(), bytes.end()));
  } catch (const std::exception& e) {
    std::string reason = e.what();
    throw Error(fmt::format("checkpoint '{}' is corrupt or not a checkpoint ({} bytes): {}", file,
                            bytes.size(), reason.substr(0, reason.find('\n'))));
  }
  TTS_CHECK(value.isGenericDict(), "checkpoint '{}' is not a tts-train checkpoint", file);
  auto dict = value.toGenericDict();
  TTS_CHECK(entry(dict, "format", file).toStringRef() == kFormat,
            "checkpoint '{}' has format '{}'; this tts-train reads '{}'", file,
            entry(dict, "format", file).toStringRef(), kFormat);
  Checkpoint checkpoint;
  checkpoint.state.step = entry(dict, "step", file).toInt();
  checkpoint.state.epoch = entry(dict, "epoch", file).toInt();
  checkpoint.state.batch_in_epoch = entry(dict, "batch_in_epoch", file).toInt();
  checkpoint.state.world_size = entry(dict, "world_size", file).toInt();
  checkpoint.state.batch_size = entry(dict, "batch_size", file).toInt();
  if (auto it = dict.find("r"); it != dict.end()) checkpoint.state.r = it->value().toInt();
  checkpoint.config_yaml = entry(dict, "config", file).toStringRef();
  for (const auto& item : entry(dict, "model", file).toGenericDict()) {
    checkpoint.tensors.emplace_back(item.key().toStringRef(), item.value().toTensor());
  }
  for (const auto& name : entry(dict, "parameter_names", file).toListRef()) {
    checkpoint.parameter_names.push_back(name.toStringRef());
  }
  checkpoint.optimizer = tensor_bytes(entry(dict, "optimizer", file).toTensor());
  auto rng = entry(dict, "rng_state", file).toTensor();
  if (rng.numel() > 0) checkpoint.rng_state = rng;
  if (auto it = dict.find("cuda_rng_state"); it != dict.end() && it->value().toTensor().numel()) {
    checkpoint.cuda_rng_state = it->value().toTensor();
  }
  if (auto it = dict.find("metrics"); it != dict.end()) {  // absent before alignment metrics
    for (const auto& item : it->value().toGenericDict()) {
      checkpoint.metrics.emplace_back(item.key().toStringRef(), item.value().toDouble());
    }
  }
  return checkpoint;
}

config::Config checkpoint_config(const Checkpoint& checkpoint, const std::string& source) {
  config::Config config = config::parse_config(checkpoint.config_yaml, source + " (config)");
  if (checkpoint.state.r > 0) config.model.n_frames_per_step = static_cast<int>(checkpoint.state.r);
  return config;
}

Checkpoint load_newest_checkpoint(const std::string& path, std::string* loaded_from) {
  std::vector<std::string> files = checkpoint_files(path);
  TTS_CHECK(!files.empty() && fs::exists(files.front()),
            "no checkpoint in '{}': expected step_N.pt files written by tts-train train", path);
  std::string errors;
  for (const auto& file : files) {
    try {
      Checkpoint checkpoint = load_checkpoint(file);
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

}  // namespace tts::train

// Matching a file's named tensors against a model's parameters and buffers: what restoring one of
// our checkpoints, importing NVIDIA's file and warm starting share, so that a file that does not
// fit is refused in one wording wherever it is loaded.
#pragma once

#include <torch/types.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace tts::formats {
struct PickleValue;
}

namespace torch::nn {
class Module;
}

namespace tts::checkpoint {

// One parameter or buffer of a model, and the name a file stores it under.
struct ModelTensor {
  std::string name;         // the model's (named_parameters, named_buffers)
  std::string stored_name;  // the file's: `name` in ours, NVIDIA's name in NVIDIA's files
  torch::Tensor tensor;     // the model's own (copying into it changes the model)
  bool parameter = true;    // false for a buffer
};

// The parameters of `model`, then its buffers, in registration order. `stored_name` maps a name
// to the file's (none: the same name).
std::vector<ModelTensor> model_tensors(
    torch::nn::Module& model,
    const std::function<std::string(const std::string&)>& stored_name = nullptr);

struct TensorMatch {
  ModelTensor target;
  torch::Tensor stored;  // the file's tensor under target.stored_name
};

struct StateDictOptions {
  // What the file is, as the error starts: "checkpoint 'run/checkpoints/step_00000100.pt'".
  std::string file;
  // A warm start: a tensor the file lacks keeps its value, and one the model lacks is ignored;
  // only a differing shape is refused. Otherwise every tensor must be there, and nothing else.
  bool partial = false;
  // The error's last part, what to do, given the tensors whose shapes differ (maybe none): e.g.
  // the config value that would fit. None: the error ends with the lists.
  std::function<std::string(const std::vector<TensorMatch>& mismatched)> fix;
};

struct StateDictMatch {
  std::vector<TensorMatch> matched;  // same name and shape, in the model's order
  // Partial only: the model's names of the tensors the file lacks (they keep their values).
  std::vector<std::string> missing;
};

// Pairs every tensor of `model` with the tensor of `stored` (the file's, by stored_name), each
// stored tensor finite (require_finite). Throws one tts::Error when they do not fit: "FILE does not
// fit the model of the config (missing: ...; shape differs: NAME (checkpoint AxB, model CxD), ...;
// not in the model: ...); FIX", the names as the file spells them (a partial match lists only the
// shapes).
StateDictMatch match_state_dict(const std::vector<ModelTensor>& model,
                                const std::map<std::string, torch::Tensor>& stored,
                                const StateDictOptions& options);

inline constexpr const char* kNonFiniteFix =
    "the file is damaged or was written after training diverged: use an earlier one";
// Throws tts::Error naming `what` ("checkpoint 'F': tensor 'NAME'") when the floating-point
// `tensor` holds a NaN or an infinity: weights and optimizer state read from a file are checked
// so, since one such value spreads to every weight at the next step. match_state_dict checks
// every tensor it pairs. `fix` ends the message.
void require_finite(const torch::Tensor& tensor, const std::string& what,
                    const std::string& fix = kNonFiniteFix);

// Adam's (and AdamW's) moments of one parameter, read from a file: all finite, and the second
// moments (exp_avg_sq; max_exp_avg_sq, which may be undefined or empty without amsgrad) not
// negative. `what` names the parameter's state in errors.
void require_adam_moments(const torch::Tensor& exp_avg, const torch::Tensor& exp_avg_sq,
                          const torch::Tensor& max_exp_avg_sq, const std::string& what);

// Copies every stored tensor into its target, converted to the target's dtype and device.
void copy_matched(const std::vector<TensorMatch>& matched);

// The one reader of other frameworks' state dicts (NVIDIA's, jik876's, r9y9's files): `dict`, a
// value of a torch.save file, must map parameter names (state_dict_keys.h: bounded, dot-separated
// words) to tensors, floating-point ones with `floats_only`; DDP's "module." prefix is removed
// when every key has it. Throws tts::Error naming `file` and saying what it should hold
// (`expected`: "NVIDIA's train.py checkpoint (a dict with 'state_dict') or a state dict").
std::map<std::string, torch::Tensor> foreign_state_dict(const formats::PickleValue& dict,
                                                        const std::string& file,
                                                        const std::string& expected,
                                                        bool floats_only = false);

}  // namespace tts::checkpoint

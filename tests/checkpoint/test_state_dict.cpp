// match_state_dict: the one matcher of named tensors against a model (restoring a checkpoint,
// importing NVIDIA's file, warm starting) and its one wording for a file that does not fit.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <map>
#include <string>

#include "tts/checkpoint/state_dict.h"
#include "tts/core/error.h"

using namespace tts::checkpoint;

namespace {

struct NetImpl : torch::nn::Module {
  explicit NetImpl(int hidden) {
    first = register_module("first", torch::nn::Linear(4, hidden));
    norm = register_module("norm", torch::nn::BatchNorm1d(hidden));
  }
  torch::nn::Linear first{nullptr};
  torch::nn::BatchNorm1d norm{nullptr};
};
TORCH_MODULE(Net);

// Every tensor of `net` under its own name, filled with `value`.
std::map<std::string, torch::Tensor> state_of(Net& net, float value) {
  std::map<std::string, torch::Tensor> state;
  for (const ModelTensor& t : model_tensors(*net))
    state[t.name] = torch::full_like(t.tensor, value);
  return state;
}

std::string error_of(const std::vector<ModelTensor>& model,
                     const std::map<std::string, torch::Tensor>& stored,
                     const StateDictOptions& options) {
  try {
    match_state_dict(model, stored, options);
  } catch (const tts::Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "the state dict matched";
  return "";
}

StateDictOptions options_for(const std::string& file) {
  StateDictOptions options;
  options.file = file;
  return options;
}

}  // namespace

TEST(StateDict, ModelTensorsAreParametersThenBuffersUnderTheFilesNames) {
  Net net(3);
  std::vector<ModelTensor> tensors = model_tensors(*net);
  ASSERT_EQ(tensors.size(), 7u);  // 2 + 2 parameters, then running mean, var and batch count
  EXPECT_EQ(tensors[0].name, "first.weight");
  EXPECT_EQ(tensors[0].stored_name, "first.weight");
  EXPECT_TRUE(tensors[3].parameter);
  EXPECT_EQ(tensors[4].name, "norm.running_mean");
  EXPECT_FALSE(tensors[4].parameter);

  auto renamed = model_tensors(*net, [](const std::string& name) { return "module." + name; });
  EXPECT_EQ(renamed[0].name, "first.weight");
  EXPECT_EQ(renamed[0].stored_name, "module.first.weight");
}

TEST(StateDict, AFittingFileIsMatchedAndCopiedIntoTheModel) {
  Net net(3);
  std::map<std::string, torch::Tensor> stored = state_of(net, 0.5f);
  stored["norm.num_batches_tracked"] = torch::tensor(int64_t{9});
  stored["first.weight"] = stored["first.weight"].to(torch::kDouble);  // converted on copy
  StateDictMatch match = match_state_dict(model_tensors(*net), stored, options_for("f"));
  ASSERT_EQ(match.matched.size(), 7u);
  EXPECT_EQ(match.matched[0].target.name, "first.weight");
  EXPECT_TRUE(match.missing.empty());
  copy_matched(match.matched);
  EXPECT_TRUE(torch::all(net->first->weight == 0.5f).item<bool>());
  EXPECT_EQ(net->first->weight.scalar_type(), torch::kFloat);
  EXPECT_EQ(net->norm->num_batches_tracked.item<int64_t>(), 9);
}

TEST(StateDict, MissingTensorsAreListedWithTheFileAndTheFix) {
  Net net(3);
  std::map<std::string, torch::Tensor> stored = state_of(net, 0);
  stored.erase("first.bias");
  stored.erase("norm.running_var");
  StateDictOptions options = options_for("checkpoint 'a.pt'");
  options.fix = [](const std::vector<TensorMatch>& mismatched) {
    return fmt::format("use the right config ({} shapes differ)", mismatched.size());
  };
  EXPECT_EQ(error_of(model_tensors(*net), stored, options),
            "checkpoint 'a.pt' does not fit the model of the config (missing: first.bias, "
            "norm.running_var; shape differs: none; not in the model: none); use the right "
            "config (0 shapes differ)");
}

TEST(StateDict, TensorsTheModelLacksAreListed) {
  Net net(3);
  std::map<std::string, torch::Tensor> stored = state_of(net, 0);
  stored["second.weight"] = torch::zeros({2, 3});
  stored["extra"] = torch::zeros({1});
  EXPECT_EQ(error_of(model_tensors(*net), stored, options_for("'b.pt'")),
            "'b.pt' does not fit the model of the config (missing: none; shape differs: none; not "
            "in the model: extra, second.weight)");
}

TEST(StateDict, ShapesThatDifferAreListedWithBothShapesUnderTheFilesNames) {
  Net small(4);
  Net big(8);
  auto model = model_tensors(*big, [](const std::string& name) { return "theirs." + name; });
  std::map<std::string, torch::Tensor> stored;
  for (const auto& [name, tensor] : state_of(small, 0)) stored["theirs." + name] = tensor;
  StateDictOptions options = options_for("'c.pt'");
  std::vector<std::string> given;
  options.fix = [&](const std::vector<TensorMatch>& mismatched) {
    for (const TensorMatch& m : mismatched) given.push_back(m.target.name);
    return std::string("fix it");
  };
  std::string message = error_of(model, stored, options);
  EXPECT_EQ(message.find("'c.pt' does not fit the model of the config (missing: none; shape "
                         "differs: theirs.first.weight (checkpoint 4x4, model 8x4), "
                         "theirs.first.bias (checkpoint 4, model 8), "),
            0u)
      << message;
  EXPECT_NE(message.find("; not in the model: none); fix it"), std::string::npos) << message;
  ASSERT_EQ(given.size(), 6u);  // all but norm.num_batches_tracked, a scalar
  EXPECT_EQ(given[0], "first.weight");
}

TEST(StateDict, APartialMatchKeepsWhatTheFileLacksAndRefusesOnlyShapes) {
  Net net(3);
  std::map<std::string, torch::Tensor> stored = state_of(net, 1);
  stored.erase("first.bias");
  stored["extra"] = torch::zeros({1});
  StateDictOptions options = options_for("--init-from 'd.pt'");
  options.partial = true;
  StateDictMatch match = match_state_dict(model_tensors(*net), stored, options);
  EXPECT_EQ(match.matched.size(), 6u);
  EXPECT_EQ(match.missing, std::vector<std::string>{"first.bias"});

  stored["first.weight"] = torch::zeros({5, 4});
  EXPECT_EQ(error_of(model_tensors(*net), stored, options),
            "--init-from 'd.pt' does not fit the model of the config (shape differs: first.weight "
            "(checkpoint 5x4, model 3x4))");
}

TEST(StateDict, ANonFiniteTensorIsRefusedNamingItAndNothingIsCopied) {
  Net net(3);
  std::map<std::string, torch::Tensor> stored = state_of(net, 0.5f);
  stored["norm.running_var"].view({-1})[1] = NAN;
  const std::string e = error_of(model_tensors(*net), stored, options_for("checkpoint 'a.pt'"));
  EXPECT_NE(e.find("checkpoint 'a.pt': tensor 'norm.running_var' holds 1 non-finite value"),
            std::string::npos)
      << e;
  EXPECT_FALSE(torch::all(net->first->weight == 0.5f).item<bool>());
}

TEST(StateDict, AdamMomentsMustBeFiniteAndSecondMomentsNotNegative) {
  const torch::Tensor ok = torch::ones({3});
  require_adam_moments(ok, ok, torch::Tensor(), "state 0");
  require_adam_moments(ok, ok, torch::empty({0}), "state 0");
  auto error = [](const torch::Tensor& m, const torch::Tensor& v, const torch::Tensor& max_v) {
    try {
      require_adam_moments(m, v, max_v, "'do_1': optim_g state 4 (generator.conv_pre.weight_v)");
    } catch (const tts::Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  const torch::Tensor nan = torch::tensor({1.0f, NAN, 2.0f});
  const torch::Tensor negative = torch::tensor({1.0f, -0.5f, -2.0f});
  std::string e = error(nan, ok, torch::Tensor());
  EXPECT_NE(e.find("optim_g state 4 (generator.conv_pre.weight_v) exp_avg holds 1 non-finite"),
            std::string::npos)
      << e;
  e = error(ok, negative, torch::Tensor());
  EXPECT_NE(e.find("exp_avg_sq holds 2 negative values"), std::string::npos) << e;
  e = error(ok, ok, torch::tensor({INFINITY}));
  EXPECT_NE(e.find("max_exp_avg_sq holds 1 non-finite"), std::string::npos) << e;
  // A negative first moment is a plain running mean of gradients: fine.
  require_adam_moments(negative, ok, torch::Tensor(), "state 1");
}

#include "tts/models/tacotron2/conversion/warm_start.h"

#include <torch/torch.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <unordered_map>

#include "tts/checkpoint/checkpoint.h"
#include "tts/checkpoint/state_dict.h"
#include "tts/checkpoint/warm_start.h"
#include "tts/core/error.h"
#include "tts/core/fs.h"
#include "tts/formats/torch_file.h"
#include "tts/models/registry.h"
#include "tts/models/tacotron2/conversion/nvidia.h"
#include "tts/text/symbols.h"

namespace tts::tacotron2 {
// The checkpoint module's matcher, readers and names, unqualified.
using namespace checkpoint;  // NOLINT(google-build-using-namespace)

namespace fs = std::filesystem;
namespace {

// The model's tensor that holds one row per input symbol (the same name in NVIDIA's files).
constexpr char kEmbedding[] = "embedding.weight";

// The symbols a warm start's source embedding stands for.
std::vector<std::string> source_symbols(const Checkpoint* ours, const std::string& source_name) {
  if (ours == nullptr) return text::symbol_table(config::SymbolSet::kNvidia);
  if (!ours->symbols.empty()) return ours->symbols;
  return text::symbol_table(models::config_of(*ours, source_name).text.symbol_set);
}

// "'a', 'b', ... (12 more)": a list for one log line.
std::string quoted_list(const std::vector<std::string>& items, size_t shown = 20) {
  std::vector<std::string> quoted;
  for (size_t i = 0; i < items.size() && i < shown; ++i) quoted.push_back("'" + items[i] + "'");
  std::string text = fmt::format("{}", fmt::join(quoted, ", "));
  if (items.size() > shown) text += fmt::format(" ({} more)", items.size() - shown);
  return text;
}

// Replaces the source's embedding by one of the model's table when the two tables differ;
// returns the summary's words on it ("" when nothing was remapped).
std::string remap_source_embedding(std::map<std::string, torch::Tensor>& source,
                                   const std::vector<std::string>& from,
                                   const std::vector<ModelTensor>& targets,
                                   const std::vector<std::string>& to) {
  auto stored = source.find(kEmbedding);
  if (stored == source.end() || from == to) return "";
  const ModelTensor* target = nullptr;
  for (const ModelTensor& tensor : targets) {
    if (tensor.stored_name == kEmbedding) target = &tensor;
  }
  if (target == nullptr) return "";  // skipped (--init-skip embedding)
  std::vector<std::string> added;
  stored->second = remap_embedding(stored->second, from, target->tensor.detach().cpu(), to, &added);
  return fmt::format(
      "; embedding remapped by symbol ({} of the model's {} symbols copied from the checkpoint's "
      "{}; new, initialized: {})",
      to.size() - added.size(), to.size(), from.size(),
      added.empty() ? std::string("none") : quoted_list(added));
}

// The model's tensor that holds one row per speaker.
constexpr char kSpeakerEmbedding[] = "speaker_embedding.weight";

// Replaces the source's speaker embedding by one of the model's rows, each speaker's row copied
// by name (the others zero, as initialized); returns the summary's words on it ("" for a model
// without speakers or skipped ones).
std::string remap_speaker_embedding(std::map<std::string, torch::Tensor>& source,
                                    const std::vector<std::string>& from,
                                    const std::vector<ModelTensor>& targets,
                                    const std::vector<std::string>& to) {
  const ModelTensor* target = nullptr;
  for (const ModelTensor& tensor : targets) {
    if (tensor.name == kSpeakerEmbedding) target = &tensor;
  }
  if (target == nullptr) return "";
  auto stored = source.find(kSpeakerEmbedding);
  if (stored == source.end()) {
    return "; speaker embedding: none in the checkpoint, every row zero (the model starts as the "
           "checkpoint's one-speaker model)";
  }
  const torch::Tensor& rows = stored->second;
  torch::Tensor out = target->tensor.detach().cpu().clone();
  TTS_CHECK(rows.dim() == 2 && rows.size(0) >= static_cast<int64_t>(from.size()) &&
                rows.size(1) == out.size(1),
            "the checkpoint's {} is {} for a table of {} speakers; the model's rows have {} "
            "values: make model.speaker_embedding_dim {}, or leave them zero: --init-skip "
            "speaker_",
            kSpeakerEmbedding, fmt::join(rows.sizes(), "x"), from.size(), out.size(1),
            rows.dim() == 2 ? rows.size(1) : 0);
  std::vector<std::string> added;
  for (size_t i = 0; i < to.size(); ++i) {
    const auto found = std::find(from.begin(), from.end(), to[i]);
    if (found == from.end()) {
      added.push_back(to[i]);
      continue;
    }
    out[static_cast<int64_t>(i)].copy_(rows[found - from.begin()].to(out.scalar_type()));
  }
  stored->second = out;
  return fmt::format(
      "; speaker embedding remapped by speaker ({} of the model's {} speakers copied from the "
      "checkpoint's {}; new, zero: {})",
      to.size() - added.size(), to.size(), from.size(),
      added.empty() ? std::string("none") : quoted_list(added));
}

}  // namespace

torch::Tensor remap_embedding(const torch::Tensor& source,
                              const std::vector<std::string>& source_symbols,
                              const torch::Tensor& initialized,
                              const std::vector<std::string>& target_symbols,
                              std::vector<std::string>* new_symbols) {
  TTS_CHECK(source.dim() == 2 && source.size(0) == static_cast<int64_t>(source_symbols.size()),
            "the checkpoint's {} is {} for a table of {} symbols: expected one row per symbol",
            kEmbedding, fmt::join(source.sizes(), "x"), source_symbols.size());
  TTS_CHECK(
      initialized.dim() == 2 && initialized.size(0) == static_cast<int64_t>(target_symbols.size()),
      "the model's {} is {} for a table of {} symbols: expected one row per symbol", kEmbedding,
      fmt::join(initialized.sizes(), "x"), target_symbols.size());
  TTS_CHECK(source.size(1) == initialized.size(1),
            "the checkpoint's symbol embeddings have {} values, the model's {}: make "
            "model.symbols_embedding_dim {}, or leave them initialized: --init-skip embedding",
            source.size(1), initialized.size(1), source.size(1));
  std::unordered_map<std::string, int64_t> rows;
  for (size_t i = 0; i < source_symbols.size(); ++i) {
    rows.emplace(source_symbols[i], static_cast<int64_t>(i));  // the first of a repeated name
  }
  torch::Tensor out = initialized.detach().to(source.scalar_type()).clone();
  for (size_t i = 0; i < target_symbols.size(); ++i) {
    auto found = rows.find(target_symbols[i]);
    if (found == rows.end()) {
      if (new_symbols != nullptr) new_symbols->push_back(target_symbols[i]);
      continue;
    }
    out[static_cast<int64_t>(i)].copy_(source[found->second]);
  }
  return out;
}

std::string warm_start(torch::nn::Module& model, const std::string& path,
                       const std::vector<std::string>& skip,
                       const std::vector<std::string>& symbols,
                       const std::vector<std::string>& speakers) {
  std::map<std::string, torch::Tensor> source;  // under the file's names, ours or NVIDIA's
  std::string source_name = path;
  std::vector<std::string> from;  // the source's symbols
  // A run folder or its latest is ours; a file is read once and is ours when it carries our
  // format tag (what is told apart is what is used: no second read by name).
  std::optional<Checkpoint> checkpoint;
  std::error_code ec;
  if (fs::is_directory(path, ec) || fs::path(path).filename() == "latest") {
    checkpoint = load_newest_checkpoint(path, &source_name);
  } else {
    const formats::PickleValue root = formats::read_torch_file(path, Symlinks::kFollow);
    if (root.find("format") != nullptr) {
      checkpoint = checkpoint_from_value(root, path);
    } else {
      source = nvidia_state_dict(root, path);
    }
  }
  const bool ours = checkpoint.has_value();
  if (ours) {
    models::config_of(*checkpoint, source_name);  // a checkpoint is whole only with a sound config
    source.insert(checkpoint->tensors.begin(), checkpoint->tensors.end());
    from = source_symbols(&*checkpoint, source_name);
  } else {
    from = source_symbols(nullptr, source_name);
  }
  const std::vector<std::string> source_speakers =
      ours ? checkpoint->speakers : std::vector<std::string>{};
  return warm_start_tensors(
      ours ? model_tensors(model) : model_tensors(model, nvidia_name), std::move(source),
      source_name, ours ? "tts-train checkpoint" : "NVIDIA/tacotron2 file", skip,
      [&](std::map<std::string, torch::Tensor>& tensors, const std::vector<ModelTensor>& targets) {
        return remap_source_embedding(tensors, from, targets, symbols) +
               remap_speaker_embedding(tensors, source_speakers, targets, speakers);
      });
}

}  // namespace tts::tacotron2

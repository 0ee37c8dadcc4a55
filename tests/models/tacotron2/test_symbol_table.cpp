// The symbol table travels with the model: checkpoints record it, loading a trained model checks
// it against today's table, and a warm start copies the embedding by symbol between tables.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>
#include <vector>

#include "../../support/error_of.h"
#include "../../support/scratch.h"
#include "nvidia_fixture.h"
#include "tts/checkpoint/checkpoint.h"
#include "tts/config/config.h"
#include "tts/core/error.h"
#include "tts/models/tacotron2/conversion/nvidia.h"
#include "tts/models/tacotron2/conversion/warm_start.h"
#include "tts/models/tacotron2/layers/network.h"
#include "tts/models/tacotron2/speaking/trained_model.h"
#include "tts/text/symbols.h"

using namespace tts::checkpoint;
using namespace tts::tacotron2;
using tts::config::SymbolSet;
using tts::text::symbol_table;
namespace fx = nvidia_fixture;

namespace {

using tts::test::error_of;

// The fixture's small model, reading text with `symbol_set`.
tts::config::Config config_for(SymbolSet symbol_set) {
  return tts::config::load_config(
      fx::kConfig, {fmt::format("text.symbol_set={}", tts::config::choice_name(symbol_set))});
}

tts::tacotron2::Tacotron2 model_for(const tts::config::Config& config) {
  return tts::tacotron2::build_model(config, tts::text::symbol_count(config.text.symbol_set),
                                     config.model.n_frames_per_step);
}

// Row `symbol` of an embedding over `table`.
torch::Tensor row(const torch::Tensor& embedding, const std::vector<std::string>& table,
                  const std::string& symbol) {
  for (size_t i = 0; i < table.size(); ++i) {
    if (table[i] == symbol) return embedding[static_cast<int64_t>(i)];
  }
  ADD_FAILURE() << "no symbol '" << symbol << "'";
  return torch::Tensor();
}

// A checkpoint of a fresh model of `config` holding `symbols`, written under `dir`.
std::string save_model(const std::string& dir, const tts::config::Config& config,
                       tts::tacotron2::Tacotron2& model, const std::vector<std::string>& symbols) {
  Checkpoint checkpoint = capture(*model, {}, TrainingState{}, tts::config::dump_config(config));
  checkpoint.symbols = symbols;
  return save_checkpoint(dir, checkpoint, 1);
}

}  // namespace

TEST(RemapEmbedding, CopiesTheRowOfEverySharedSymbolAndKeepsTheOthersInitialized) {
  torch::Tensor source = torch::arange(6, torch::kFloat).reshape({3, 2});
  torch::Tensor initialized = torch::full({4, 2}, -1.0f);
  std::vector<std::string> added;
  torch::Tensor out =
      remap_embedding(source, {"_", "a", "b"}, initialized, {"_", "b", "c", "a"}, &added);
  EXPECT_TRUE(torch::equal(out[0], source[0]));
  EXPECT_TRUE(torch::equal(out[1], source[2]));
  EXPECT_TRUE(torch::equal(out[2], initialized[2]));
  EXPECT_TRUE(torch::equal(out[3], source[1]));
  EXPECT_EQ(added, std::vector<std::string>{"c"});
  EXPECT_TRUE(torch::equal(initialized, torch::full({4, 2}, -1.0f))) << "the input is unchanged";
}

TEST(RemapEmbedding, RefusesRowsThatAreNotOnePerSymbolAndOtherWidths) {
  std::string message = error_of([] {
    remap_embedding(torch::zeros({3, 2}), {"_", "a"}, torch::zeros({2, 2}), {"_", "a"}, nullptr);
  });
  EXPECT_NE(message.find("3x2 for a table of 2 symbols"), std::string::npos) << message;
  message = error_of([] {
    remap_embedding(torch::zeros({2, 3}), {"_", "a"}, torch::zeros({2, 2}), {"_", "a"}, nullptr);
  });
  EXPECT_NE(message.find("--init-skip embedding"), std::string::npos) << message;
}

TEST(SymbolTable, TheFirstDifferenceIsNamed) {
  EXPECT_EQ(tts::text::table_difference({"_", "a"}, "A", {"_", "a"}, "B"), "");
  EXPECT_EQ(tts::text::table_difference({"_", "a", "b"}, "A", {"_", "x"}, "B"),
            "id 1 is 'a' in A and 'x' in B");
  EXPECT_EQ(tts::text::table_difference({"_", "a"}, "A", {"_", "a", "b"}, "B"),
            "A has 2 symbols, B 3 (the first 2 agree)");
}

TEST(SymbolTable, ACheckpointRecordsItsTableAndAnImportedOneNvidias) {
  std::string dir = tts::test::fresh_dir("symbols_recorded");
  tts::config::Config config = config_for(SymbolSet::kEnglish);
  torch::manual_seed(1);
  tts::tacotron2::Tacotron2 model = model_for(config);
  std::string path = save_model(dir, config, model, symbol_table(SymbolSet::kEnglish));
  EXPECT_EQ(load_checkpoint(path).symbols, symbol_table(SymbolSet::kEnglish));

  Checkpoint imported = import_nvidia(fx::kCheckpoint, fx::config());
  EXPECT_EQ(imported.symbols, symbol_table(SymbolSet::kNvidia));
}

TEST(SymbolTable, ATrainedModelWhoseTableDiffersFromTodaysIsRefusedNamingTheFirstDifference) {
  std::string dir = tts::test::fresh_dir("symbols_refused");
  tts::config::Config config = config_for(SymbolSet::kEnglish);
  torch::manual_seed(1);
  tts::tacotron2::Tacotron2 model = model_for(config);
  std::vector<std::string> other = symbol_table(SymbolSet::kEnglish);
  std::swap(other[5], other[6]);
  std::string path = save_model(dir, config, model, other);
  std::string message = error_of([&] { tts::tacotron2::load_trained_model(path, torch::kCPU); });
  EXPECT_NE(message.find(fmt::format("id 5 is '{}' in the checkpoint's symbol table", other[5])),
            std::string::npos)
      << message;
  EXPECT_NE(message.find(path), std::string::npos) << message;

  std::string good = tts::test::fresh_dir("symbols_accepted");
  save_model(good, config, model, symbol_table(SymbolSet::kEnglish));
  EXPECT_EQ(tts::tacotron2::load_trained_model(good, torch::kCPU).step, 0);
}

TEST(WarmStart, FromNvidiasFileIntoCharactersCopiesTheEmbeddingBySymbol) {
  tts::config::Config config = config_for(SymbolSet::kEnglish);
  torch::manual_seed(3);
  tts::tacotron2::Tacotron2 model = model_for(config);
  const auto& ours = symbol_table(SymbolSet::kEnglish);
  torch::Tensor eos_before = row(model->named_parameters()["embedding.weight"], ours, "~").clone();

  std::string summary = warm_start(*model, fx::kCheckpoint, {}, ours);

  // NVIDIA's table has no end-of-sentence mark and no '"'.
  EXPECT_NE(summary.find("embedding remapped by symbol (64 of the model's 66 symbols copied from "
                         "the checkpoint's 148; new, initialized: '~', '\"')"),
            std::string::npos)
      << summary;
  torch::Tensor file = read_nvidia_state_dict(fx::kCheckpoint).at("embedding.weight");
  torch::Tensor mine = model->named_parameters()["embedding.weight"].detach();
  const auto& nvidia = symbol_table(SymbolSet::kNvidia);
  for (const std::string symbol : {"a", "Z", "!", " ", "_"}) {
    EXPECT_TRUE(torch::equal(row(mine, ours, symbol), row(file, nvidia, symbol))) << symbol;
  }
  EXPECT_TRUE(torch::equal(row(mine, ours, "~"), eos_before)) << "a new symbol keeps its init";
}

TEST(WarmStart, FromOurCheckpointIntoALargerTableCopiesSharedRowsAndSkipWins) {
  std::string dir = tts::test::fresh_dir("symbols_warm_start");
  tts::config::Config characters = config_for(SymbolSet::kEnglish);
  torch::manual_seed(4);
  tts::tacotron2::Tacotron2 source = model_for(characters);
  save_model(dir, characters, source, symbol_table(SymbolSet::kEnglish));

  tts::config::Config arpabet = config_for(SymbolSet::kEnglishArpabet);
  torch::manual_seed(5);
  tts::tacotron2::Tacotron2 target = model_for(arpabet);
  const auto& table = symbol_table(SymbolSet::kEnglishArpabet);
  torch::Tensor phoneme_before =
      row(target->named_parameters()["embedding.weight"], table, "@AH0").clone();
  std::string summary = warm_start(*target, dir, {}, table);
  EXPECT_NE(summary.find("(66 of the model's 150 symbols copied from the checkpoint's 66; new, "
                         "initialized: '@AA', '@AA0'"),
            std::string::npos)
      << summary;
  torch::Tensor mine = target->named_parameters()["embedding.weight"].detach();
  torch::Tensor theirs = source->named_parameters()["embedding.weight"].detach();
  for (const std::string symbol : {"_", "~", "q", "?"}) {
    EXPECT_TRUE(torch::equal(row(mine, table, symbol),
                             row(theirs, symbol_table(SymbolSet::kEnglish), symbol)))
        << symbol;
  }
  EXPECT_TRUE(torch::equal(row(mine, table, "@AH0"), phoneme_before));
  // Every other tensor came over as it was.
  EXPECT_TRUE(torch::equal(target->named_parameters()["encoder.conv0.weight"],
                           source->named_parameters()["encoder.conv0.weight"]));

  torch::manual_seed(5);
  tts::tacotron2::Tacotron2 skipped = model_for(arpabet);
  torch::Tensor initialized = skipped->named_parameters()["embedding.weight"].detach().clone();
  summary = warm_start(*skipped, dir, {"embedding"}, table);
  EXPECT_EQ(summary.find("remapped"), std::string::npos) << summary;
  EXPECT_TRUE(torch::equal(skipped->named_parameters()["embedding.weight"], initialized));
}

// What Tacotron-2 registers (models/registry.h): training, bench and inspect, its ceilings, and
// its roles after training: acoustic model, NVIDIA's files, forward.
#include "tts/models/tacotron2/family.h"
#include "tts/models/tacotron2/gta.h"
#include "tts/models/tacotron2/network.h"
#include "tts/models/tacotron2/synthesize.h"
#include "tts/text/symbols.h"

namespace tts::tacotron2 {

models::FamilyEntry entry() {
  models::FamilyEntry entry;
  entry.make = make_family;
  entry.summarize_checkpoint = summarize_checkpoint;
  entry.bench = make_bench;
  entry.check_size = [](const config::Config& config, int64_t, const std::string&) {
    require_model_size(config, text::symbol_count(config.text.symbol_set));
  };
  entry.acoustic.synthesize = synthesize;
  entry.acoustic.gta = run_gta;
  entry.converters = {nvidia_converter()};
  entry.forward = forward_role();
  return entry;
}

}  // namespace tts::tacotron2

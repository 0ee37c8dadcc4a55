// What HiFi-GAN registers (models/registry.h): training, bench and inspect, and its roles after
// training: vocoder, jik876's files, forward.
#include "tts/models/hifigan/family.h"

namespace tts::hifigan {

models::FamilyEntry entry() {
  models::FamilyEntry entry;
  entry.make = make_family;
  entry.summarize_checkpoint = summarize_checkpoint;
  entry.bench = make_bench;
  entry.load_vocoder = load_vocoder;
  entry.converters = {jik876_converter()};
  entry.forward = forward_role();
  return entry;
}

}  // namespace tts::hifigan

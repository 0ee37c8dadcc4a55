// What WaveNet registers (models/registry.h): training, bench and inspect, and its roles after
// training: vocoder, r9y9's files, forward.
#include "tts/models/wavenet/family.h"

namespace tts::wavenet {

models::FamilyEntry entry() {
  models::FamilyEntry entry;
  entry.make = make_family;
  entry.summarize_checkpoint = summarize_checkpoint;
  entry.bench = make_bench;
  entry.load_vocoder = load_vocoder;
  entry.converters = {r9y9_converter()};
  entry.forward = forward_role();
  return entry;
}

}  // namespace tts::wavenet

// WaveNet as a vocoder (models/roles.h: the vocoder role): the moving average of the trained
// network, generating audio from a mel incrementally, and its speaker table.
#include <torch/torch.h>

#include <exception>
#include <string>

#include "tts/core/error.h"
#include "tts/models/speaker_table.h"
#include "tts/models/wavenet/conversion/r9y9.h"
#include "tts/models/wavenet/speaking/generate.h"
#include "tts/models/wavenet/training/family.h"

namespace tts::wavenet {
namespace {

// The checkpoint's moving average when it keeps one (r9y9 synthesizes with it), generated
// incrementally on the CPU whatever the device (generate.h) with the run's seed. A network with a
// speaker embedding speaks as the speaker select_speaker chose: by name from the checkpoint's
// speaker table, or, in a checkpoint without one (an import of r9y9's files, whose rows have no
// names), by row number.
class WavenetVocoder final : public models::Vocoder {
 public:
  explicit WavenetVocoder(const models::TrainedCheckpoint& trained)
      : Vocoder(trained), speakers_(trained.checkpoint.speakers) {
    network_ = trained_network(trained);
  }

  std::vector<std::string> speakers() const override { return speakers_; }

  void select_speaker(const std::string& name) override {
    const config::WavenetOptions& options = config().wavenet;
    if (options.gin_channels <= 0) {
      Vocoder::select_speaker(name);
      return;
    }
    TTS_USAGE_CHECK(options.use_speaker_embedding,
                    "{}: its network takes speaker features (wavenet.use_speaker_embedding: "
                    "false), which vocode cannot give; use `forward` with input speaker",
                    source());
    if (!speakers_.empty()) {
      speaker_ = models::speaker_row_by_name(speakers_, name, source());
      return;
    }
    const int64_t rows = options.n_speakers;
    int64_t row = -1;
    try {
      size_t used = 0;
      row = std::stoll(name, &used);
      if (used != name.size()) row = -1;
    } catch (const std::exception&) {
    }
    TTS_USAGE_CHECK(row >= 0 && row < rows,
                    "{} has a speaker embedding of {} rows (wavenet.n_speakers) but no speaker "
                    "table (an import of r9y9's files): give --speaker a row number in [0, {}) "
                    "(found '{}'), or fine-tune it on a store (train --init-from), whose "
                    "checkpoints name the rows",
                    source(), rows, rows, name);
    speaker_ = row;
  }

  // Generation as the frames come (generation_stream): any plan gives vocode()'s samples, the
  // run's seed drawing the same random stream.
  std::unique_ptr<models::VocoderStream> stream(const models::ChunkPlan& plan) override {
    torch::Tensor speaker;
    if (config().wavenet.gin_channels > 0) {
      if (speaker_ < 0) select_speaker("");  // refuses, naming the choices
      speaker = torch::full({1}, speaker_, torch::kInt64);
    }
    return generation_stream(network_, static_cast<uint64_t>(config().train.seed), speaker, plan);
  }

 private:
  WaveNet network_{nullptr};
  std::vector<std::string> speakers_;
  int64_t speaker_ = -1;  // the row select_speaker chose
};

}  // namespace

WaveNet trained_network(const models::TrainedCheckpoint& trained) {
  WaveNet network(trained.config.wavenet, trained.config.audio.n_mels);
  load_wavenet_state_dict(*network, synthesis_tensors(trained.checkpoint), trained.source);
  network->eval();
  return network;
}

std::unique_ptr<models::Vocoder> load_vocoder(const models::TrainedCheckpoint& trained,
                                              const torch::Device&) {
  return std::make_unique<WavenetVocoder>(trained);
}

}  // namespace tts::wavenet

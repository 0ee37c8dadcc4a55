#include <torch/torch.h>

#include "tts/core/error.h"
#include "tts/models/wavenet/family.h"
#include "tts/models/wavenet/generate.h"
#include "tts/models/wavenet/r9y9.h"

namespace tts::wavenet {
namespace {

// The checkpoint's moving average when it keeps one (r9y9 synthesizes with it), generated
// incrementally on the CPU whatever the device (generate.h) with the run's seed.
class WavenetVocoder final : public models::Vocoder {
 public:
  explicit WavenetVocoder(const models::TrainedCheckpoint& trained) : Vocoder(trained) {
    network_ = trained_network(trained);
  }

  std::vector<float> vocode(const torch::Tensor& mel) override {
    const int64_t n_mels = config().audio.n_mels;
    TTS_CHECK(mel.dim() == 2 && mel.size(1) == n_mels,
              "vocode: expected a mel [frames, {}], found [{}]", n_mels,
              fmt::join(mel.sizes(), ", "));
    torch::NoGradGuard no_grad;
    torch::Tensor input =
        pad_mel(mel.t().unsqueeze(0).to(torch::kFloat32).contiguous(), config().wavenet.cin_pad);
    torch::Tensor audio = generate(network_, input, static_cast<uint64_t>(config().train.seed))
                              .reshape({-1})
                              .contiguous();
    return {audio.data_ptr<float>(), audio.data_ptr<float>() + audio.numel()};
  }

 private:
  WaveNet network_{nullptr};
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

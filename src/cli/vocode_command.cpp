// tts-train vocode: mels (.npy) to audio with a trained vocoder checkpoint (any family with the
// vocoder role, models/roles.h). Each mel's
// settings are checked against the vocoder's before anything is generated: a mel that lies in a
// feature store or a gta output (a features.yaml beside it or one folder up) is refused when it
// was made with other settings, naming each one; a bare .npy cannot be checked and says so. Every
// mel's shape and values are checked too before the first WAV is written. A vocoder of several
// speakers speaks as --speaker NAME (models::Vocoder::select_speaker).
#include <torch/torch.h>

#include <filesystem>

#include "tts/audio/audio_io.h"
#include "tts/cli/command.h"
#include "tts/cli/outputs.h"
#include "tts/core/error.h"
#include "tts/core/logging.h"
#include "tts/formats/npy.h"
#include "tts/inference/mel_files.h"
#include "tts/models/registry.h"

namespace tts::cli {
namespace {
namespace fs = std::filesystem;

struct VocodeArgs {
  std::string checkpoint;
  std::vector<std::string> mels;
  std::string out;
  std::string speaker;
};

// A mel read from a file, before anything is written: frames for the network's convolutions
// (a mel of none ends inside libtorch), and every value finite (a NaN becomes a WAV of NaNs).
void check_mel(const torch::Tensor& mel, const std::string& path) {
  TTS_CHECK(mel.size(0) >= 1,
            "{}: the mel has no frames (shape [{}]); a vocoder needs at least one; nothing was "
            "written",
            path, fmt::join(mel.sizes(), ", "));
  const torch::Tensor finite = torch::isfinite(mel);
  const int64_t bad = mel.numel() - finite.sum().item<int64_t>();
  if (bad == 0) return;
  const int64_t first = torch::logical_not(finite).reshape({-1}).nonzero()[0][0].item<int64_t>();
  throw Error(fmt::format(
      "{}: the mel holds {} non-finite value{} (NaN or infinity), the first at frame {}, channel "
      "{}; nothing was written",
      path, bad, bad == 1 ? "" : "s", first / mel.size(1), first % mel.size(1)));
}

// The share of `samples` past full scale, which a WAV clips: said as a warning when any is
// (a briefly trained vocoder's output often is, and it sounds like noise without a word why).
void warn_of_clipping(const std::string& out, const std::vector<float>& samples) {
  const size_t clipped = audio::clipped_samples(samples);
  if (clipped == 0) return;
  log::get("vocode")->warn(
      "{}: {:.1f}% of its samples ({} of {}) are at or past full scale and clip; a vocoder "
      "trained longer, or mels of the settings it was trained on, stay within it",
      out, 100.0 * static_cast<double>(clipped) / static_cast<double>(samples.size()), clipped,
      samples.size());
}

Runner setup_vocode(CLI::App& app) {
  auto args = std::make_shared<VocodeArgs>();
  app.add_option("--checkpoint", args->checkpoint,
                 "vocoder checkpoint file, RUN/checkpoints/latest or run directory (another "
                 "framework's file: convert it first, tts-train convert --help lists the formats)")
      ->required();
  app.add_option("--mel", args->mels,
                 "mel .npy, [frames, n_mels] (a feature store's, gta's, synthesize's) or "
                 "[n_mels, frames] (NVIDIA's, jik876's); repeat for several")
      ->required();
  app.add_option("--out", args->out,
                 "output .wav (one --mel), .npy (one --mel: the float samples at the vocoder's "
                 "sample rate) or folder (one ID.wav per mel, named after it; with several --mel "
                 "--out is always a folder). The folder is created, the folders above it are not")
      ->required();
  app.add_option("--speaker", args->speaker,
                 "the voice of a vocoder of several speakers, by its name in the checkpoint's "
                 "speaker table (tts-train inspect lists them): required for one of several, "
                 "refused for a one-speaker vocoder");
  std::vector<std::string> vocoders;
  for (config::ModelKind kind : models::kinds()) {
    if (models::family(kind).load_vocoder) vocoders.push_back(fmt::format("{}", kind));
  }
  app.footer(fmt::format("The checkpoint's model.kind is one of the vocoders: {}.",
                         fmt::join(vocoders, ", ")));
  return [args]() {
    auto log = log::get("vocode");
    // Where every output goes is checked before the vocoder loads.
    const OutTarget target = out_target(args->out, args->mels.size(), "mel", {".wav", ".npy"});
    OutputPlan plan(target);
    std::vector<std::string> outs;
    for (const std::string& path : args->mels) {
      outs.push_back(target.folder ? (fs::path(args->out) / fs::path(path).stem()).string() + ".wav"
                                   : args->out);
      plan.add(outs.back(), "--mel " + path);
      plan.add_input(path, "--mel " + path);
    }
    plan.check();
    std::unique_ptr<models::Vocoder> vocoder = models::load_vocoder(args->checkpoint, torch::kCPU);
    vocoder->select_speaker(args->speaker);
    const config::Config& config = vocoder->config();
    // Every mel is read and checked before the first is vocoded: a mismatch found late would
    // leave half the outputs written.
    std::vector<torch::Tensor> mels;
    for (const std::string& path : args->mels) {
      std::optional<config::AudioOptions> made_with = inference::mel_settings_of(path);
      if (made_with) {
        vocoder->check_mels(*made_with, fmt::format("the mels of {}", path));
      } else {
        log->warn(
            "{} has no settings beside it (STEM.yaml, which synthesize writes) nor a "
            "features.yaml beside it or one folder up: its mel settings cannot be checked "
            "against the vocoder's (audio.* of {}); make sure they are the same",
            path, vocoder->source());
      }
      mels.push_back(inference::read_mel_npy(path, config.audio.n_mels));
      check_mel(mels.back(), path);
    }
    // One mel to one file: a .wav, or an .npy of the float samples (what `forward` compares);
    // else a folder of ID.wav.
    plan.create_folder();
    for (size_t i = 0; i < mels.size(); ++i) {
      const std::string& out = outs[i];
      std::vector<float> samples = vocoder->vocode(mels[i]);
      if (fs::path(out).extension() == ".npy") {
        formats::write_npy(out, samples.data(), {static_cast<int64_t>(samples.size())});
      } else {
        audio::write_wav(out, samples, config.audio.sample_rate);
      }
      log->info("{}: {:.2f} s from {} mel frames ({})", out,
                static_cast<double>(samples.size()) / config.audio.sample_rate, mels[i].size(0),
                args->mels[i]);
      if (fs::path(out).extension() != ".npy") warn_of_clipping(out, samples);  // .npy: unclipped
    }
    return 0;
  };
}

}  // namespace

TTS_REGISTER_COMMAND("vocode", "mels (.npy) to audio with a trained vocoder", 46, setup_vocode);

}  // namespace tts::cli

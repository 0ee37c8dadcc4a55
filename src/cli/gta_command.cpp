// tts-train gta: ground-truth-aligned (teacher-forced) mels of a feature store, for fine-tuning a
// vocoder on what the acoustic model produces (the checkpoint's family computes them: its acoustic
// role, models/roles.h). OUT is a feature store of the predicted mels and their waveforms; a
// rerun keeps what the same checkpoint made and recomputes what another made. --nproc-per-node N
// splits the utterances over N worker processes (no communication: each writes its own files).
// The command parses; inference::gta does it.
#include "tts/cli/command.h"
#include "tts/inference/gta.h"

namespace tts::cli {
namespace {

struct GtaArgs {
  models::GtaRequest request;
  std::string prenet_dropout = "keyed";
  int nproc_per_node = 1;
  std::string corpus;
};

Runner setup_gta(CLI::App& app) {
  auto args = std::make_shared<GtaArgs>();
  app.add_option("--checkpoint", args->request.checkpoint,
                 "checkpoint file, RUN/checkpoints/latest or run directory (NVIDIA's: convert it "
                 "first with tts-train convert --from nvidia)")
      ->required();
  app.add_option("--data", args->request.data_dir, "feature store written by tts-train preprocess")
      ->required();
  app.add_option("--out", args->request.out_dir,
                 "output folder: a feature store a vocoder fine-tunes on (mels/, waveforms/, "
                 "features.yaml), ID.npy [n_mels, frames] for other frameworks, gta.yaml (what "
                 "made them) and, with --wavs, filelist.txt")
      ->required();
  app.add_option("--wavs", args->request.wavs_dir,
                 "the corpus the store was made from (default, for a store that keeps no "
                 "waveforms: the corpus its features.yaml records; gta reads each utterance's "
                 "audio there, as preprocess did); filelist.txt then pairs each utterance's audio "
                 "file with its mel");
  app.add_option("--corpus", args->corpus,
                 "the layout of --wavs: ljspeech, vctk, libritts or csv (default: the layout the "
                 "store's features.yaml records, else the checkpoint's data.corpus; "
                 "docs/corpora.md)")
      ->check(CLI::IsMember(config::choice_names<config::CorpusLayout>()));
  app.add_option("--prenet-dropout", args->prenet_dropout,
                 "keyed (default: the prenet's dropout stays on, as in training and NVIDIA's "
                 "gta, each utterance's masks drawn from its own stream of the checkpoint's seed "
                 "and step: a rerun and any worker count give the same mels) or off")
      ->check(CLI::IsMember({"keyed", "off"}));
  app.add_option("--nproc-per-node", args->nproc_per_node,
                 "worker processes on this machine (one per GPU)");
  return [args]() {
    inference::GtaLaunch launch;
    launch.request = args->request;
    launch.request.inference_dropout = args->prenet_dropout == "keyed";
    if (!args->corpus.empty()) {
      launch.request.corpus =
          config::require_choice<config::CorpusLayout>(args->corpus, "--corpus");
    }
    launch.nproc_per_node = args->nproc_per_node;
    launch.log_level = resolved_log_level(nullptr);
    return inference::gta(std::move(launch));
  };
}

}  // namespace

TTS_REGISTER_COMMAND("gta",
                     "ground-truth-aligned mels of a feature store (teacher forcing), for "
                     "vocoder fine-tuning",
                     45, setup_gta);

}  // namespace tts::cli

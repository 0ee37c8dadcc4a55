// `tts-train evaluate --checkpoint CKPT --data STORE`: the checkpoint speaks the utterances of one
// split of the store, each in its own speaker's voice and batched as `synthesize --batch`, through
// the same family synthesis `synthesize` runs (so a clip is what `synthesize --speaker` gives for
// its text); the references are the store's own recordings (docs/evaluate.md).
#include <torch/torch.h>

#include <algorithm>
#include <filesystem>

#include "evaluate_modes.h"
#include "tts/audio/audio_io.h"
#include "tts/core/error.h"
#include "tts/core/fs.h"
#include "tts/core/logging.h"
#include "tts/core/printable.h"
#include "tts/data/feature_store.h"
#include "tts/eval/inputs.h"
#include "tts/formats/npy.h"
#include "tts/models/registry.h"

namespace tts::cli {
namespace fs = std::filesystem;
namespace {

std::string names(const std::vector<std::string>& table) {
  std::string out;
  for (const auto& name : table) out += (out.empty() ? "" : ", ") + printable(name);
  return out;
}

// The utterances to evaluate: the split's first `limit`.
std::vector<data::Utterance> chosen_utterances(const data::FeatureStore& store,
                                               const CheckpointEvaluation& args) {
  TTS_USAGE_CHECK(args.split == "val" || args.split == "train",
                  "evaluate: --split {}: expected val or train", printable(args.split));
  std::vector<data::Utterance> chosen = args.split == "val" ? store.val() : store.train();
  TTS_USAGE_CHECK(!chosen.empty(),
                  "evaluate: the store {} has no utterances in {}.tsv; expected at least one: "
                  "evaluate --split {}, or preprocess with a data.val_size above 0",
                  printable(args.data), args.split, args.split == "val" ? "train" : "val");
  if (args.limit > 0 && static_cast<int64_t>(chosen.size()) > args.limit) {
    chosen.resize(static_cast<size_t>(args.limit));
  }
  return chosen;
}

// The speaker each utterance is spoken by: its store speaker, which the checkpoint's table must
// name; "" for every utterance of a one-speaker model.
std::string voice_of(const data::Utterance& u, const std::vector<std::string>& table,
                     const CheckpointEvaluation& args) {
  if (table.empty() || u.speaker.empty()) return "";
  TTS_USAGE_CHECK(std::find(table.begin(), table.end(), u.speaker) != table.end(),
                  "evaluate: utterance {} of {} is spoken by {}, which the speaker table of {} "
                  "lacks (it has {}); evaluate a checkpoint trained on this store's speakers",
                  printable(u.id), printable(args.data), printable(u.speaker),
                  printable(args.checkpoint), names(table));
  return u.speaker;
}

// The references, checked before anything is written: the corpus folder's clips (--reference), or
// the store's waveforms, which write_references writes out.
void find_references(const std::vector<data::Utterance>& chosen, const CheckpointEvaluation& args,
                     EvaluationClips& clips) {
  if (!args.reference.empty()) {
    clips.reference = eval::find_clips(args.reference, "--reference");
    clips.reference_source = "--reference " + printable(args.reference);
    return;
  }
  const bool kept = std::all_of(chosen.begin(), chosen.end(),
                                [](const auto& u) { return !u.waveform_path.empty(); });
  TTS_USAGE_CHECK(kept,
                  "evaluate: the store {} keeps no waveforms (made with audio.waveforms: false), "
                  "so it has no recordings to compare with; give --reference DIR, the corpus's "
                  "recordings named by utterance id (ID.wav), or preprocess with --set "
                  "audio.waveforms=true",
                  printable(args.data));
}

// The store's waveforms as OUT/reference/ID.wav, at the store's sample rate.
void write_references(const std::vector<data::Utterance>& chosen, int sample_rate,
                      const CheckpointEvaluation& args, EvaluationClips& clips) {
  const std::string folder = args.out + "/reference";
  create_folder(folder);
  for (const auto& u : chosen) {
    formats::NpyArray waveform;
    try {
      waveform = formats::read_npy(u.waveform_path);
    } catch (const std::exception& e) {
      throw Error(data::feature_file_error(u.waveform_path, u.id, e));
    }
    const std::string wav = folder + "/" + u.id + ".wav";
    audio::write_wav(wav, waveform.data, sample_rate);
    clips.reference[u.id] = wav;
  }
  clips.reference_source = "the store's waveforms (" + printable(folder) + ")";
}

// The store, refused when its settings are not the checkpoint's (the check train and gta make);
// every utterance counts, however long.
data::FeatureStore open_store(const models::TrainedCheckpoint& trained,
                              const CheckpointEvaluation& args) {
  config::Config config = trained.config;
  config.data.max_frames = 0;
  try {
    return data::FeatureStore::open(args.data, config);
  } catch (const UsageError& e) {
    throw UsageError(fmt::format(
        "evaluate: the store {} was not made with the settings checkpoint {} was trained with "
        "(the config below is the checkpoint's); evaluate it with a checkpoint trained on such "
        "features, or preprocess the corpus again with the checkpoint's config:\n{}",
        printable(args.data), printable(args.checkpoint), e.what()));
  }
}

}  // namespace

EvaluationClips synthesize_store_clips(const CheckpointEvaluation& args) {
  models::TrainedCheckpoint trained = models::read_trained(args.checkpoint);
  const models::FamilyEntry& family = models::family(trained.config.model.kind);
  TTS_USAGE_CHECK(family.acoustic.synthesize,
                  "evaluate: --checkpoint {} is a model.kind {} checkpoint, which does not speak "
                  "text{}",
                  printable(args.checkpoint), trained.config.model.kind,
                  family.load_vocoder ? ": it is a vocoder; give it as --vocoder" : "");
  const data::FeatureStore store = open_store(trained, args);
  const std::vector<data::Utterance> chosen = chosen_utterances(store, args);
  const std::vector<std::string>& table = trained.checkpoint.speakers;
  // Utterances grouped by voice, in the split's order within each.
  std::map<std::string, std::vector<const data::Utterance*>> by_voice;
  EvaluationClips clips;
  for (const auto& u : chosen) {
    TTS_USAGE_CHECK(u.id.find('/') == std::string::npos && u.id != "." && u.id != "..",
                    "evaluate: utterance id {} of {} cannot name a file", printable(u.id),
                    printable(args.data));
    by_voice[voice_of(u, table, args)].push_back(&u);
    if (!u.speaker.empty()) clips.speakers[u.id] = u.speaker;
    clips.texts[u.id] = u.text;
  }
  find_references(chosen, args, clips);
  std::unique_ptr<models::Vocoder> vocoder;
  if (!args.vocoder.empty()) {
    vocoder = models::load_vocoder(args.vocoder, torch::kCPU);
    vocoder->check_mels(trained.config.audio,
                        fmt::format("the mels of checkpoint {}", args.checkpoint));
  }
  create_folder(args.out);
  if (args.reference.empty()) {
    write_references(chosen, store.store_config().audio.sample_rate, args, clips);
  }

  const std::string folder = args.out + "/synthesized";
  create_folder(folder);
  auto log = log::get("eval");
  for (const auto& [voice, utterances] : by_voice) {
    log->info("synthesizing {} utterances{}", utterances.size(),
              voice.empty() ? "" : " of " + printable(voice));
    // A multi-speaker vocoder speaks as the utterance's speaker too.
    if (vocoder) vocoder->select_speaker(vocoder->speakers().empty() ? "" : voice);
    const std::string scratch = folder + "/.speaking";
    std::error_code ec;
    fs::remove_all(scratch, ec);
    models::SynthesisRequest request;
    for (const auto* u : utterances) request.sentences.push_back(u->text);
    request.out = scratch;
    request.to_directory = true;
    request.vocoder = vocoder.get();
    request.batch = args.batch;
    request.speaker = voice;
    family.acoustic.synthesize(trained, request);
    // Sentence N of the group is utterance N's: N.wav -> ID.wav, N.mel.npy -> ID.mel.npy.
    for (size_t i = 0; i < utterances.size(); ++i) {
      const std::string from = scratch + "/" + std::to_string(i + 1);
      const std::string to = folder + "/" + utterances[i]->id;
      fs::rename(from + ".wav", to + ".wav");
      fs::rename(from + ".mel.npy", to + ".mel.npy");
      clips.synthesized[utterances[i]->id] = to + ".wav";
    }
    fs::remove_all(scratch, ec);
  }
  clips.synthesized_source = "the synthesized clips (" + printable(folder) + ")";
  clips.text_source = args.data + "/" + args.split + ".tsv";
  return clips;
}

}  // namespace tts::cli

// The one path of speaking: sentences through an acoustic model's SpeechDecoder (models/roles.h),
// decoded together one step at a time, each sentence's mel chunks through its own vocoder stream
// (a trained vocoder's, or Griffin-Lim in overlapped chunks) as they leave the decoder. synthesize
// speaks through it, as files or as a stream; a whole-sentence plan gives what the sentence's
// whole mel gives.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "tts/audio/audio_processor.h"
#include "tts/models/roles.h"

namespace tts::inference {

// Samples of one sentence made final by a step; `last` with its final ones.
struct SpokenChunk {
  size_t utterance = 0;
  std::vector<float> samples;
  bool last = false;
};

// How the mel chunks become audio.
enum class AudioPath {
  kVocoder,     // the vocoder given
  kGriffinLim,  // Griffin-Lim of the mel, in overlapped chunks (GriffinLimStream)
  kNone,        // none: the chunks carry no samples (the caller renders the whole mel itself)
};

// Griffin-Lim of a mel as its frames come: each chunk's frames with `overlap` frames more on each
// side go through the audio config's Griffin-Lim, and the part past a chunk's end cross-fades into
// the next chunk's start. Its phase estimate spans a window, not the sentence: the audio differs
// from the whole mel's Griffin-Lim (docs/inference.md). A whole plan is the whole mel's
// Griffin-Lim; a window shorter than one STFT frame is padded (audio::padded_for_griffin_lim).
class GriffinLimStream final : public models::VocoderStream {
 public:
  GriffinLimStream(const audio::AudioProcessor& processor, models::ChunkPlan plan);
  std::vector<float> push(const torch::Tensor& frames, bool last) override;
  // Frames of context on each side of a chunk: two STFT frames' worth.
  int64_t overlap() const { return overlap_; }

 private:
  const audio::AudioProcessor& processor_;
  int64_t overlap_;
  models::FrameWindows windows_;
  torch::Tensor frames_;     // every frame so far [received, n_mels]
  std::vector<float> tail_;  // the last window's samples past its chunk: faded into the next
  int64_t emitted_ = 0;      // samples given out
  bool ended_ = false;
};

class SpeechStream {
 public:
  // `vocoder` for AudioPath::kVocoder (its mel check passed); `processor` for Griffin-Lim. The
  // vocoder streams use `plan` (synthesize: the decoder's chunk plan).
  SpeechStream(models::SpeechDecoder& decoder, AudioPath path, models::Vocoder* vocoder,
               const audio::AudioProcessor& processor, models::ChunkPlan plan);
  // Queues a sentence; returns its number.
  size_t add(models::Utterance utterance);
  // One decoder step: the audio it made final, in sentence order; every sentence's last chunk
  // comes with last set, once.
  std::vector<SpokenChunk> step();
  bool idle() const { return decoder_.idle(); }
  models::SpeechDecoder& decoder() { return decoder_; }

 private:
  models::SpeechDecoder& decoder_;
  AudioPath path_;
  models::Vocoder* vocoder_;
  const audio::AudioProcessor& processor_;
  models::ChunkPlan plan_;
  std::map<size_t, std::unique_ptr<models::VocoderStream>> streams_;
};

}  // namespace tts::inference

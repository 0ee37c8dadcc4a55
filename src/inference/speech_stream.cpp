#include "tts/inference/speech_stream.h"

#include <torch/torch.h>

#include <algorithm>

#include "tts/core/error.h"
#include "tts/models/convolution_stream.h"

namespace tts::inference {

GriffinLimStream::GriffinLimStream(const audio::AudioProcessor& processor, models::ChunkPlan plan)
    : processor_(processor),
      overlap_(2 * ((processor.options().n_fft + processor.options().hop_length - 1) /
                    processor.options().hop_length)),
      windows_(overlap_, overlap_, plan),
      frames_(torch::zeros({0, processor.options().n_mels})) {}

std::vector<float> GriffinLimStream::push(const torch::Tensor& frames, bool last) {
  TTS_CHECK(!ended_, "Griffin-Lim stream: frames pushed after the last ones");
  models::check_stream_frames(frames, processor_.options().n_mels, "Griffin-Lim stream");
  ended_ = last;
  frames_ = torch::cat({frames_, frames.to(torch::kCPU, torch::kFloat)}, 0);
  const int64_t received = frames_.size(0);
  const int64_t hop = processor_.options().hop_length;
  // The sentence's audio is (frames - 1) * hop samples long, as the whole mel's Griffin-Lim.
  const int64_t total = std::max<int64_t>(0, (received - 1) * hop);
  std::vector<float> out;
  while (auto window = windows_.next(received, last)) {
    const std::vector<float> wav = processor_.mel_to_wav(audio::padded_for_griffin_lim(
        frames_.narrow(0, window->input_begin, window->input_end - window->input_begin),
        processor_.options()));
    const auto from = static_cast<size_t>(window->offset() * hop);
    const auto to = std::min<size_t>(
        wav.size(), static_cast<size_t>((window->end - window->input_begin) * hop));
    std::vector<float> chunk(wav.begin() + static_cast<int64_t>(std::min(from, wav.size())),
                             wav.begin() + static_cast<int64_t>(std::max(from, to)));
    // The previous window's samples past its chunk fade out as this window's fade in.
    const size_t fade = std::min(tail_.size(), chunk.size());
    for (size_t i = 0; i < fade; ++i) {
      const float w = static_cast<float>(i + 1) / static_cast<float>(fade + 1);
      chunk[i] = tail_[i] * (1.0f - w) + chunk[i] * w;
    }
    tail_.assign(wav.begin() + static_cast<int64_t>(std::max(from, to)), wav.end());
    out.insert(out.end(), chunk.begin(), chunk.end());
  }
  // Never past the whole mel's length, and all of it once the last frames came.
  const int64_t room = total - emitted_;
  if (static_cast<int64_t>(out.size()) > room)
    out.resize(static_cast<size_t>(std::max<int64_t>(room, 0)));
  if (last && static_cast<int64_t>(out.size()) < room) out.resize(static_cast<size_t>(room), 0.0f);
  emitted_ += static_cast<int64_t>(out.size());
  return out;
}

SpeechStream::SpeechStream(models::SpeechDecoder& decoder, AudioPath path, models::Vocoder* vocoder,
                           const audio::AudioProcessor& processor, models::ChunkPlan plan)
    : decoder_(decoder), path_(path), vocoder_(vocoder), processor_(processor), plan_(plan) {
  TTS_CHECK(path_ != AudioPath::kVocoder || vocoder_ != nullptr,
            "speech stream: the vocoder path without a vocoder");
}

size_t SpeechStream::add(models::Utterance utterance) {
  const size_t number = decoder_.add(std::move(utterance));
  if (path_ == AudioPath::kVocoder) {
    streams_[number] = vocoder_->stream(plan_);
  } else if (path_ == AudioPath::kGriffinLim) {
    streams_[number] = std::make_unique<GriffinLimStream>(processor_, plan_);
  }
  return number;
}

std::vector<SpokenChunk> SpeechStream::step() {
  std::vector<SpokenChunk> spoken;
  for (models::MelChunk& chunk : decoder_.step()) {
    SpokenChunk out;
    out.utterance = chunk.utterance;
    out.last = chunk.last;
    auto stream = streams_.find(chunk.utterance);
    if (stream != streams_.end()) {
      out.samples = stream->second->push(chunk.mel, chunk.last);
      if (chunk.last) streams_.erase(stream);
    }
    spoken.push_back(std::move(out));
  }
  return spoken;
}

}  // namespace tts::inference

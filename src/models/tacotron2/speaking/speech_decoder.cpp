#include "tts/models/tacotron2/speaking/speech_decoder.h"

#include <torch/torch.h>

#include <algorithm>
#include <deque>
#include <limits>
#include <vector>

#include "tts/core/error.h"
#include "tts/models/keyed_dropout.h"
#include "tts/models/tacotron2/layers/network.h"

namespace tts::tacotron2 {
namespace {

// One sentence from the queue to its last chunk.
struct Sentence {
  Sentence(models::Utterance utterance, models::FrameWindows windows)
      : utterance(std::move(utterance)), windows(windows) {}

  models::Utterance utterance;
  models::FrameWindows windows;
  std::vector<torch::Tensor> steps;    // each decoder step's frames [r, n_mels]
  std::vector<torch::Tensor> gates;    // each step's stop logits [r]
  std::vector<torch::Tensor> weights;  // each step's attention weights [text symbols]
  std::vector<torch::Tensor> chunks;   // the postnet frames that left
  int64_t decoded = 0;                 // frames decoded: steps * r
  int64_t length = -1;                 // its frames, once it stopped or ran out of steps
  bool stopped = true;
  bool ended = false;  // its last chunk left
  models::DecodedUtterance record;
};

class TacotronSpeech final : public models::SpeechDecoder {
 public:
  TacotronSpeech(TrainedModel trained, const models::SpeechSettings& settings)
      : trained_(std::move(trained)),
        settings_(settings),
        model_(trained_.model),
        decoder_(model_->decoder()),
        field_(model_->postnet_field()) {
    TTS_CHECK(settings_.rows >= 1, "speech: a decoding batch of {} rows", settings_.rows);
  }

  size_t add(models::Utterance utterance) override {
    TTS_CHECK(!utterance.ids.empty(), "speech: an utterance without symbols");
    sentences_.emplace_back(std::move(utterance),
                            models::FrameWindows(field_.left(), field_.right(), settings_.chunks));
    queue_.push_back(sentences_.size() - 1);
    return sentences_.size() - 1;
  }

  bool idle() const override { return queue_.empty() && row_sentence_.empty(); }
  int64_t decoding() const override { return static_cast<int64_t>(row_sentence_.size()); }

  models::DecodedUtterance take(size_t number) override {
    TTS_CHECK(number < sentences_.size() && sentences_[number].ended,
              "speech: utterance {} has not ended", number);
    return std::move(sentences_[number].record);
  }

  std::vector<models::MelChunk> step() override {
    torch::NoGradGuard no_grad;
    admit();
    if (row_sentence_.empty()) return {};
    const DecoderImpl::RowsStep out = decoder_->advance(rows_);
    const int64_t r = decoder_->r();
    const torch::Tensor frames = out.frames.to(torch::kCPU, torch::kFloat);
    const torch::Tensor gate = out.gate.to(torch::kCPU, torch::kFloat);
    const torch::Tensor weights = out.weights.to(torch::kCPU, torch::kFloat);
    // The stop test infer() makes: the first frame of the step whose probability passes.
    const torch::Tensor stops = torch::sigmoid(gate) > decoder_->gate_threshold();
    std::vector<models::MelChunk> chunks;
    std::vector<int64_t> kept;
    for (size_t row = 0; row < row_sentence_.size(); ++row) {
      Sentence& s = sentences_[row_sentence_[row]];
      const auto b = static_cast<int64_t>(row);
      s.steps.push_back(frames[b].view({r, -1}));
      s.gates.push_back(gate[b]);
      s.weights.push_back(weights[b][0].narrow(0, 0, static_cast<int64_t>(s.utterance.ids.size())));
      s.decoded += r;
      const torch::Tensor row_stops = stops[b];
      if (row_stops.any().item<bool>()) {
        s.length = s.decoded - r + row_stops.to(torch::kInt64).argmax().item<int64_t>() + 1;
      } else if (rows_.steps[row] >= decoder_->max_decoder_steps()) {
        s.length = s.decoded;
        s.stopped = false;
      }
      emit(row_sentence_[row], s, chunks);
      if (!s.ended) kept.push_back(b);
    }
    if (kept.size() != row_sentence_.size()) {
      std::vector<size_t> rows;
      for (int64_t row : kept) rows.push_back(row_sentence_[static_cast<size_t>(row)]);
      row_sentence_ = std::move(rows);
      decoder_->keep(rows_, kept);
    }
    std::sort(chunks.begin(), chunks.end(),
              [](const models::MelChunk& a, const models::MelChunk& b) {
                return a.utterance < b.utterance;
              });
    return chunks;
  }

 private:
  // Queued sentences take the free rows: each encoded alone, its prenet masks keyed by its own key
  // (the checkpoint's seed and step, as synthesize's batches key them).
  void admit() {
    while (!queue_.empty() && static_cast<int64_t>(row_sentence_.size()) < settings_.rows) {
      const size_t number = queue_.front();
      queue_.pop_front();
      const models::Utterance& u = sentences_[number].utterance;
      const auto symbols = static_cast<int64_t>(u.ids.size());
      const torch::Tensor text = torch::tensor(u.ids, torch::kInt64).unsqueeze(0);
      const torch::Tensor lengths = torch::full({1}, symbols, torch::kInt64);
      const torch::Tensor speakers =
          u.speaker >= 0 ? torch::full({1}, u.speaker, torch::kInt64) : torch::Tensor();
      const torch::Tensor memory = model_->encode_text(text, lengths, speakers);
      const models::KeyedDropout dropout(static_cast<uint64_t>(trained_.config.train.seed),
                                         trained_.step, {u.key});
      BatchContext context;
      context.dropout = &dropout;
      decoder_->join(rows_,
                     decoder_->start(memory, torch::zeros({1, symbols}, torch::kBool), context));
      row_sentence_.push_back(number);
    }
  }

  // Decoded frames [begin, end) of `s`: [end - begin, n_mels].
  static torch::Tensor decoded_frames(const Sentence& s, int64_t begin, int64_t end, int64_t r) {
    std::vector<torch::Tensor> parts;
    for (int64_t step = begin / r; step * r < end; ++step) {
      const int64_t from = std::max(begin, step * r), to = std::min(end, (step + 1) * r);
      parts.push_back(s.steps[static_cast<size_t>(step)].narrow(0, from - step * r, to - from));
    }
    return parts.size() == 1 ? parts[0] : torch::cat(parts, 0);
  }

  // The chunks of `s` whose postnet frames are final now; its record when the last left.
  void emit(size_t number, Sentence& s, std::vector<models::MelChunk>& chunks) {
    const bool complete = s.length >= 0;
    const int64_t r = decoder_->r();
    while (auto window = s.windows.next(s.decoded, complete, s.length)) {
      const torch::Tensor input =
          decoded_frames(s, window->input_begin, window->input_end, r).unsqueeze(0);
      const int64_t valid = (complete ? std::min(s.length, window->input_end) : window->input_end) -
                            window->input_begin;
      const torch::Tensor mel =
          model_->postnet_mel(input, torch::full({1}, valid, torch::kInt64))[0]
              .narrow(0, window->offset(), window->frames())
              .contiguous();
      s.chunks.push_back(mel);
      chunks.push_back({number, mel, complete && s.windows.done() == s.length});
    }
    if (!complete || s.windows.done() < s.length) return;
    if (chunks.empty() || chunks.back().utterance != number || !chunks.back().last) {
      chunks.push_back({number, torch::zeros({0, model_->n_mels()}), true});
    }
    finish(s);
  }

  void finish(Sentence& s) {
    s.ended = true;
    models::DecodedUtterance& record = s.record;
    record.mel = torch::cat(s.chunks, 0);
    record.stop = torch::sigmoid(torch::cat(s.gates, 0).narrow(0, 0, s.length));
    record.alignment = torch::stack(s.weights, 0);
    record.stopped = s.stopped;
    const torch::Tensor linear =
        model_->linear_of(record.mel.unsqueeze(0), torch::full({1}, s.length, torch::kInt64));
    if (linear.defined()) record.linear = linear[0].to(torch::kCPU, torch::kFloat).contiguous();
    s.steps.clear();
    s.gates.clear();
    s.weights.clear();
    s.chunks.clear();
  }

  TrainedModel trained_;
  models::SpeechSettings settings_;
  Tacotron2 model_;
  Decoder decoder_;
  models::ReceptiveField field_;
  std::deque<Sentence> sentences_;  // by number; a deque keeps references stable
  std::deque<size_t> queue_;
  std::vector<size_t> row_sentence_;  // the sentence decoding in each row
  DecoderImpl::Rows rows_;
};

}  // namespace

std::unique_ptr<models::SpeechDecoder> speech_decoder(TrainedModel trained,
                                                      const models::SpeechSettings& settings) {
  return std::make_unique<TacotronSpeech>(std::move(trained), settings);
}

std::unique_ptr<models::SpeechDecoder> speech_decoder(const models::TrainedCheckpoint& trained,
                                                      const models::SpeechSettings& settings) {
  return speech_decoder(trained_model(trained, torch::kCPU), settings);
}

}  // namespace tts::tacotron2

#include "tts/models/tacotron2/speaking/synthesize.h"

#include <fmt/ranges.h>
#include <torch/torch.h>

#include <algorithm>
#include <filesystem>

#include "tts/audio/audio_io.h"
#include "tts/audio/audio_processor.h"
#include "tts/core/error.h"
#include "tts/core/fs.h"
#include "tts/core/logging.h"
#include "tts/data/feature_store.h"
#include "tts/formats/npy.h"
#include "tts/models/keyed_dropout.h"
#include "tts/models/tacotron2/layers/network.h"
#include "tts/models/tacotron2/speaking/render.h"
#include "tts/models/tacotron2/speaking/trained_model.h"
#include "tts/text/text_processor.h"

namespace tts::tacotron2 {
namespace fs = std::filesystem;
namespace {

void write_tensor_npy(const std::string& path, const torch::Tensor& tensor) {
  auto t = tensor.to(torch::kCPU).to(torch::kFloat).contiguous();
  formats::write_npy(path, t.data_ptr<float>(), t.sizes().vec());
}

// The sentences of a request, read and cleaned before any is spoken (one that says nothing is
// refused before the others' minutes of synthesis), and what is written of each.
class SentenceOutputs {
 public:
  SentenceOutputs(const models::SynthesisRequest& request, const TrainedModel& trained,
                  text::TextProcessor& text)
      : request_(request),
        trained_(trained),
        config_(trained.config),
        processor_(config_.audio),
        log_(log::get("synthesize")),
        cleaned_(request.sentences.size()) {
    for (size_t i = 0; i < request.sentences.size(); ++i) {
      ids_.push_back(text.speakable_ids(
          request.sentences[i], fmt::format("sentence {}", request.number(i)), &cleaned_[i]));
    }
  }

  const std::string& cleaned(size_t i) const { return cleaned_[i]; }
  const std::vector<int64_t>& ids(size_t i) const { return ids_[i]; }

  // Writes sentence i's outputs from row `row` of a batch's inference.
  void write(size_t i, const TacotronOutput& out, int64_t row) {
    GeneratedUtterance generated = generated_utterance(out, row);
    const int64_t frames = generated.frames;
    // The batch's alignment, cut to this sentence's decoder steps and symbols.
    const int64_t steps =
        std::min<int64_t>((frames + out.r - 1) / out.r, generated.alignment.size(0));
    generated.alignment = generated.alignment.narrow(0, 0, std::max<int64_t>(steps, 1))
                              .narrow(1, 0, static_cast<int64_t>(ids_[i].size()));
    std::string stem = request_.to_directory
                           ? (fs::path(request_.out) / std::to_string(request_.number(i))).string()
                           : fs::path(request_.out).replace_extension("").string();
    write_tensor_npy(stem + ".mel.npy", generated.mel);
    data::write_mel_settings(stem + ".mel.npy", config_);  // STEM.mel.yaml: what vocode checks
    if (generated.linear.defined()) write_tensor_npy(stem + ".linear.npy", generated.linear);
    const std::vector<float> samples = audio_of(generated, i);
    audio::write_wav(stem + ".wav", samples, config_.audio.sample_rate);
    if (request_.plot) {
      UtterancePlots plots =
          utterance_plots(generated, trained_.step, fmt::format("sentence {}", request_.number(i)),
                          config_.audio, config_.model.gate_threshold);
      write_file_atomic(stem + ".alignment.png", plots.alignment.png);
      write_file_atomic(stem + ".mel.png", plots.mel.png);
    }
    bool stopped = frames < config_.model.max_decoder_steps * out.r;
    if (!stopped) ++unstopped_;
    log_->info("{}.wav: {:.2f} s, {} frames{} - \"{}\"", stem,
               static_cast<double>(samples.size()) / config_.audio.sample_rate, frames,
               stopped ? "" : " (no stop token before model.max_decoder_steps)", cleaned_[i]);
  }

  // The end-of-run summary the warnings promise: what was counted, once.
  void summarize() const {
    std::vector<std::string> counted;
    if (padded_ > 0) counted.push_back(fmt::format("{} padded for Griffin-Lim", padded_));
    if (unstopped_ > 0) {
      counted.push_back(
          fmt::format("{} without a stop token before model.max_decoder_steps", unstopped_));
    }
    if (!counted.empty()) {
      log_->warn("warnings over {} sentence(s): {}", request_.sentences.size(),
                 fmt::join(counted, "; "));
    }
  }

 private:
  // The sentence's audio: from the request's vocoder, or Griffin-Lim.
  std::vector<float> audio_of(const GeneratedUtterance& generated, size_t i) {
    if (request_.vocoder != nullptr) {
      return generated.frames > 0 ? request_.vocoder->vocode(generated.mel) : std::vector<float>{};
    }
    RenderedAudio rendered = render_audio(generated, processor_);
    if (rendered.padded()) {
      log_->warn("sentence {} {}", request_.number(i), rendered.padding_note());
      ++padded_;
    }
    return std::move(rendered.samples);
  }

  const models::SynthesisRequest& request_;
  const TrainedModel& trained_;
  const config::Config& config_;
  audio::AudioProcessor processor_;
  std::shared_ptr<spdlog::logger> log_;
  std::vector<std::string> cleaned_;
  std::vector<std::vector<int64_t>> ids_;
  int padded_ = 0, unstopped_ = 0;
};

// Free-running inference of sentences [first, first + count) as one batch, as `speaker` (-1:
// none). The prenet's dropout (on in inference, as NVIDIA's) is keyed by the checkpoint's seed
// and step and the cleaned sentence: the same sentence sounds the same alone, in any batch, on a
// rerun.
TacotronOutput infer_batch(TrainedModel& trained, const SentenceOutputs& sentences, size_t first,
                           size_t count, int64_t speaker) {
  std::vector<std::string> keys;
  std::vector<int64_t> lengths;
  for (size_t i = first; i < first + count; ++i) {
    keys.push_back(sentences.cleaned(i));
    lengths.push_back(static_cast<int64_t>(sentences.ids(i).size()));
  }
  torch::Tensor text =
      torch::zeros({static_cast<int64_t>(count), *std::max_element(lengths.begin(), lengths.end())},
                   torch::kInt64);
  for (size_t j = 0; j < count; ++j) {
    text[static_cast<int64_t>(j)]
        .narrow(0, 0, lengths[j])
        .copy_(torch::tensor(sentences.ids(first + j), torch::kInt64));
  }
  const models::KeyedDropout dropout(static_cast<uint64_t>(trained.config.train.seed), trained.step,
                                     keys);
  BatchContext context;
  context.dropout = &dropout;
  const torch::Tensor speakers =
      speaker >= 0 ? torch::full({static_cast<int64_t>(count)}, speaker, torch::kInt64)
                   : torch::Tensor();
  return trained.model->infer(text, torch::tensor(lengths, torch::kInt64), context, speakers);
}

}  // namespace

void synthesize(const models::TrainedCheckpoint& read, const models::SynthesisRequest& request) {
  // The speaker is checked before the weights load.
  const int64_t speaker =
      speaker_row(read.config, read.checkpoint.speakers, request.speaker, read.source);
  TrainedModel trained = trained_model(read, torch::kCPU);
  text::TextProcessor text_processor(trained.config.text);
  SentenceOutputs sentences(request, trained, text_processor);
  if (request.to_directory) fs::create_directory(request.out);  // its parent was checked
  torch::NoGradGuard no_grad;
  const size_t batch = static_cast<size_t>(std::max(request.batch, 1));
  for (size_t first = 0; first < request.sentences.size(); first += batch) {
    const size_t count = std::min(batch, request.sentences.size() - first);
    const TacotronOutput out = infer_batch(trained, sentences, first, count, speaker);
    for (size_t j = 0; j < count; ++j) sentences.write(first + j, out, static_cast<int64_t>(j));
  }
  text_processor.report();
  sentences.summarize();
}

}  // namespace tts::tacotron2

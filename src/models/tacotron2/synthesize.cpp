#include "tts/models/tacotron2/synthesize.h"

#include <fmt/ranges.h>
#include <torch/torch.h>

#include <algorithm>
#include <filesystem>

#include "tts/audio/audio_io.h"
#include "tts/audio/audio_processor.h"
#include "tts/core/error.h"
#include "tts/core/fs.h"
#include "tts/core/logging.h"
#include "tts/formats/npy.h"
#include "tts/models/keyed_dropout.h"
#include "tts/models/tacotron2/network.h"
#include "tts/models/tacotron2/render.h"
#include "tts/models/tacotron2/trained_model.h"
#include "tts/text/text_processor.h"

namespace tts::tacotron2 {
namespace fs = std::filesystem;
namespace {

void write_tensor_npy(const std::string& path, const torch::Tensor& tensor) {
  auto t = tensor.to(torch::kCPU).to(torch::kFloat).contiguous();
  formats::write_npy(path, t.data_ptr<float>(), t.sizes().vec());
}

}  // namespace

void synthesize(const models::TrainedCheckpoint& read, const models::SynthesisRequest& request) {
  // The speaker is checked before the weights load.
  const int64_t speaker =
      speaker_row(read.config, read.checkpoint.speakers, request.speaker, read.source);
  TrainedModel trained = trained_model(read, torch::kCPU);
  const config::Config& config = trained.config;
  Tacotron2& model = trained.model;
  text::TextProcessor text_processor(config.text);
  audio::AudioProcessor processor(config.audio);
  auto log = log::get("synthesize");
  // Every sentence is read before any is spoken: one that says nothing is refused before the
  // others' minutes of synthesis.
  std::vector<std::string> cleaned_sentences(request.sentences.size());
  std::vector<std::vector<int64_t>> sentence_ids;
  for (size_t i = 0; i < request.sentences.size(); ++i) {
    sentence_ids.push_back(text_processor.speakable_ids(
        request.sentences[i], fmt::format("sentence {}", i + 1), &cleaned_sentences[i]));
  }
  if (request.to_directory) fs::create_directory(request.out);  // its parent was checked
  int padded = 0, unstopped = 0;
  torch::NoGradGuard no_grad;
  // Writes sentence i's outputs from row `row` of a batch's inference.
  auto speak = [&](size_t i, const TacotronOutput& out, int64_t row) {
    const std::string& cleaned = cleaned_sentences[i];
    GeneratedUtterance generated = generated_utterance(out, row);
    const int64_t frames = generated.frames;
    // The batch's alignment, cut to this sentence's decoder steps and symbols.
    const int64_t steps =
        std::min<int64_t>((frames + out.r - 1) / out.r, generated.alignment.size(0));
    generated.alignment = generated.alignment.narrow(0, 0, std::max<int64_t>(steps, 1))
                              .narrow(1, 0, static_cast<int64_t>(sentence_ids[i].size()));
    std::string stem = request.to_directory
                           ? (fs::path(request.out) / std::to_string(i + 1)).string()
                           : fs::path(request.out).replace_extension("").string();
    write_tensor_npy(stem + ".mel.npy", generated.mel);
    if (generated.linear.defined()) write_tensor_npy(stem + ".linear.npy", generated.linear);
    std::vector<float> samples;
    if (request.vocoder != nullptr) {
      samples = frames > 0 ? request.vocoder->vocode(generated.mel) : std::vector<float>{};
    } else {
      RenderedAudio rendered = render_audio(generated, processor);
      if (rendered.padded()) {
        log->warn("sentence {} {}", i + 1, rendered.padding_note());
        ++padded;
      }
      samples = std::move(rendered.samples);
    }
    audio::write_wav(stem + ".wav", samples, config.audio.sample_rate);
    if (request.plot) {
      UtterancePlots plots =
          utterance_plots(generated, trained.step, fmt::format("sentence {}", i + 1), config.audio,
                          config.model.gate_threshold);
      write_file_atomic(stem + ".alignment.png", plots.alignment.png);
      write_file_atomic(stem + ".mel.png", plots.mel.png);
    }
    bool stopped = frames < config.model.max_decoder_steps * out.r;
    if (!stopped) ++unstopped;
    log->info("{}.wav: {:.2f} s, {} frames{} - \"{}\"", stem,
              static_cast<double>(samples.size()) / config.audio.sample_rate, frames,
              stopped ? "" : " (no stop token before model.max_decoder_steps)", cleaned);
  };
  const size_t batch = static_cast<size_t>(std::max(request.batch, 1));
  for (size_t first = 0; first < request.sentences.size(); first += batch) {
    const size_t count = std::min(batch, request.sentences.size() - first);
    std::vector<std::string> keys;
    std::vector<int64_t> lengths;
    for (size_t i = first; i < first + count; ++i) {
      keys.push_back(cleaned_sentences[i]);
      lengths.push_back(static_cast<int64_t>(sentence_ids[i].size()));
    }
    torch::Tensor text = torch::zeros(
        {static_cast<int64_t>(count), *std::max_element(lengths.begin(), lengths.end())},
        torch::kInt64);
    for (size_t j = 0; j < count; ++j) {
      text[static_cast<int64_t>(j)]
          .narrow(0, 0, lengths[j])
          .copy_(torch::tensor(sentence_ids[first + j], torch::kInt64));
    }
    // The prenet's dropout (on in inference, as NVIDIA's) is keyed by the checkpoint's seed and
    // step and the cleaned sentence: the same sentence sounds the same alone, in any batch, on a
    // rerun.
    const models::KeyedDropout dropout(static_cast<uint64_t>(config.train.seed), trained.step,
                                       keys);
    BatchContext context;
    context.dropout = &dropout;
    const torch::Tensor speakers =
        speaker >= 0 ? torch::full({static_cast<int64_t>(count)}, speaker, torch::kInt64)
                     : torch::Tensor();
    TacotronOutput out =
        model->infer(text, torch::tensor(lengths, torch::kInt64), context, speakers);
    for (size_t j = 0; j < count; ++j) speak(first + j, out, static_cast<int64_t>(j));
  }
  // The end-of-run summary the warnings promise: what was counted, once.
  text_processor.report();
  std::vector<std::string> counted;
  if (padded > 0) counted.push_back(fmt::format("{} padded for Griffin-Lim", padded));
  if (unstopped > 0) {
    counted.push_back(
        fmt::format("{} without a stop token before model.max_decoder_steps", unstopped));
  }
  if (!counted.empty()) {
    log->warn("warnings over {} sentence(s): {}", request.sentences.size(),
              fmt::join(counted, "; "));
  }
}

}  // namespace tts::tacotron2

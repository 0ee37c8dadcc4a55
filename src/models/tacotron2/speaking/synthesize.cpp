#include "tts/models/tacotron2/speaking/synthesize.h"

#include <fmt/ranges.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>

#include "tts/audio/audio_io.h"
#include "tts/audio/audio_processor.h"
#include "tts/core/error.h"
#include "tts/core/fs.h"
#include "tts/core/logging.h"
#include "tts/data/feature_store.h"
#include "tts/formats/npy.h"
#include "tts/inference/audio_sink.h"
#include "tts/inference/speech_stream.h"
#include "tts/models/tacotron2/speaking/render.h"
#include "tts/models/tacotron2/speaking/speech_decoder.h"
#include "tts/models/tacotron2/speaking/trained_model.h"
#include "tts/text/text_processor.h"

namespace tts::tacotron2 {
namespace fs = std::filesystem;
namespace {

using Clock = std::chrono::steady_clock;

void write_tensor_npy(const std::string& path, const torch::Tensor& tensor) {
  auto t = tensor.to(torch::kCPU).to(torch::kFloat).contiguous();
  formats::write_npy(path, t.data_ptr<float>(), t.sizes().vec());
}

// The sentences of a request, read and cleaned before any is spoken (one that says nothing is
// refused before the others' minutes of synthesis), and what is written of each.
class SentenceOutputs {
 public:
  SentenceOutputs(const models::SynthesisRequest& request, const config::Config& config,
                  int64_t step, text::TextProcessor& text)
      : request_(request),
        config_(config),
        step_(step),
        processor_(config_.audio),
        log_(log::get("synthesize")),
        cleaned_(request.sentences.size()) {
    for (size_t i = 0; i < request.sentences.size(); ++i) {
      ids_.push_back(text.speakable_ids(
          request.sentences[i], fmt::format("sentence {}", request.number(i)), &cleaned_[i]));
    }
  }

  size_t size() const { return ids_.size(); }
  const std::string& cleaned(size_t i) const { return cleaned_[i]; }
  const std::vector<int64_t>& ids(size_t i) const { return ids_[i]; }
  const audio::AudioProcessor& processor() const { return processor_; }
  std::string stem(size_t i) const {
    return request_.to_directory
               ? (fs::path(request_.out) / std::to_string(request_.number(i))).string()
               : fs::path(request_.out).replace_extension("").string();
  }

  // Writes sentence i's files beside its audio: STEM.mel.npy (with STEM.mel.yaml), a linear
  // head's STEM.linear.npy, and with --plot its pictures; the audio itself when it was spoken
  // whole (`samples`; a stream wrote it as it came). Returns the audio's seconds.
  double write(size_t i, const models::DecodedUtterance& decoded, std::vector<float> samples,
               int64_t samples_streamed) {
    GeneratedUtterance generated;
    generated.frames = decoded.mel.size(0);
    generated.mel = decoded.mel;
    generated.linear = decoded.linear;
    generated.stop = decoded.stop;
    generated.alignment = decoded.alignment;
    const std::string stem = this->stem(i);
    int64_t count = samples_streamed;
    if (!request_.to_stdout) {
      write_tensor_npy(stem + ".mel.npy", generated.mel);
      data::write_mel_settings(stem + ".mel.npy", config_);  // STEM.mel.yaml: what vocode checks
      if (generated.linear.defined()) write_tensor_npy(stem + ".linear.npy", generated.linear);
      if (!request_.stream) {
        if (request_.vocoder == nullptr) samples = rendered(generated, i);
        audio::write_wav(stem + ".wav", samples, config_.audio.sample_rate);
        count = static_cast<int64_t>(samples.size());
      }
      if (request_.plot) {
        UtterancePlots plots =
            utterance_plots(generated, step_, fmt::format("sentence {}", request_.number(i)),
                            config_.audio, config_.model.gate_threshold);
        write_file_atomic(stem + ".alignment.png", plots.alignment.png);
        write_file_atomic(stem + ".mel.png", plots.mel.png);
      }
    }
    if (!decoded.stopped) ++unstopped_;
    const double seconds = static_cast<double>(count) / config_.audio.sample_rate;
    log_->info("{}: {:.2f} s, {} frames{} - \"{}\"",
               request_.to_stdout ? fmt::format("sentence {}", request_.number(i)) : stem + ".wav",
               seconds, generated.frames,
               decoded.stopped ? "" : " (no stop token before model.max_decoder_steps)",
               cleaned_[i]);
    return seconds;
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
  // Griffin-Lim of the whole sentence: of a linear head's spectrogram when there is one.
  std::vector<float> rendered(const GeneratedUtterance& generated, size_t i) {
    if (generated.frames == 0) return {};
    RenderedAudio audio = render_audio(generated, processor_);
    if (audio.padded()) {
      log_->warn("sentence {} {}", request_.number(i), audio.padding_note());
      ++padded_;
    }
    return std::move(audio.samples);
  }

  const models::SynthesisRequest& request_;
  const config::Config& config_;
  int64_t step_;
  audio::AudioProcessor processor_;
  std::shared_ptr<spdlog::logger> log_;
  std::vector<std::string> cleaned_;
  std::vector<std::vector<int64_t>> ids_;
  int padded_ = 0, unstopped_ = 0;
};

// Where each sentence's streamed audio goes: its own growing file, or standard output, where
// sentence i's chunks wait until every sentence before it has ended (sentences decode together,
// but leave one after another).
class StreamedAudio {
 public:
  StreamedAudio(const models::SynthesisRequest& request, const SentenceOutputs& sentences,
                int sample_rate)
      : request_(request), sentences_(sentences), rate_(sample_rate) {
    if (request.to_stdout) out_ = inference::stdout_sink(request.format, rate_);
  }

  void write(size_t i, const std::vector<float>& samples, bool last) {
    if (!request_.to_stdout) {
      auto& sink = files_[i];
      if (!sink) {
        sink =
            inference::file_sink(sentences_.stem(i) + ".wav", inference::StreamFormat::kWav, rate_);
      }
      sink->write(samples);
      if (last) {
        sink->close();
        files_.erase(i);
      }
      return;
    }
    Pending& pending = waiting_[i];
    pending.samples.insert(pending.samples.end(), samples.begin(), samples.end());
    pending.ended = pending.ended || last;
    // Every sentence whose turn has come goes out, as far as it is spoken.
    while (waiting_.count(next_) > 0) {
      Pending& turn = waiting_[next_];
      out_->write(turn.samples);
      turn.samples.clear();
      if (!turn.ended) break;
      waiting_.erase(next_++);
    }
  }

  void close() {
    if (out_) out_->close();
  }

 private:
  struct Pending {
    std::vector<float> samples;
    bool ended = false;
  };
  const models::SynthesisRequest& request_;
  const SentenceOutputs& sentences_;
  int rate_;
  std::unique_ptr<inference::AudioSink> out_;
  std::map<size_t, std::unique_ptr<inference::AudioSink>> files_;
  std::map<size_t, Pending> waiting_;
  size_t next_ = 0;
};

// Times the first audio and the real-time factor of a run, for its summary.
struct SpeechTiming {
  Clock::time_point start = Clock::now();
  double first_audio = -1;  // seconds from start to the first samples out
  double audio_seconds = 0;

  void heard() {
    if (first_audio < 0) first_audio = std::chrono::duration<double>(Clock::now() - start).count();
  }
  void report(const std::shared_ptr<spdlog::logger>& log, bool stream) const {
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    log->info(
        "{}first audio after {:.0f} ms; {:.2f} s of audio in {:.2f} s: real-time factor "
        "{:.3f}",
        stream ? "streamed: " : "", 1000.0 * std::max(first_audio, 0.0), audio_seconds, elapsed,
        audio_seconds > 0 ? elapsed / audio_seconds : 0.0);
  }
};

}  // namespace

// Over 80 lines: the decoding loop and where each chunk goes, streamed or whole, in one place.
void synthesize(const models::TrainedCheckpoint& read, const models::SynthesisRequest& request) {
  // The speaker is checked before the weights load.
  const int64_t speaker =
      speaker_row(read.config, read.checkpoint.speakers, request.speaker, read.source);
  TrainedModel trained = trained_model(read, torch::kCPU);
  const config::Config config = trained.config;
  const int64_t step = trained.step;
  text::TextProcessor text_processor(config.text);
  SentenceOutputs sentences(request, config, step, text_processor);
  auto log = log::get("synthesize");
  if (request.stream && config.model.predict_linear && request.vocoder == nullptr) {
    log->info(
        "the linear head's bidirectional GRU needs the whole sentence: the stream speaks "
        "Griffin-Lim of the mel (the whole-sentence STEM.linear.npy is still written)");
  }
  if (request.to_directory) fs::create_directory(request.out);  // its parent was checked
  torch::NoGradGuard no_grad;
  models::SpeechSettings settings;
  settings.rows = std::max(request.batch, 1);
  settings.chunks = request.stream ? request.chunks : models::ChunkPlan::whole();
  std::unique_ptr<models::SpeechDecoder> decoder = speech_decoder(std::move(trained), settings);
  const inference::AudioPath path = request.vocoder != nullptr ? inference::AudioPath::kVocoder
                                    : request.stream           ? inference::AudioPath::kGriffinLim
                                                               : inference::AudioPath::kNone;
  inference::SpeechStream speech(*decoder, path, request.vocoder, sentences.processor(),
                                 settings.chunks);
  for (size_t i = 0; i < sentences.size(); ++i) {
    speech.add({sentences.ids(i), sentences.cleaned(i), speaker});
  }
  SpeechTiming timing;
  std::unique_ptr<StreamedAudio> streamed;
  if (request.stream)
    streamed = std::make_unique<StreamedAudio>(request, sentences, config.audio.sample_rate);
  std::map<size_t, std::vector<float>> whole;  // spoken whole: each sentence's samples so far
  std::map<size_t, int64_t> streamed_samples;
  while (!speech.idle()) {
    for (inference::SpokenChunk& chunk : speech.step()) {
      const size_t i = chunk.utterance;
      if (streamed) {
        if (!chunk.samples.empty()) timing.heard();
        streamed_samples[i] += static_cast<int64_t>(chunk.samples.size());
        streamed->write(i, chunk.samples, chunk.last);
      } else {
        auto& samples = whole[i];
        samples.insert(samples.end(), chunk.samples.begin(), chunk.samples.end());
      }
      if (!chunk.last) continue;
      timing.audio_seconds +=
          sentences.write(i, decoder->take(i), std::move(whole[i]), streamed_samples[i]);
      whole.erase(i);
      if (!streamed) timing.heard();
    }
  }
  if (streamed) streamed->close();
  text_processor.report();
  sentences.summarize();
  timing.report(log, request.stream);
}

}  // namespace tts::tacotron2

// tts-train synthesize: text -> mel (and linear) -> Griffin-Lim WAV; with --plot, the alignment
// and mel plots that validation draws.
#include <torch/torch.h>

#include <filesystem>
#include <fstream>

#include "tts/audio/audio_io.h"
#include "tts/audio/audio_processor.h"
#include "tts/cli/command.h"
#include "tts/core/error.h"
#include "tts/core/fs.h"
#include "tts/core/logging.h"
#include "tts/formats/npy.h"
#include "tts/inference/trained_model.h"
#include "tts/inference/vocoder.h"
#include "tts/model/tacotron2.h"
#include "tts/models/tacotron2/render.h"
#include "tts/text/text_processor.h"

namespace tts::cli {
namespace fs = std::filesystem;
namespace {

struct SynthesizeArgs {
  std::string checkpoint;
  std::string text;
  std::string text_file;
  std::string out;
  std::string vocoder;
  bool plot = false;
};

void write_tensor_npy(const std::string& path, const torch::Tensor& tensor) {
  auto t = tensor.to(torch::kCPU).to(torch::kFloat).contiguous();
  formats::write_npy(path, t.data_ptr<float>(), t.sizes().vec());
}

Runner setup_synthesize(CLI::App& app) {
  auto args = std::make_shared<SynthesizeArgs>();
  app.add_option("--checkpoint", args->checkpoint,
                 "checkpoint file or RUN/checkpoints/latest (or a run directory)")
      ->required();
  auto* text = app.add_option("--text", args->text, "the sentence to speak");
  auto* file = app.add_option("--text-file", args->text_file, "one sentence per line");
  text->excludes(file);
  app.add_option("--out", args->out,
                 "output .wav (one sentence) or directory (one N.wav per sentence)")
      ->required();
  app.add_option("--vocoder", args->vocoder,
                 "a vocoder checkpoint (HiFi-GAN) to speak the mels with instead of Griffin-Lim; "
                 "refused when the Tacotron-2 checkpoint's mel settings are not the vocoder's");
  app.add_flag("--plot", args->plot,
               "also write STEM.alignment.png and STEM.mel.png (mel and stop-token probability)");
  return [args]() {
    std::vector<std::string> sentences;
    if (!args->text.empty()) sentences.push_back(args->text);
    if (!args->text_file.empty()) {
      std::ifstream in(args->text_file);
      TTS_USAGE_CHECK(in.good(), "cannot read --text-file '{}'", args->text_file);
      for (std::string line; std::getline(in, line);) {
        if (line.find_first_not_of(" \t\r") != std::string::npos) sentences.push_back(line);
      }
    }
    TTS_USAGE_CHECK(!sentences.empty(),
                    "nothing to say: give --text \"...\" or a --text-file with sentences");
    bool to_directory = !(sentences.size() == 1 && fs::path(args->out).extension() == ".wav");

    inference::TrainedModel trained = inference::load_trained_model(args->checkpoint, torch::kCPU);
    const config::Config& config = trained.config;
    model::Tacotron2& model = trained.model;
    std::unique_ptr<inference::Vocoder> vocoder;
    if (!args->vocoder.empty()) {
      vocoder = inference::load_vocoder(args->vocoder, torch::kCPU);
      vocoder->check_mels(config.audio,
                          fmt::format("the mels of Tacotron-2 checkpoint {}", args->checkpoint));
    }
    text::TextProcessor text_processor(config.text);
    audio::AudioProcessor processor(config.audio);
    auto log = log::get("synthesize");
    if (to_directory) fs::create_directories(args->out);
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < sentences.size(); ++i) {
      std::string cleaned = text_processor.clean(sentences[i]);
      std::vector<int64_t> ids = text_processor.to_ids(cleaned);
      TTS_USAGE_CHECK(!ids.empty(), "sentence {} has no speakable characters: '{}'", i + 1,
                      sentences[i]);
      auto text_tensor = torch::tensor(ids, torch::kInt64).unsqueeze(0);
      auto lengths = torch::tensor({static_cast<int64_t>(ids.size())}, torch::kInt64);
      model::TacotronOutput out = model->infer(text_tensor, lengths);
      tacotron2::GeneratedUtterance generated = tacotron2::generated_utterance(out, 0);
      const int64_t frames = generated.frames;
      std::string stem = to_directory ? (fs::path(args->out) / std::to_string(i + 1)).string()
                                      : fs::path(args->out).replace_extension("").string();
      write_tensor_npy(stem + ".mel.npy", generated.mel);
      if (generated.linear.defined()) write_tensor_npy(stem + ".linear.npy", generated.linear);
      std::vector<float> samples;
      if (vocoder) {
        samples = frames > 0 ? vocoder->vocode(generated.mel) : std::vector<float>{};
      } else {
        tacotron2::RenderedAudio rendered = tacotron2::render_audio(generated, processor);
        if (rendered.padded()) log->warn("sentence {} {}", i + 1, rendered.padding_note());
        samples = std::move(rendered.samples);
      }
      audio::write_wav(stem + ".wav", samples, config.audio.sample_rate);
      if (args->plot) {
        tacotron2::UtterancePlots plots =
            tacotron2::utterance_plots(generated, trained.step, fmt::format("sentence {}", i + 1),
                                       config.audio, config.model.gate_threshold);
        write_file_atomic(stem + ".alignment.png", plots.alignment.png);
        write_file_atomic(stem + ".mel.png", plots.mel.png);
      }
      bool stopped = frames < config.model.max_decoder_steps * out.r;
      log->info("{}.wav: {:.2f} s, {} frames{} - \"{}\"", stem,
                static_cast<double>(samples.size()) / config.audio.sample_rate, frames,
                stopped ? "" : " (no stop token before model.max_decoder_steps)", cleaned);
    }
    return 0;
  };
}

}  // namespace

TTS_REGISTER_COMMAND("synthesize",
                     "speak text with a trained checkpoint (Griffin-Lim, or --vocoder)", 30,
                     setup_synthesize);

}  // namespace tts::cli

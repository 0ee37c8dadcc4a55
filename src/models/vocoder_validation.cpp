#include "tts/models/vocoder_validation.h"

#include <fmt/format.h>

#include <algorithm>

#include "tts/audio/audio_io.h"
#include "tts/audio/audio_processor.h"
#include "tts/core/fs.h"
#include "tts/dist/communicator.h"
#include "tts/formats/event_writer.h"
#include "tts/formats/png.h"
#include "tts/models/plot_tensors.h"
#include "tts/report/plots.h"
#include "tts/train/metrics.h"

namespace tts::models {

std::vector<size_t> validation_share(size_t utterances, int rank, int world) {
  const bool shard = utterances >= static_cast<size_t>(world);
  std::vector<size_t> indices;
  for (size_t i = shard ? static_cast<size_t>(rank) : 0; i < utterances;
       i += shard ? static_cast<size_t>(world) : 1) {
    indices.push_back(i);
  }
  return indices;
}

std::pair<double, double> mean_over_ranks(dist::Communicator& comm, size_t utterances, double sum,
                                          double count) {
  std::vector<double> totals = comm.all_gather({sum, count});
  double all_sum = 0, all_count = 0;
  for (size_t r = 0; r + 1 < totals.size(); r += 2) {
    all_sum += totals[r];
    all_count += totals[r + 1];
  }
  if (utterances < static_cast<size_t>(comm.size())) {  // every rank validated every utterance
    all_sum /= comm.size();
    all_count /= comm.size();
  }
  return {all_sum / std::max(all_count, 1.0), all_count};
}

report::RunContents vocoder_run_contents(const std::string& family) {
  report::RunContents contents;
  contents.family = family;
  contents.plots = {{"mel",
                     "The validation utterance's stored mel beside the mel of the audio "
                     "generated from it"}};
  contents.samples = {{"", "Generated from a validation utterance's stored mel"},
                      {"_real", "That utterance's recorded audio"}};
  return contents;
}

void VocoderValidation::write_artifacts(train::MetricSink& metrics) {
  if (!sample_) return;
  const VocoderSample& s = *sample_;
  const int rate = config_.audio.sample_rate;
  std::string generated_path, real_path, mel_png;
  if (config_.logging.samples) {
    train::side_work("the validation audio samples", step_, [&] {
      generated_path = fmt::format("{}/samples/step_{}.wav", run_dir_, step_);
      real_path = fmt::format("{}/samples/step_{}_real.wav", run_dir_, step_);
      audio::write_wav(generated_path, s.generated, rate);
      audio::write_wav(real_path, s.real, rate);
    });
  }
  train::side_work("the mel plot", step_, [&] {
    // The generated audio's mel, made as the store's were (untrimmed), beside the input mel.
    config::AudioOptions untrimmed = config_.audio;
    untrimmed.trim = false;
    audio::AudioProcessor processor(untrimmed);
    audio::Features generated = processor.compute(s.generated, false);
    report::MelPlotInput input;
    input.step = step_;
    input.utterance = s.id;
    input.seconds_per_frame = static_cast<double>(config_.audio.hop_length) / rate;
    input.panels.push_back(models::mel_panel("input mel (stored)", s.stored_mel));
    input.panels.push_back(models::mel_panel("mel of the generated audio", generated.mel));
    mel_png = report::mel_plot(input).png;
    if (config_.logging.plots) {
      write_file_atomic(fmt::format("{}/plots/step_{}_mel.png", run_dir_, step_), mel_png);
    }
  });
  metrics.with_events("writing TensorBoard images and audio", step_,
                      [&](formats::EventWriter& events) {
                        if (!mel_png.empty()) {
                          auto [width, height] = formats::png_dimensions(mel_png);
                          events.add_image("val/mel", mel_png, width, height, step_);
                        }
                        if (!generated_path.empty()) {
                          events.add_audio("val/audio", read_file(generated_path), rate,
                                           static_cast<int64_t>(s.generated.size()), step_);
                          events.add_audio("val/audio_real", read_file(real_path), rate,
                                           static_cast<int64_t>(s.real.size()), step_);
                        }
                        events.flush();
                      });
}

}  // namespace tts::models

#include "tts/train/validation.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <optional>
#include <utility>

#include "tts/audio/audio_io.h"
#include "tts/audio/audio_processor.h"
#include "tts/core/fs.h"
#include "tts/core/logging.h"
#include "tts/data/loader.h"
#include "tts/dist/communicator.h"
#include "tts/train/png.h"
#include "tts/train/reporting.h"

namespace tts::train {

model::LossParts forward_loss(model::Tacotron2Impl& model, const data::Batch& batch,
                              const config::TrainOptions& train, model::TacotronOutput* output) {
  *output = model.forward(batch.text, batch.text_lengths, batch.mel, batch.mel_lengths);
  model::Targets targets{batch.mel, batch.mel_lengths, batch.stop, batch.linear};
  return model::compute_loss(*output, targets, batch.text_lengths, train);
}

Validator::Validator(const config::Config& config, data::Loader& loader, torch::Device device,
                     dist::Communicator& comm, std::string run_dir)
    : config_(config),
      loader_(loader),
      device_(device),
      comm_(comm),
      run_dir_(std::move(run_dir)) {}

void Validator::run(model::Tacotron2Impl& model, int64_t step, MetricSink* metrics) {
  // Validation draws prenet dropout masks (from the device's generator); training continues
  // with the streams it had.
  struct RestoreRng {
    at::Generator generator;
    torch::Tensor state;
    explicit RestoreRng(at::Generator g) : generator(std::move(g)), state(generator.get_state()) {}
    ~RestoreRng() { generator.set_state(state); }
  };
  RestoreRng restore_cpu(at::detail::getDefaultCPUGenerator());
  std::optional<RestoreRng> restore_device;
  if (device_.is_cuda()) restore_device.emplace(at::globalContext().defaultGenerator(device_));
  torch::NoGradGuard no_grad;
  model.eval();
  LossSums sums;
  std::optional<data::Batch> first;
  model::TacotronOutput first_output;
  loader_.start_epoch(0);
  while (auto batch = loader_.next()) {
    data::Batch on_device = batch->to(device_, false);
    model::TacotronOutput output;
    sums.add(forward_loss(model, on_device, config_.train, &output));
    if (!first) {
      first = std::move(on_device);
      first_output = output;
    }
  }
  // Mean over ranks, weighted by the batches each rank validated.
  std::vector<double> gathered =
      comm_.all_gather({sums.count > 0 ? sums.mean("loss") * static_cast<double>(sums.count) : 0.0,
                        static_cast<double>(sums.count)});
  double loss_sum = 0;
  double batches = 0;
  for (size_t r = 0; r < gathered.size(); r += 2) {
    loss_sum += gathered[r];
    batches += gathered[r + 1];
  }
  if (metrics == nullptr) return;
  double val_loss = batches > 0 ? loss_sum / batches : NAN;
  MetricRecord record{"val", {}};
  record.add("step", static_cast<double>(step));
  record.add("loss", val_loss);
  metrics->write(record, step);
  log::get("train")->info("validation at step {}: loss {:.4f} over {} batches", step, val_loss,
                          batches);
  if (first) write_artifacts(model, *first, first_output, step, *metrics);
}

void Validator::write_artifacts(model::Tacotron2Impl& model, const data::Batch& first,
                                const model::TacotronOutput& first_output, int64_t step,
                                MetricSink& metrics) {
  std::string prefix = fmt::format("{}/plots/step_{}", run_dir_, step);
  // Teacher-forced alignment of the first validation utterance: [text steps, decoder steps].
  auto alignment = first_output.alignments[0].to(torch::kCPU).to(torch::kFloat);
  int64_t decoder_steps =
      (first.mel_lengths[0].item<int64_t>() + config_.model.n_frames_per_step - 1) /
      config_.model.n_frames_per_step;
  int64_t text_steps = first.text_lengths[0].item<int64_t>();
  alignment = alignment.slice(0, 0, decoder_steps).slice(1, 0, text_steps).t().contiguous();
  std::vector<float> values(alignment.data_ptr<float>(),
                            alignment.data_ptr<float>() + alignment.numel());
  std::string alignment_png =
      heatmap_png(values, static_cast<int>(text_steps), static_cast<int>(decoder_steps), 2);

  // Free-running synthesis of the first utterances: mel plot and Griffin-Lim sample.
  int count = std::min<int64_t>(config_.train.val_inference_utterances, first.text.size(0));
  std::string mel_png;
  if (count > 0) {
    auto text = first.text.slice(0, 0, count);
    auto lengths = first.text_lengths.slice(0, 0, count);
    model::TacotronOutput inferred = model.infer(text, lengths);
    int64_t frames = inferred.mel_lengths[0].item<int64_t>();
    auto mel = inferred.mel_postnet[0].slice(0, 0, frames).to(torch::kCPU).to(torch::kFloat);
    auto mel_t = mel.t().contiguous();
    std::vector<float> mel_values(mel_t.data_ptr<float>(), mel_t.data_ptr<float>() + mel_t.numel());
    mel_png = heatmap_png(mel_values, static_cast<int>(mel_t.size(0)),
                          static_cast<int>(mel_t.size(1)), 2);
    if (config_.logging.samples) {
      audio::AudioProcessor processor(config_.audio);
      bool linear = inferred.linear.defined();
      auto samples =
          linear ? processor.linear_to_wav(
                       inferred.linear[0].slice(0, 0, frames).to(torch::kCPU).to(torch::kFloat))
                 : processor.mel_to_wav(mel);
      audio::write_wav(fmt::format("{}/samples/step_{}.wav", run_dir_, step), samples,
                       config_.audio.sample_rate);
    }
  }
  if (config_.logging.plots) {
    write_file_atomic(prefix + "_alignment.png", alignment_png);
    if (!mel_png.empty()) write_file_atomic(prefix + "_mel.png", mel_png);
  }
  if (EventWriter* events = metrics.events()) {
    events->add_image("val/alignment", alignment_png, static_cast<int>(decoder_steps) * 2,
                      static_cast<int>(text_steps) * 2, step);
    events->flush();
  }
}

}  // namespace tts::train

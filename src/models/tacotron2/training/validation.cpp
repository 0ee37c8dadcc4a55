#include "tts/models/tacotron2/training/validation.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <cmath>
#include <utility>

#include "tts/audio/audio_io.h"
#include "tts/audio/audio_processor.h"
#include "tts/core/error.h"
#include "tts/core/fs.h"
#include "tts/core/logging.h"
#include "tts/data/loader.h"
#include "tts/dist/communicator.h"
#include "tts/formats/png.h"
#include "tts/models/plot_tensors.h"
#include "tts/models/tacotron2/speaking/render.h"
#include "tts/models/tacotron2/training/alignment_metrics.h"
#include "tts/models/tacotron2/training/plot_tensors.h"
#include "tts/models/tacotron2/training/precision.h"
#include "tts/models/tacotron2/training/teacher_forced.h"
#include "tts/report/metric_names.h"
#include "tts/train/reporting.h"

namespace tts::tacotron2 {
namespace {

namespace metric = report::metric;

double value_of(const train::MetricRecord& record, const std::string& name) {
  for (const auto& [key, value] : record.values) {
    if (key == name) return value;
  }
  return NAN;
}

}  // namespace

Validator::Validator(const config::Config& config, torch::Device device, dist::Communicator& comm,
                     std::string run_dir)
    : config_(config), device_(device), comm_(comm), run_dir_(std::move(run_dir)) {}

ValidationResult Validator::run(tacotron2::Tacotron2Impl& model, data::Loader& loader, int64_t step,
                                train::MetricSink* metrics) {
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
  ValidationResult result;
  result.step = step;
  train::LossSums sums;
  // Alignment scores summed over utterances (each score is a mean over one utterance).
  double diagonal_sum = 0;
  double focus_sum = 0;
  double utterances = 0;
  loader.start_epoch(0);
  while (auto batch = loader.next()) {
    data::Batch on_device = batch->to(device_, false);
    tacotron2::TacotronOutput output;
    add_losses(sums, forward_loss(model, on_device, config_.train, &output));
    sums.next();
    AlignmentScores scores =
        alignment_scores(output.alignments, output.decoder_lengths(), on_device.text_lengths);
    diagonal_sum += scores.diagonal * static_cast<double>(scores.utterances);
    focus_sum += scores.focus * static_cast<double>(scores.utterances);
    utterances += static_cast<double>(scores.utterances);
    if (!result.first) {
      result.first = std::move(on_device);
      result.first_output = output;
    }
  }
  // Means over ranks, weighted by the batches (loss) and utterances (scores) each validated.
  std::vector<double> gathered = comm_.all_gather(
      {sums.count > 0 ? sums.mean(metric::kLoss) * static_cast<double>(sums.count) : 0.0,
       static_cast<double>(sums.count), diagonal_sum, focus_sum, utterances});
  double total[5] = {0, 0, 0, 0, 0};
  for (size_t i = 0; i < gathered.size(); ++i) total[i % 5] += gathered[i];
  if (metrics == nullptr) return result;
  double val_loss = total[1] > 0 ? total[0] / total[1] : NAN;
  double diagonal = total[4] > 0 ? total[2] / total[4] : NAN;
  double focus = total[4] > 0 ? total[3] / total[4] : NAN;
  result.record.add(metric::kStep, static_cast<double>(step));
  result.record.add(metric::kLoss, val_loss);
  result.record.add(metric::kDiagonalScore, diagonal);
  result.record.add(metric::kFocusRate, focus);
  if (result.first) run_free(model, result);

  std::string line = fmt::format(
      "validation at step {}: loss {:.4f} over {} batches | alignment diagonal {:.3f}, focus "
      "{:.3f}",
      step, val_loss, total[1], diagonal, focus);
  double fired = value_of(result.record, metric::kInferStopFired);
  if (!std::isnan(fired)) {
    line += fmt::format(
        " | free-running: diagonal {:.3f}, focus {:.3f}, stop token fired in {:.0f}% ({}), "
        "{:.2f}x the expected frames",
        value_of(result.record, metric::kInferDiagonalScore),
        value_of(result.record, metric::kInferFocusRate), 100 * fired,
        value_of(result.record, metric::kInferMaxStepsHit) > 0 ? "max_decoder_steps hit"
                                                               : "max_decoder_steps not hit",
        value_of(result.record, metric::kInferFrameRatio));
  }
  log::get("train")->info("{}", line);
  return result;
}

void Validator::run_free(tacotron2::Tacotron2Impl& model, ValidationResult& result) {
  const data::Batch& first = *result.first;
  int64_t count = std::min<int64_t>(config_.train.val_inference_utterances, first.text.size(0));
  if (count <= 0) return;
  train::side_work("free-running validation synthesis", result.step, [&] {
    auto lengths = first.text_lengths.slice(0, 0, count);
    const torch::Tensor speakers =
        first.speakers.defined() ? first.speakers.slice(0, 0, count) : torch::Tensor();
    tacotron2::TacotronOutput inferred =
        model.infer(first.text.slice(0, 0, count), lengths, {}, speakers);
    auto frames = inferred.mel_lengths.to(torch::kCPU);
    AlignmentScores scores =
        alignment_scores(inferred.alignments, inferred.decoder_lengths().to(torch::kCPU), lengths);
    // The stop token fired for an item iff the gate passed the threshold at its last frame
    // (inference keeps the frames up to the first stopping one).
    auto last = (frames - 1).clamp_min(0).to(inferred.gate.device());
    auto last_gate = inferred.gate.gather(1, last.unsqueeze(1)).squeeze(1).to(torch::kCPU);
    auto fired = (torch::sigmoid(last_gate) > config_.model.gate_threshold).to(torch::kDouble);
    auto hit_max =
        (frames >= config_.model.max_decoder_steps * inferred.r).to(torch::kDouble) * (1 - fired);
    auto expected = first.mel_lengths.slice(0, 0, count).to(torch::kCPU, torch::kDouble);
    auto ratio = frames.to(torch::kDouble) / expected.clamp_min(1);
    result.record.add(metric::kInferDiagonalScore, scores.diagonal);
    result.record.add(metric::kInferFocusRate, scores.focus);
    result.record.add(metric::kInferStopFired, fired.mean().item<double>());
    result.record.add(metric::kInferMaxStepsHit, hit_max.mean().item<double>());
    result.record.add(metric::kInferFrameRatio, ratio.mean().item<double>());
    result.inferred = std::move(inferred);
  });
}

namespace {

// The first validation utterance's mel plot: its target, teacher-forced and free-running
// (`free_running`, none when it has no frames) mels with the stop token.
report::MelPlotInput mel_plot_input(const config::Config& config, const ValidationResult& result,
                                    const GeneratedUtterance& free_running,
                                    const std::string& utterance) {
  const data::Batch& first = *result.first;
  const int64_t target_frames = first.mel_lengths[0].item<int64_t>();
  const TacotronOutput& teacher_forced = result.first_output;
  report::MelPlotInput input;
  input.step = result.step;
  input.utterance = utterance;
  input.seconds_per_frame = static_cast<double>(config.audio.hop_length) / config.audio.sample_rate;
  input.stop_threshold = config.model.gate_threshold;
  input.panels.push_back(models::mel_panel("target", first.mel[0].slice(0, 0, target_frames)));
  input.panels.push_back(
      models::mel_panel("teacher-forced prediction (postnet)",
                        teacher_forced.mel_postnet[0].slice(0, 0, target_frames)));
  if (free_running.frames > 0) {
    input.panels.push_back(
        models::mel_panel("free-running prediction (postnet)", free_running.mel));
  }
  input.stop.push_back(
      models::stop_curve("target", first.stop[0].slice(0, 0, target_frames), true));
  input.stop.push_back(models::stop_curve(
      "teacher-forced", torch::sigmoid(teacher_forced.gate[0].slice(0, 0, target_frames))));
  if (free_running.frames > 0) {
    input.stop.push_back(models::stop_curve("free-running", free_running.stop));
  }
  return input;
}

}  // namespace

void Validator::write_artifacts(const ValidationResult& result, train::MetricSink& metrics) {
  if (!result.first) return;
  const int64_t step = result.step;
  const data::Batch& first = *result.first;
  std::string prefix = fmt::format("{}/plots/step_{}", run_dir_, step);

  // The first validation utterance: its teacher-forced alignment, and its target, teacher-forced
  // and free-running mels with the stop token.
  const std::string utterance = first.ids.empty() ? "" : first.ids[0];
  std::string alignment_png;
  train::side_work("the alignment plot", step, [&] {
    int64_t decoder_steps = result.first_output.decoder_lengths()[0].item<int64_t>();
    int64_t text_steps = first.text_lengths[0].item<int64_t>();
    alignment_png =
        utterance_alignment_plot(
            result.first_output.alignments[0].slice(0, 0, decoder_steps).slice(1, 0, text_steps),
            step, utterance, "teacher-forced")
            .png;
    if (config_.logging.plots) write_file_atomic(prefix + "_alignment.png", alignment_png);
  });

  const tacotron2::TacotronOutput& inferred = result.inferred;
  GeneratedUtterance free_running;  // the first utterance's
  if (inferred.mel_lengths.defined()) free_running = generated_utterance(inferred, 0);
  const int64_t frames = free_running.frames;
  if (inferred.mel_lengths.defined() && frames == 0) {
    log::get("train")->warn("step {}: the free-running sample has no frames; no audio", step);
  }
  std::string mel_png;
  train::side_work("the mel plot", step, [&] {
    mel_png = report::mel_plot(mel_plot_input(config_, result, free_running, utterance)).png;
    if (config_.logging.plots) write_file_atomic(prefix + "_mel.png", mel_png);
  });

  // The free-running synthesis of the first utterance as audio (Griffin-Lim).
  std::string wav_path;
  int64_t wav_samples = 0;
  if (frames > 0 && config_.logging.samples) {
    train::side_work("the validation audio sample", step, [&] {
      audio::AudioProcessor processor(config_.audio);
      RenderedAudio rendered = render_audio(free_running, processor);
      if (rendered.padded()) {
        log::get("train")->warn("step {}: the free-running sample {}", step,
                                rendered.padding_note());
      }
      std::string path = fmt::format("{}/samples/step_{}.wav", run_dir_, step);
      audio::write_wav(path, rendered.samples, config_.audio.sample_rate);
      wav_path = path;
      wav_samples = static_cast<int64_t>(rendered.samples.size());
    });
  }
  metrics.with_events(
      "writing TensorBoard images and audio", step, [&](formats::EventWriter& events) {
        for (const auto& [tag, png] :
             {std::pair{"val/alignment", &alignment_png}, std::pair{"val/mel", &mel_png}}) {
          if (png->empty()) continue;
          auto [width, height] = formats::png_dimensions(*png);
          events.add_image(tag, *png, width, height, step);
        }
        if (!wav_path.empty()) {
          events.add_audio("val/audio", read_file(wav_path), config_.audio.sample_rate, wav_samples,
                           step);
        }
        events.flush();
      });
}

}  // namespace tts::tacotron2

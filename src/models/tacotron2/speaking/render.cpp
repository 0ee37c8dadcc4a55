#include "tts/models/tacotron2/speaking/render.h"

#include <torch/torch.h>

#include "tts/audio/audio_processor.h"
#include "tts/core/error.h"
#include "tts/models/plot_tensors.h"
#include "tts/models/tacotron2/training/plot_tensors.h"

namespace tts::tacotron2 {

GeneratedUtterance generated_utterance(const tacotron2::TacotronOutput& output, int64_t index) {
  GeneratedUtterance utterance;
  utterance.frames = output.mel_lengths[index].item<int64_t>();
  auto cut = [&](const torch::Tensor& batch) {
    return batch[index].slice(0, 0, utterance.frames).to(torch::kCPU, torch::kFloat).contiguous();
  };
  utterance.mel = cut(output.mel_postnet);
  if (output.linear.defined()) utterance.linear = cut(output.linear);
  utterance.stop = torch::sigmoid(cut(output.gate));
  utterance.alignment = output.alignments[index].to(torch::kCPU, torch::kFloat);
  return utterance;
}

std::string RenderedAudio::padding_note() const {
  return fmt::format("stopped after {} frame(s); padded to {} frames for Griffin-Lim", frames,
                     vocoded_frames);
}

RenderedAudio render_audio(const GeneratedUtterance& utterance,
                           const audio::AudioProcessor& processor) {
  const bool linear = utterance.linear.defined();
  torch::Tensor spectrum =
      audio::padded_for_griffin_lim(linear ? utterance.linear : utterance.mel, processor.options());
  RenderedAudio audio;
  audio.frames = utterance.frames;
  audio.vocoded_frames = spectrum.size(0);
  audio.samples = linear ? processor.linear_to_wav(spectrum) : processor.mel_to_wav(spectrum);
  return audio;
}

UtterancePlots utterance_plots(const GeneratedUtterance& utterance, int64_t step,
                               const std::string& what, const config::AudioOptions& audio,
                               double stop_threshold) {
  UtterancePlots plots;
  plots.alignment = utterance_alignment_plot(utterance.alignment, step, what, "synthesized");
  report::MelPlotInput mel;
  mel.step = step;
  mel.utterance = what;
  mel.seconds_per_frame = static_cast<double>(audio.hop_length) / audio.sample_rate;
  mel.stop_threshold = stop_threshold;
  mel.panels.push_back(models::mel_panel("synthesized (postnet)", utterance.mel));
  mel.stop.push_back(models::stop_curve("stop-token probability", utterance.stop));
  plots.mel = report::mel_plot(mel);
  return plots;
}

}  // namespace tts::tacotron2

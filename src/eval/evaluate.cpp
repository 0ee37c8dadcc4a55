#include "tts/eval/evaluate.h"

#include <fmt/format.h>

#include <cmath>
#include <map>

#include "tts/core/error.h"
#include "tts/core/json_writer.h"
#include "tts/eval/analysis.h"
#include "tts/eval/dtw.h"

namespace tts::eval {
namespace {

const double kMcdConstant = 10.0 / std::log(10.0) * std::sqrt(2.0);

// Means over utterances; a figure counts only where it is defined.
struct Means {
  int64_t utterances = 0;
  double mcd_sum = 0.0, vde_sum = 0.0, f0_sum = 0.0, cer_sum = 0.0;
  int64_t f0_count = 0, cer_count = 0;

  void add(const UtteranceFigures& u) {
    ++utterances;
    mcd_sum += u.mcd_db;
    vde_sum += u.vde;
    if (!std::isnan(u.f0_rmse_hz)) {
      f0_sum += u.f0_rmse_hz;
      ++f0_count;
    }
    if (u.cer) {
      cer_sum += u.cer->cer;
      ++cer_count;
    }
  }
  double mcd() const { return utterances ? mcd_sum / utterances : NAN; }
  double vde() const { return utterances ? vde_sum / utterances : NAN; }
  double f0() const { return f0_count ? f0_sum / f0_count : NAN; }
  double cer() const { return cer_count ? cer_sum / cer_count : NAN; }
};

std::string number(double value) { return std::isnan(value) ? "null" : fmt::format("{}", value); }
std::string cell(double value) { return std::isnan(value) ? "" : fmt::format("{:.6f}", value); }

std::string means_json(const Means& m) {
  return fmt::format(
      "{{\"utterances\": {}, \"mcd_db\": {}, \"f0_rmse_hz\": {}, \"vde\": {}, \"cer\": {}}}",
      m.utterances, number(m.mcd()), number(m.f0()), number(m.vde()), number(m.cer()));
}

std::string names_json(const std::vector<std::string>& names) {
  std::string out = "[";
  for (size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + json_string(names[i]);
  return out + "]";
}

std::string tsv_field(const std::string& text) {
  std::string out = text;
  for (char& c : out) {
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  }
  return out;
}

}  // namespace

UtteranceFigures compare_utterances(const std::vector<float>& reference,
                                    const std::vector<float>& synthesized, const std::string& id) {
  TTS_CHECK(!reference.empty() && !synthesized.empty(),
            "{}: expected audio on both sides, found {} reference and {} synthesized samples", id,
            reference.size(), synthesized.size());
  const auto ref_cepstra = mel_cepstra(reference);
  const auto syn_cepstra = mel_cepstra(synthesized);
  auto distance = [&](int64_t i, int64_t j) {
    const auto& a = ref_cepstra[static_cast<size_t>(i)];
    const auto& b = syn_cepstra[static_cast<size_t>(j)];
    double sum = 0.0;
    for (int d = 1; d <= kCepstrumOrder; ++d) sum += (a[d] - b[d]) * (a[d] - b[d]);
    return std::sqrt(sum);
  };
  const auto path = dtw_path(static_cast<int64_t>(ref_cepstra.size()),
                             static_cast<int64_t>(syn_cepstra.size()), distance, id);
  const Pitch ref_pitch = yin(reference);
  const Pitch syn_pitch = yin(synthesized);
  UtteranceFigures u;
  u.id = id;
  u.frames = static_cast<int64_t>(path.size());
  u.reference_frames = static_cast<int64_t>(ref_cepstra.size());
  u.synthesized_frames = static_cast<int64_t>(syn_cepstra.size());
  double mcd_sum = 0.0, f0_sq_sum = 0.0;
  int64_t voicing_errors = 0;
  for (const auto& [i, j] : path) {
    mcd_sum += distance(i, j);
    const bool ref_voiced = ref_pitch.voiced[static_cast<size_t>(i)] != 0;
    const bool syn_voiced = syn_pitch.voiced[static_cast<size_t>(j)] != 0;
    if (ref_voiced != syn_voiced) ++voicing_errors;
    if (ref_voiced && syn_voiced) {
      const double diff =
          ref_pitch.f0[static_cast<size_t>(i)] - syn_pitch.f0[static_cast<size_t>(j)];
      f0_sq_sum += diff * diff;
      ++u.voiced_pairs;
    }
  }
  u.mcd_db = kMcdConstant * mcd_sum / static_cast<double>(u.frames);
  u.vde = static_cast<double>(voicing_errors) / static_cast<double>(u.frames);
  u.f0_rmse_hz = u.voiced_pairs ? std::sqrt(f0_sq_sum / static_cast<double>(u.voiced_pairs)) : NAN;
  return u;
}

std::string report_json(const std::vector<UtteranceFigures>& utterances,
                        const ReportContext& context) {
  Means all;
  std::map<std::string, Means> speakers;
  std::string out = "{\n";
  out += fmt::format(
      "  \"settings\": {{\"sample_rate\": {}, \"frame_length\": {}, \"hop\": {}, "
      "\"cepstrum_order\": {}, \"all_pass\": {}, \"fmin_hz\": {}, \"fmax_hz\": {}, "
      "\"voicing_threshold\": {}, \"f0_rmse_unit\": \"Hz\", \"asr\": {}}},\n",
      kSampleRate, kFrameLength, kHop, kCepstrumOrder, kAllPass, kFmin, kFmax, kVoicingThreshold,
      context.asr.empty() ? "null" : json_string(context.asr));
  out += "  \"utterances\": [";
  for (size_t k = 0; k < utterances.size(); ++k) {
    const UtteranceFigures& u = utterances[k];
    all.add(u);
    if (!u.speaker.empty()) speakers[u.speaker].add(u);
    out += fmt::format(
        "{}\n    {{\"id\": {}, \"speaker\": {}, \"mcd_db\": {}, \"f0_rmse_hz\": {}, \"vde\": {}, "
        "\"frames\": {}, \"reference_frames\": {}, \"synthesized_frames\": {}, "
        "\"voiced_frames\": {}",
        k ? "," : "", json_string(u.id), u.speaker.empty() ? "null" : json_string(u.speaker),
        number(u.mcd_db), number(u.f0_rmse_hz), number(u.vde), u.frames, u.reference_frames,
        u.synthesized_frames, u.voiced_pairs);
    if (u.cer) {
      out += fmt::format(", \"cer\": {}, \"cer_edits\": {}, \"cer_chars\": {}, \"transcript\": {}",
                         number(u.cer->cer), u.cer->edits, u.cer->reference_chars,
                         json_string(u.transcript));
    }
    out += "}";
  }
  out += "\n  ],\n  \"summary\": " + means_json(all) + ",\n  \"speakers\": {";
  bool first = true;
  for (const auto& [speaker, means] : speakers) {
    out += fmt::format("{}\n    {}: {}", first ? "" : ",", json_string(speaker), means_json(means));
    first = false;
  }
  out += speakers.empty() ? "},\n" : "\n  },\n";
  out += "  \"reference_only\": " + names_json(context.reference_only) + ",\n";
  out += "  \"synthesized_only\": " + names_json(context.synthesized_only) + "\n}\n";
  return out;
}

std::string report_tsv(const std::vector<UtteranceFigures>& utterances) {
  std::string out = "id\tspeaker\tmcd_db\tf0_rmse_hz\tvde\tframes\tcer\n";
  Means all;
  std::map<std::string, Means> speakers;
  for (const UtteranceFigures& u : utterances) {
    all.add(u);
    if (!u.speaker.empty()) speakers[u.speaker].add(u);
    out += fmt::format("{}\t{}\t{}\t{}\t{}\t{}\t{}\n", tsv_field(u.id), tsv_field(u.speaker),
                       cell(u.mcd_db), cell(u.f0_rmse_hz), cell(u.vde), u.frames,
                       u.cer ? cell(u.cer->cer) : "");
  }
  auto mean_line = [&](const std::string& id, const std::string& speaker, const Means& m) {
    out += fmt::format("{}\t{}\t{}\t{}\t{}\t\t{}\n", tsv_field(id), tsv_field(speaker),
                       cell(m.mcd()), cell(m.f0()), cell(m.vde()), cell(m.cer()));
  };
  for (const auto& [speaker, means] : speakers) mean_line("mean:" + speaker, speaker, means);
  mean_line("mean", "", all);
  return out;
}

}  // namespace tts::eval

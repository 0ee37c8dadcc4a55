// `evaluate --checkpoint CKPT --data STORE`: a tiny Tacotron-2 of two speakers trained for real
// through the CLI speaks the store's validation utterances, each in its own voice, and the
// figures are reported per utterance and per speaker against the store's recordings; a clip is
// what `synthesize --speaker` says for its text; what does not fit is refused as a usage error;
// `report RUN` shows the evaluation written to RUN/eval.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "train_fixture.h"
#include "tts/audio/audio_io.h"
#include "tts/formats/json_reader.h"
#include "tts/formats/npy.h"

namespace fs = std::filesystem;
using tts::formats::JsonValue;
using tts::test::CliResult;
using tts::test::kAtDefaults;
using tts::test::run_cli;

namespace {

const std::string kVoices = "en-us+f3 en-gb+m2";
const std::vector<std::string> kSpeakerNames = {"en-gb_m2", "en-us_f3"};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The rows of a store table (train.tsv, val.tsv), header first, split at tabs.
std::vector<std::vector<std::string>> read_rows(const std::string& path) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(slurp(path));
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> fields;
    std::istringstream cells(line);
    for (std::string field; std::getline(cells, field, '\t');) fields.push_back(field);
    rows.push_back(fields);
  }
  return rows;
}

void write_rows(const std::string& path, const std::vector<std::vector<std::string>>& rows) {
  std::string text;
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) text += (i ? "\t" : "") + row[i];
    text += "\n";
  }
  std::ofstream(path, std::ios::binary) << text;
}

size_t column(const std::vector<std::string>& header, const std::string& name) {
  for (size_t i = 0; i < header.size(); ++i) {
    if (header[i] == name) return i;
  }
  ADD_FAILURE() << "no column " << name;
  return 0;
}

double number(const JsonValue* value) {
  return value != nullptr && value->kind == JsonValue::Kind::kNumber ? std::stod(value->text) : NAN;
}

class EvaluateCheckpoint : public tts::test::TrainFixture {
 protected:
  static void SetUpTestSuite() {
    // The store keeps its waveforms: they are the references.
    make_store("evaluate_checkpoint_", "LAYOUT=vctk VOICES=\"" + kVoices + "\"", "4",
               " --corpus vctk --set audio.waveforms=true");
    // Two steps; a short decoder limit keeps an untrained model's synthesis quick.
    train("run",
          "--max-steps 2 --set model.speakers=2 --set model.max_decoder_steps=60" + kAtDefaults);
    checkpoint_ = root_ + "/run/checkpoints/latest";
  }

  // A copy of the store whose `table` rows `edit` changes.
  static std::string edited_store(const std::string& name, const std::string& table,
                                  void (*edit)(std::vector<std::vector<std::string>>&)) {
    const std::string copy = root_ + "/" + name;
    fs::remove_all(copy);
    fs::copy(feats_, copy, fs::copy_options::recursive);
    auto rows = read_rows(copy + "/" + table);
    edit(rows);
    write_rows(copy + "/" + table, rows);
    return copy;
  }

  static CliResult evaluate(const std::string& args) {
    return run_cli("evaluate --checkpoint " + checkpoint_ + " " + args, true);
  }

  static inline std::string checkpoint_;
};

}  // namespace

TEST_F(EvaluateCheckpoint, ReportsEveryValUtteranceAndSpeakerAndSpeaksAsSynthesizeDoes) {
  const std::string out = root_ + "/run/eval";
  const CliResult result = evaluate("--data " + feats_ + " --batch 3 --out " + out);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const JsonValue json = tts::formats::parse_json(slurp(out + "/evaluate.json"), "evaluate.json");

  const auto val = read_rows(feats_ + "/val.tsv");
  ASSERT_GE(val.size(), 3u);  // a header and a row per speaker at least
  const size_t id_column = column(val[0], "id");
  const size_t speaker_column = column(val[0], "speaker");
  const size_t text_column = column(val[0], "text");
  const size_t waveform_column = column(val[0], "waveform");
  std::map<std::string, std::string> speaker_of;
  for (size_t r = 1; r < val.size(); ++r) speaker_of[val[r][id_column]] = val[r][speaker_column];

  const JsonValue* utterances = json.find("utterances");
  ASSERT_NE(utterances, nullptr);
  ASSERT_EQ(utterances->items.size(), speaker_of.size());
  std::set<std::string> seen;
  for (const JsonValue& u : utterances->items) {
    const std::string id = u.find("id")->text;
    ASSERT_EQ(speaker_of.count(id), 1u) << id;
    seen.insert(id);
    EXPECT_EQ(u.find("speaker")->text, speaker_of[id]) << id;
    const double mcd = number(u.find("mcd_db"));
    EXPECT_TRUE(std::isfinite(mcd) && mcd > 0.0) << id << ": " << mcd;
    EXPECT_GT(number(u.find("frames")), 0.0) << id;
    EXPECT_TRUE(fs::is_regular_file(out + "/synthesized/" + id + ".wav")) << id;
    EXPECT_TRUE(fs::is_regular_file(out + "/synthesized/" + id + ".mel.npy")) << id;
  }
  EXPECT_EQ(seen.size(), speaker_of.size());
  EXPECT_TRUE(std::isfinite(number(json.find("summary")->find("mcd_db"))));
  const JsonValue* speakers = json.find("speakers");
  ASSERT_NE(speakers, nullptr);
  ASSERT_EQ(speakers->members.size(), 2u);
  for (size_t s = 0; s < 2; ++s) {
    EXPECT_EQ(speakers->members[s].first, kSpeakerNames[s]);
    EXPECT_GE(number(speakers->members[s].second.find("utterances")), 1.0);
    EXPECT_TRUE(std::isfinite(number(speakers->members[s].second.find("mcd_db"))));
  }
  EXPECT_TRUE(json.find("reference_only")->items.empty());
  EXPECT_TRUE(json.find("synthesized_only")->items.empty());
  EXPECT_FALSE(fs::exists(out + "/synthesized/.speaking"));

  // The reference of an utterance is the store's waveform (16-bit WAV of it).
  const std::string first = val[1][id_column];
  const auto waveform = tts::formats::read_npy(feats_ + "/" + val[1][waveform_column]).data;
  tts::config::AudioOptions as_recorded;
  const auto reference = tts::audio::read_audio(out + "/reference/" + first + ".wav", as_recorded);
  ASSERT_EQ(reference.size(), waveform.size());
  for (size_t i = 0; i < waveform.size(); i += 97) {
    ASSERT_NEAR(reference[i], waveform[i], 1.0 / 16384) << i;
  }

  // Each speaker's utterances are spoken as `synthesize --speaker` speaks their texts in the same
  // batches: the same files. Spoken alone, an utterance's mel is the same within float rounding
  // (a batch pads the shorter sentences).
  for (const std::string& speaker : kSpeakerNames) {
    std::string lines;
    std::vector<std::string> ids;
    for (size_t r = 1; r < val.size(); ++r) {
      if (val[r][speaker_column] != speaker) continue;
      lines += val[r][text_column] + "\n";
      ids.push_back(val[r][id_column]);
    }
    ASSERT_FALSE(ids.empty()) << speaker;
    const std::string text_file = root_ + "/" + speaker + ".txt";
    std::ofstream(text_file) << lines;
    const std::string batched = root_ + "/spoken_" + speaker;
    const std::string synthesize =
        "synthesize --checkpoint " + checkpoint_ + " --speaker " + speaker + " --out ";
    CliResult spoken = run_cli(synthesize + batched + " --batch 3 --text-file " + text_file, true);
    ASSERT_EQ(spoken.exit_code, 0) << spoken.output;
    for (size_t k = 0; k < ids.size(); ++k) {
      const std::string file = batched + "/" + std::to_string(k + 1) + ".wav";
      EXPECT_TRUE(slurp(file) == slurp(out + "/synthesized/" + ids[k] + ".wav")) << ids[k];
    }
    std::ofstream(text_file) << lines.substr(0, lines.find('\n') + 1);
    const std::string alone = root_ + "/alone_" + speaker + ".wav";
    spoken = run_cli(synthesize + alone + " --text-file " + text_file, true);
    ASSERT_EQ(spoken.exit_code, 0) << spoken.output;
    const auto mel = tts::formats::read_npy(root_ + "/alone_" + speaker + ".mel.npy");
    const auto evaluated = tts::formats::read_npy(out + "/synthesized/" + ids[0] + ".mel.npy");
    ASSERT_EQ(mel.shape, evaluated.shape) << ids[0];
    for (size_t i = 0; i < mel.data.size(); ++i) {
      ASSERT_NEAR(mel.data[i], evaluated.data[i], 1e-4) << ids[0] << " value " << i;
    }
  }

  // The report of the run shows the evaluation with both speakers.
  const std::string html = tts::test::report_sections(root_ + "/run");
  const size_t section = html.find("<h2 id=\"evaluation\">");
  ASSERT_NE(section, std::string::npos) << html;
  for (const auto& name : kSpeakerNames) {
    EXPECT_NE(html.find("<td>" + name + "</td>", section), std::string::npos) << name;
  }
}

TEST_F(EvaluateCheckpoint, TakesTheCorpusRecordingsForAStoreWithoutWaveforms) {
  const std::string store = edited_store("no_waveforms", "val.tsv", [](auto& rows) {
    const size_t waveform = column(rows[0], "waveform");
    for (size_t r = 1; r < rows.size(); ++r) rows[r][waveform] = "-";
  });
  CliResult refused = evaluate("--data " + store + " --out " + root_ + "/eval_refused");
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find("keeps no waveforms"), std::string::npos) << refused.output;
  EXPECT_NE(refused.output.find("--reference DIR"), std::string::npos) << refused.output;
  EXPECT_FALSE(fs::exists(root_ + "/eval_refused"));

  // The corpus's recordings of the first utterance, by id; the others are reported as missing.
  const auto val = read_rows(store + "/val.tsv");
  const std::string id = val[1][column(val[0], "id")];
  std::string recording;
  for (const auto& entry : fs::recursive_directory_iterator(root_ + "/corpus")) {
    if (entry.path().stem() == id && entry.path().extension() == ".wav") recording = entry.path();
  }
  ASSERT_FALSE(recording.empty()) << "no recording of " << id;
  fs::create_directories(root_ + "/recordings");
  fs::copy_file(recording, root_ + "/recordings/" + id + ".wav",
                fs::copy_options::overwrite_existing);
  const std::string out = root_ + "/eval_corpus";
  CliResult result = evaluate("--data " + store + " --reference " + root_ +
                              "/recordings --limit 2" + " --out " + out);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const JsonValue json = tts::formats::parse_json(slurp(out + "/evaluate.json"), "evaluate.json");
  ASSERT_EQ(json.find("utterances")->items.size(), 1u);
  EXPECT_EQ(json.find("utterances")->items[0].find("id")->text, id);
  EXPECT_EQ(json.find("synthesized_only")->items.size(), 1u);
  EXPECT_FALSE(fs::exists(out + "/reference"));
}

TEST_F(EvaluateCheckpoint, RefusesWhatDoesNotFitAsUsageErrors) {
  struct Case {
    std::string args;
    std::string expected;
  };
  const std::string empty_val =
      edited_store("empty_val", "val.tsv", [](auto& rows) { rows.resize(1); });
  const std::string stranger = edited_store(
      "stranger", "val.tsv", [](auto& rows) { rows[1][column(rows[0], "speaker")] = "en_m3"; });
  const std::string other_mels = root_ + "/other_mels";
  fs::remove_all(other_mels);
  fs::copy(feats_, other_mels, fs::copy_options::recursive);
  {
    std::string yaml = slurp(other_mels + "/features.yaml");
    const size_t at = yaml.find("fmax:");
    ASSERT_NE(at, std::string::npos) << yaml;
    yaml.replace(at, yaml.find('\n', at) - at, "fmax: 4000");
    std::ofstream(other_mels + "/features.yaml", std::ios::binary) << yaml;
  }
  const std::string out = " --out " + root_ + "/refused";
  for (const Case& c : std::vector<Case>{
           {"--data " + feats_ + " --synthesized " + root_ + out, "two modes"},
           {out, "needs --data STORE"},
           {"--data " + empty_val + out, "no utterances in val.tsv"},
           {"--data " + stranger + out, "en_m3, which the speaker table of"},
           {"--data " + other_mels + out, "was not made with the settings checkpoint"},
           {"--data " + other_mels + out, "audio.fmax=4000"},
           {"--data " + feats_ + " --speakers x.tsv" + out, "takes the speakers and texts"},
       }) {
    const CliResult result = evaluate(c.args);
    EXPECT_EQ(result.exit_code, 2) << c.args << "\n" << result.output;
    EXPECT_NE(result.output.find(c.expected), std::string::npos) << c.args << "\n" << result.output;
  }
  EXPECT_FALSE(fs::exists(root_ + "/refused"));
  const CliResult without = run_cli("evaluate --data " + feats_ + out, true);
  EXPECT_EQ(without.exit_code, 2) << without.output;
  EXPECT_NE(without.output.find("give --checkpoint CKPT too"), std::string::npos) << without.output;
}

TEST_F(EvaluateCheckpoint, AOneSpeakerModelSpeaksEveryUtteranceAndTheReportKeepsTheStoresSpeakers) {
  train("one_voice", "--max-steps 1 --set model.max_decoder_steps=30" + kAtDefaults);
  const std::string out = root_ + "/one_voice/eval";
  const CliResult result =
      run_cli("evaluate --checkpoint " + root_ + "/one_voice/checkpoints/latest --data " + feats_ +
                  " --limit 3 --out " + out,
              true);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const JsonValue json = tts::formats::parse_json(slurp(out + "/evaluate.json"), "evaluate.json");
  ASSERT_EQ(json.find("utterances")->items.size(), 3u);
  for (const JsonValue& u : json.find("utterances")->items) {
    EXPECT_EQ(u.find("speaker")->kind, JsonValue::Kind::kString);
    EXPECT_TRUE(std::isfinite(number(u.find("mcd_db"))));
  }
  EXPECT_GE(json.find("speakers")->members.size(), 1u);
  // The TSV has a line per utterance, one per speaker, and the overall mean.
  const std::string tsv = slurp(out + "/evaluate.tsv");
  EXPECT_EQ(std::count(tsv.begin(), tsv.end(), '\n'),
            static_cast<long>(1 + 3 + json.find("speakers")->members.size() + 1))
      << tsv;
}

// A WaveNet of the store's two speakers vocodes each utterance in the utterance's voice: the clips
// are synthesize --vocoder's for the same speaker, and not those of the other voice.
TEST_F(EvaluateCheckpoint, AVocoderOfSeveralSpeakersSpeaksAsTheUtterancesSpeaker) {
  const std::string wavenet = std::string(TTS_SOURCE_DIR) + "/configs/wavenet_small.yaml";
  const CliResult trained =
      run_cli("train --config " + wavenet + " --data " + feats_ + " --out " + root_ +
                  "/wavenet --max-steps 1 --set wavenet.gin_channels=8 --set wavenet.n_speakers=2" +
                  kAtDefaults,
              true);
  ASSERT_EQ(trained.exit_code, 0) << trained.output;
  const std::string vocoder = root_ + "/wavenet/checkpoints/latest";
  const std::string out = root_ + "/eval_wavenet";
  const CliResult result = evaluate("--data " + feats_ + " --vocoder " + vocoder + " --out " + out);
  ASSERT_EQ(result.exit_code, 0) << result.output;

  const auto val = read_rows(feats_ + "/val.tsv");
  const size_t id_column = column(val[0], "id");
  const size_t speaker_column = column(val[0], "speaker");
  const size_t text_column = column(val[0], "text");
  for (const std::string& speaker : kSpeakerNames) {
    std::string lines;
    std::vector<std::string> ids;
    for (size_t r = 1; r < val.size(); ++r) {
      if (val[r][speaker_column] != speaker) continue;
      lines += val[r][text_column] + "\n";
      ids.push_back(val[r][id_column]);
    }
    const std::string text_file = root_ + "/vocoded_" + speaker + ".txt";
    std::ofstream(text_file) << lines;
    const std::string other = speaker == kSpeakerNames[0] ? kSpeakerNames[1] : kSpeakerNames[0];
    for (const std::string& voice : {speaker, other}) {
      const std::string dir = root_ + "/vocoded_" + speaker + "_as_" + voice;
      const CliResult spoken =
          run_cli("synthesize --checkpoint " + checkpoint_ + " --speaker " + speaker +
                      " --vocoder " + vocoder + " --vocoder-speaker " + voice + " --text-file " +
                      text_file + " --out " + dir,
                  true);
      ASSERT_EQ(spoken.exit_code, 0) << spoken.output;
      for (size_t k = 0; k < ids.size(); ++k) {
        const bool same = slurp(dir + "/" + std::to_string(k + 1) + ".wav") ==
                          slurp(out + "/synthesized/" + ids[k] + ".wav");
        EXPECT_EQ(same, voice == speaker) << ids[k] << " vocoded as " << voice;
      }
    }
  }
}

// With the recognizer (CI's PyTorch 2.11 stage installs it), each speaker's utterances get a CER
// against the store's texts, and so does the summary.
TEST_F(EvaluateCheckpoint, TheRecognizerGivesEachSpeakerACharacterErrorRate) {
  const std::string python = tts::test::asr_python();
  if (python.empty()) {
    GTEST_SKIP() << "no Python with the pocketsphinx package (TTS_ASR_PYTHON, .deps/torch-2.11.0 "
                    "of scripts/setup.sh --torch pip, python3): --asr cannot run here";
  }
  const std::string out = root_ + "/asr_eval";
  const CliResult result =
      evaluate("--data " + feats_ + " --asr pocketsphinx --asr-python " + python + " --out " + out);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const JsonValue json = tts::formats::parse_json(slurp(out + "/evaluate.json"), "evaluate.json");
  const JsonValue* speakers = json.find("speakers");
  ASSERT_NE(speakers, nullptr);
  for (const std::string& name : kSpeakerNames) {
    const JsonValue* speaker = speakers->find(name);
    ASSERT_NE(speaker, nullptr) << name;
    const double cer = number(speaker->find("cer"));
    EXPECT_TRUE(std::isfinite(cer) && cer >= 0) << name << ": " << cer;
  }
  for (const JsonValue& u : json.find("utterances")->items) {
    EXPECT_NE(u.find("transcript"), nullptr) << u.find("id")->text;
  }
  EXPECT_TRUE(std::isfinite(number(json.find("summary")->find("cer"))));
}

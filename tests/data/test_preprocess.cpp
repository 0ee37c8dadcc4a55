// Preprocessing end to end on an espeak-ng corpus (scripts/make_corpus.sh) with planted bad
// lines and files; parallel output against serial; resuming a store; the train/val split.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "tts/audio/audio_processor.h"
#include "tts/core/error.h"
#include "tts/core/fs.h"
#include "tts/data/feature_store.h"
#include "tts/data/preprocess.h"
#include "tts/data/store_writer.h"
#include "tts/formats/npy.h"
#include "tts/text/text_processor.h"

namespace fs = std::filesystem;

namespace {

const std::string kTmp = std::string(TTS_TEST_TMP_DIR) + "/preprocess";
const std::string kCorpus = kTmp + "/corpus";
constexpr int kGoodClips = 8;

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

std::vector<std::string> split(const std::string& line, char separator) {
  std::vector<std::string> fields;
  std::stringstream in(line);
  std::string field;
  while (std::getline(in, field, separator)) fields.push_back(field);
  return fields;
}

// 16-bit mono PCM WAV of `samples` at 22050 Hz.
void write_pcm16(const std::string& path, const std::vector<int16_t>& samples) {
  auto u32 = [](uint32_t v) { return std::string(reinterpret_cast<const char*>(&v), 4); };
  auto u16 = [](uint16_t v) { return std::string(reinterpret_cast<const char*>(&v), 2); };
  auto bytes = static_cast<uint32_t>(samples.size() * 2);
  std::string wav = "RIFF" + u32(36 + bytes) + "WAVEfmt " + u32(16) + u16(1) + u16(1) + u32(22050) +
                    u32(22050 * 2) + u16(2) + u16(16) + "data" + u32(bytes);
  wav.append(reinterpret_cast<const char*>(samples.data()), bytes);
  std::ofstream(path, std::ios::binary) << wav;
}

// kGoodClips espeak-ng clips, then planted problems: a malformed line, a missing WAV, a garbage
// WAV, an empty transcript, a duplicate id, a clip shorter than one frame and a silent one.
class Preprocess : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (std::system("command -v espeak-ng >/dev/null") != 0) return;
    fs::remove_all(kTmp);
    fs::create_directories(kTmp);
    std::string command = "MAX_CHARS=70 " + std::string(TTS_SOURCE_DIR) +
                          "/scripts/make_corpus.sh " + kCorpus + " " + std::to_string(kGoodClips) +
                          " >/dev/null";
    ASSERT_EQ(std::system(command.c_str()), 0);
    std::vector<std::string> good = lines_of(kCorpus + "/metadata.csv");
    ASSERT_EQ(good.size(), static_cast<size_t>(kGoodClips));
    first_id_ = split(good[0], '|')[0];
    std::ofstream metadata(kCorpus + "/metadata.csv", std::ios::app);
    metadata << "a line without any separator\n"
             << "BAD-missing|No file for this one.|No file for this one.\n"
             << "BAD-garbage|A garbage file.|A garbage file.\n"
             << "BAD-empty|  |  \n"
             << first_id_ << "|A duplicate.|A duplicate.\n"
             << "BAD-short|Too short.|Too short.\n"
             << "BAD-silent|Only silence.|Only silence.\n";
    std::ofstream(kCorpus + "/wavs/BAD-garbage.wav") << "this is not a wav file at all";
    fs::copy_file(kCorpus + "/wavs/" + first_id_ + ".wav", kCorpus + "/wavs/BAD-empty.wav");
    std::vector<int16_t> short_clip(300);
    for (size_t i = 0; i < short_clip.size(); ++i) short_clip[i] = static_cast<int16_t>(i * 37);
    write_pcm16(kCorpus + "/wavs/BAD-short.wav", short_clip);
    write_pcm16(kCorpus + "/wavs/BAD-silent.wav", std::vector<int16_t>(22050, 0));
  }

  void SetUp() override {
    if (!fs::exists(kCorpus + "/metadata.csv")) GTEST_SKIP() << "espeak-ng is not installed";
  }

  static tts::config::Config config(std::vector<std::string> overrides = {}) {
    overrides.insert(overrides.begin(), "data.max_skip_fraction=0.5");
    return tts::config::load_config(std::string(TTS_SOURCE_DIR) + "/configs/tiny.yaml", overrides);
  }

  static tts::data::PreprocessSummary run(const std::string& out, int workers,
                                          const tts::config::Config& c = config()) {
    return tts::data::preprocess_corpus(c, {kCorpus, out, workers, nullptr});
  }

  static std::string first_id_;
};

std::string Preprocess::first_id_;

}  // namespace

TEST_F(Preprocess, WritesAValidStoreAndReportsEveryBadInput) {
  std::string out = kTmp + "/store";
  tts::data::PreprocessSummary summary = run(out, 1);
  EXPECT_FALSE(summary.interrupted);
  EXPECT_EQ(summary.inputs, kGoodClips + 7);
  EXPECT_EQ(summary.kept, kGoodClips);
  EXPECT_EQ(summary.skipped, 7);
  EXPECT_EQ(summary.reused, 0);
  std::map<std::string, int64_t> expected_reasons = {
      {"malformed line", 1}, {"missing audio", 1}, {"bad audio", 1}, {"empty transcript", 1},
      {"duplicate id", 1},   {"too short", 1},     {"silent", 1}};
  EXPECT_EQ(summary.skipped_by_reason, expected_reasons);

  // metadata.tsv: header, one row per kept clip, arrays that match it.
  std::vector<std::string> rows = lines_of(out + "/metadata.tsv");
  ASSERT_EQ(rows.size(), static_cast<size_t>(kGoodClips + 1));
  EXPECT_EQ(rows[0], "id\tn_frames\tn_samples\tmel\tlinear\twaveform\tspeaker\ttext");
  int64_t frames = 0;
  for (size_t i = 1; i < rows.size(); ++i) {
    std::vector<std::string> fields = split(rows[i], '\t');
    ASSERT_EQ(fields.size(), 8u) << rows[i];
    EXPECT_EQ(fields[6], "corpus");  // an ljspeech-layout corpus's speaker: its folder's name
    EXPECT_EQ(fields[3], "mels/" + fields[0] + ".npy");
    EXPECT_EQ(fields[4], "-");
    EXPECT_EQ(fields[5], "-");  // no waveforms without audio.waveforms
    tts::formats::NpyArray mel = tts::formats::read_npy(out + "/" + fields[3]);
    ASSERT_EQ(mel.shape.size(), 2u);
    EXPECT_EQ(mel.shape[0], std::stoll(fields[1]));
    EXPECT_EQ(mel.shape[1], 80);
    // Centered frames: n_frames = n_samples / hop + 1.
    EXPECT_EQ(mel.shape[0], std::stoll(fields[2]) / 256 + 1);
    frames += mel.shape[0];
    EXPECT_FALSE(fields[6].empty());
    EXPECT_EQ(fields[6], tts::text::TextProcessor(config().text).clean(fields[6]))
        << "text is stored cleaned";
  }
  EXPECT_EQ(frames, summary.frames);
  EXPECT_FALSE(fs::exists(out + "/linear"));

  // errors.tsv: every planted problem, in line order, with its line and id.
  std::vector<std::string> errors = lines_of(out + "/errors.tsv");
  ASSERT_EQ(errors.size(), 8u);
  EXPECT_EQ(errors[0], "line\tid\treason");
  auto error = [&](size_t k) { return split(errors[k], '\t'); };
  EXPECT_EQ(error(1)[0], std::to_string(kGoodClips + 1));
  EXPECT_EQ(error(1)[1], "a line without any separator");
  EXPECT_EQ(error(1)[2].rfind("malformed line", 0), 0u);
  EXPECT_EQ(error(2)[1], "BAD-missing");
  EXPECT_EQ(error(2)[2].rfind("missing audio", 0), 0u);
  EXPECT_EQ(error(3)[1], "BAD-garbage");
  EXPECT_EQ(error(3)[2].rfind("bad audio", 0), 0u);
  EXPECT_NE(error(3)[2].find("BAD-garbage.wav"), std::string::npos) << errors[3];
  EXPECT_EQ(error(4)[1], "BAD-empty");
  EXPECT_EQ(error(4)[2].rfind("empty transcript", 0), 0u);
  EXPECT_EQ(error(5)[1], first_id_);
  EXPECT_EQ(error(5)[2].rfind("duplicate id", 0), 0u);
  EXPECT_EQ(error(6)[1], "BAD-short");
  EXPECT_EQ(error(6)[2].rfind("too short", 0), 0u);
  EXPECT_EQ(error(7)[1], "BAD-silent");
  EXPECT_EQ(error(7)[2].rfind("silent: ", 0), 0u) << errors[7];
  EXPECT_NE(error(7)[2].find("BAD-silent.wav"), std::string::npos) << errors[7];

  // train.tsv and val.tsv partition metadata.tsv; tiny.yaml asks for 4 validation utterances.
  std::vector<std::string> train = lines_of(out + "/train.tsv");
  std::vector<std::string> val = lines_of(out + "/val.tsv");
  EXPECT_EQ(train[0], rows[0]);
  EXPECT_EQ(val[0], rows[0]);
  EXPECT_EQ(val.size(), 1u + 4u);
  EXPECT_EQ(train.size() + val.size() - 2, rows.size() - 1);
  std::set<std::string> all(rows.begin() + 1, rows.end());
  std::set<std::string> parts(train.begin() + 1, train.end());
  parts.insert(val.begin() + 1, val.end());
  EXPECT_EQ(all, parts);

  // features.yaml: version, the audio and text sections (loadable), counts.
  std::string yaml = tts::read_file(out + "/features.yaml");
  EXPECT_EQ(yaml.rfind(std::string("tts_train_version: ") + TTS_VERSION + "\n", 0), 0u) << yaml;
  size_t sections_start = yaml.find("audio:");
  size_t counts_start = yaml.find("counts:");
  ASSERT_NE(sections_start, std::string::npos);
  ASSERT_NE(counts_start, std::string::npos);
  tts::config::Config stored = tts::config::parse_config(
      yaml.substr(sections_start, counts_start - sections_start), out + "/features.yaml");
  EXPECT_EQ(stored.audio.n_mels, 80);
  EXPECT_EQ(stored.text.cleaners, config().text.cleaners);
  EXPECT_EQ(tts::config::dump_sections(stored, {"audio", "text"}),
            tts::config::dump_sections(config(), {"audio", "text"}));
  EXPECT_NE(yaml.find(fmt::format("counts: {{kept: {}, skipped: 7, frames: {}, hours: ", kGoodClips,
                                  frames)),
            std::string::npos)
      << yaml;
  EXPECT_NE(yaml.find("resampled_files: 0\n"), std::string::npos) << yaml;
}

TEST_F(Preprocess, TwoWorkersWriteExactlyWhatOneWorkerWrites) {
  std::string serial = kTmp + "/serial";
  std::string parallel = kTmp + "/parallel";
  run(serial, 1);
  run(parallel, 2);
  for (const char* name : {"metadata.tsv", "train.tsv", "val.tsv", "errors.tsv"}) {
    EXPECT_EQ(tts::read_file(serial + "/" + name), tts::read_file(parallel + "/" + name)) << name;
  }
  int compared = 0;
  for (const auto& entry : fs::directory_iterator(serial + "/mels")) {
    std::string name = entry.path().filename().string();
    EXPECT_EQ(tts::read_file(entry.path().string()), tts::read_file(parallel + "/mels/" + name))
        << name;
    ++compared;
  }
  EXPECT_EQ(compared, kGoodClips);
}

TEST_F(Preprocess, RerunReusesFinishedUtterancesAndRedoesMissingOnes) {
  std::string out = kTmp + "/resume";
  run(out, 2);
  std::string metadata = tts::read_file(out + "/metadata.tsv");
  std::vector<std::string> rows = lines_of(out + "/metadata.tsv");
  std::string removed = split(rows[2], '\t')[0];
  std::string mel = tts::read_file(out + "/mels/" + removed + ".npy");
  // What a killed run leaves: a missing array, a stray temporary, no tables.
  fs::remove(out + "/mels/" + removed + ".npy");
  std::ofstream(out + "/mels/" + removed + ".npy.tmp.99999") << "partial";
  fs::remove(out + "/metadata.tsv");
  fs::remove(out + "/features.yaml");

  tts::data::PreprocessSummary summary = run(out, 2);
  EXPECT_EQ(summary.kept, kGoodClips);
  EXPECT_EQ(summary.reused, kGoodClips - 1);
  EXPECT_EQ(tts::read_file(out + "/metadata.tsv"), metadata);
  EXPECT_EQ(tts::read_file(out + "/mels/" + removed + ".npy"), mel);
  EXPECT_FALSE(fs::exists(out + "/mels/" + removed + ".npy.tmp.99999"));
  EXPECT_TRUE(fs::exists(out + "/features.yaml"));

  // A third run has nothing to compute.
  EXPECT_EQ(run(out, 1).reused, kGoodClips);
}

TEST_F(Preprocess, ChangedAudioSettingsRecomputeEverything) {
  std::string out = kTmp + "/settings";
  run(out, 2);
  tts::config::Config changed = config({"audio.n_mels=40", "audio.linear=true"});
  tts::data::PreprocessSummary summary = run(out, 2, changed);
  EXPECT_EQ(summary.kept, kGoodClips);
  EXPECT_EQ(summary.reused, 0);
  std::vector<std::string> rows = lines_of(out + "/metadata.tsv");
  std::vector<std::string> fields = split(rows[1], '\t');
  EXPECT_EQ(fields[4], "linear/" + fields[0] + ".npy");
  EXPECT_EQ(tts::formats::read_npy_header(out + "/" + fields[3]).shape[1], 40);
  EXPECT_EQ(tts::formats::read_npy_header(out + "/" + fields[4]).shape[1], 1024 / 2 + 1);
  EXPECT_EQ(tts::formats::read_npy_header(out + "/" + fields[4]).shape[0], std::stoll(fields[1]));
  // Text settings only change the text column: features are reused.
  tts::config::Config basic =
      config({"audio.n_mels=40", "audio.linear=true", "text.cleaners=[basic_cleaners]"});
  EXPECT_EQ(run(out, 2, basic).reused, kGoodClips);
}

TEST_F(Preprocess, ClipsLongerThanMaxSecondsAreSkipped) {
  std::string out = kTmp + "/long";
  run(out, 2);
  // The median duration as the limit: the longer half is skipped, also when reused.
  std::vector<int64_t> samples;
  for (const auto& row : lines_of(out + "/metadata.tsv")) {
    if (row.rfind("id\t", 0) != 0) samples.push_back(std::stoll(split(row, '\t')[2]));
  }
  std::sort(samples.begin(), samples.end());
  int64_t limit = samples[samples.size() / 2];
  auto longer = std::count_if(samples.begin(), samples.end(), [&](int64_t n) { return n > limit; });
  ASSERT_GT(longer, 0);
  tts::data::PreprocessSummary summary =
      run(out, 2,
          config({fmt::format("data.max_seconds={}", limit / 22050.0 + 1e-6),
                  "data.max_skip_fraction=1"}));
  EXPECT_EQ(summary.skipped_by_reason["too long"], longer);
  EXPECT_EQ(summary.kept, kGoodClips - longer);
  std::string errors = tts::read_file(out + "/errors.tsv");
  EXPECT_NE(errors.find("more than data.max_seconds"), std::string::npos) << errors;
}

TEST_F(Preprocess, TooManySkipsFailAfterWritingErrorsButNotFeaturesYaml) {
  std::string out = kTmp + "/strict";
  try {
    run(out, 2, config({"data.max_skip_fraction=0.1"}));
    FAIL() << "expected tts::Error";
  } catch (const tts::Error& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("data.max_skip_fraction"), std::string::npos) << message;
    EXPECT_NE(message.find("errors.tsv"), std::string::npos) << message;
  }
  EXPECT_EQ(lines_of(out + "/errors.tsv").size(), 8u);  // header + 7 skipped
  EXPECT_FALSE(fs::exists(out + "/features.yaml"));
}

namespace {

std::vector<tts::data::StoreRow> rows_with_ids(int n) {
  std::vector<tts::data::StoreRow> rows;
  for (int i = 0; i < n; ++i) {
    rows.push_back({fmt::format("LJ{:03d}", i), 100 + i, 25600 + i, "", "-", "-", "text", ""});
  }
  return rows;
}

std::set<std::string> ids_of(const std::vector<tts::data::StoreRow>& rows) {
  std::set<std::string> ids;
  for (const auto& row : rows) ids.insert(row.id);
  return ids;
}

}  // namespace

TEST(SplitTrainVal, CountsAndFractionsAreHonoredAndTrainKeepsOne) {
  auto rows = rows_with_ids(50);
  EXPECT_EQ(tts::data::split_train_val(rows, 5, 1234).val.size(), 5u);
  EXPECT_EQ(tts::data::split_train_val(rows, 5, 1234).train.size(), 45u);
  EXPECT_EQ(tts::data::split_train_val(rows, 0.1, 1234).val.size(), 5u);
  EXPECT_EQ(tts::data::split_train_val(rows, 0, 1234).val.size(), 0u);
  EXPECT_EQ(tts::data::split_train_val(rows, 500, 1234).train.size(), 1u);
  EXPECT_EQ(tts::data::split_train_val(rows_with_ids(1), 4, 1234).train.size(), 1u);
}

TEST(SplitTrainVal, DependsOnIdsAndSeedOnlyAndKeepsRowOrder) {
  auto rows = rows_with_ids(40);
  auto split = tts::data::split_train_val(rows, 6, 1234);
  auto reversed_rows = rows;
  std::reverse(reversed_rows.begin(), reversed_rows.end());
  EXPECT_EQ(ids_of(tts::data::split_train_val(reversed_rows, 6, 1234).val), ids_of(split.val));
  EXPECT_NE(ids_of(tts::data::split_train_val(rows, 6, 99).val), ids_of(split.val));
  for (size_t i = 1; i < split.train.size(); ++i)
    EXPECT_LT(split.train[i - 1].id, split.train[i].id);
  for (size_t i = 1; i < split.val.size(); ++i) EXPECT_LT(split.val[i - 1].id, split.val[i].id);
}

TEST(StoreTables, TsvHasTheHeaderAndNoTabsInsideText) {
  std::vector<tts::data::StoreRow> rows = {
      {"A", 3, 700, "mels/A.npy", "-", "waveforms/A.npy", "tab\there\nand newline", "p225"}};
  EXPECT_EQ(tts::data::format_store_tsv(rows),
            "id\tn_frames\tn_samples\tmel\tlinear\twaveform\tspeaker\ttext\n"
            "A\t3\t700\tmels/A.npy\t-\twaveforms/A.npy\tp225\ttab here and newline\n");
  EXPECT_EQ(tts::data::format_errors_tsv({{7, "B", "missing wav: no file 'x'"}}),
            "line\tid\treason\n7\tB\tmissing wav: no file 'x'\n");
}

TEST_F(Preprocess, KeepsTheTrimmedWaveformEachMelWasComputedFrom) {
  std::string out = kTmp + "/store_waveforms";
  tts::config::Config c = config({"audio.waveforms=true"});
  run(out, 2, c);
  std::vector<std::string> rows = lines_of(out + "/metadata.tsv");
  ASSERT_GT(rows.size(), 1u);
  tts::audio::AudioProcessor processor(c.audio);
  for (size_t i = 1; i < rows.size(); ++i) {
    std::vector<std::string> fields = split(rows[i], '\t');
    ASSERT_EQ(fields.size(), 8u);
    EXPECT_EQ(fields[5], "waveforms/" + fields[0] + ".npy");
    tts::formats::NpyArray wave = tts::formats::read_npy(out + "/" + fields[5]);
    ASSERT_EQ(wave.shape, std::vector<int64_t>{std::stoll(fields[2])});
    // The stored waveform gives back the stored mel: it is what the mel was computed from.
    tts::config::AudioOptions untrimmed = c.audio;
    untrimmed.trim = false;
    tts::audio::Features again = tts::audio::AudioProcessor(untrimmed).compute(wave.data, false);
    tts::formats::NpyArray mel = tts::formats::read_npy(out + "/" + fields[3]);
    torch::Tensor stored = torch::from_blob(mel.data.data(), {mel.shape[0], mel.shape[1]});
    ASSERT_EQ(again.mel.sizes(), stored.sizes());
    EXPECT_LT((again.mel - stored).abs().max().item<float>(), 1e-4) << fields[0];
  }
  // A training config of a vocoder opens the store; one of Tacotron-2 still does.
  tts::config::Config vocoder = config({"model.kind=hifigan", "audio.waveforms=true"});
  tts::data::FeatureStore store = tts::data::FeatureStore::open(out, vocoder);
  ASSERT_FALSE(store.train().empty());
  EXPECT_FALSE(store.train()[0].waveform_path.empty());
  EXPECT_GT(store.train()[0].n_samples, 0);
  EXPECT_NO_THROW(tts::data::FeatureStore::open(out, c));
}

TEST_F(Preprocess, AVocoderRefusesAStoreWithoutWaveformsSayingHowToMakeOne) {
  std::string out = kTmp + "/store_no_waveforms";
  run(out, 1);
  try {
    tts::data::FeatureStore::open(out, config({"model.kind=hifigan", "audio.waveforms=true"}));
    FAIL() << "a store without waveforms was accepted for a vocoder";
  } catch (const tts::UsageError& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("audio.waveforms=false"), std::string::npos) << message;
    EXPECT_NE(message.find("model.kind=hifigan"), std::string::npos) << message;
    EXPECT_NE(message.find("--set audio.waveforms=true"), std::string::npos) << message;
    EXPECT_NE(message.find("tts-train gta --checkpoint RUN"), std::string::npos) << message;
  }
}

// A transcript far longer than its clip (216,000 characters, or 60 symbols a second and more)
// is skipped as "too much text", naming the utterance; long honest sentences are kept.
TEST_F(Preprocess, TranscriptsPastTheTextBoundsAreSkippedByName) {
  const std::string corpus = kTmp + "/long_text_corpus";
  fs::remove_all(corpus);
  fs::create_directories(corpus);
  fs::copy(kCorpus + "/wavs", corpus + "/wavs");
  std::vector<std::string> good;
  for (const std::string& line : lines_of(kCorpus + "/metadata.csv")) {
    if (line.rfind("LJ", 0) == 0 && good.size() < static_cast<size_t>(kGoodClips)) {
      good.push_back(line);
    }
  }
  ASSERT_EQ(good.size(), static_cast<size_t>(kGoodClips));
  std::string huge;
  while (huge.size() < 216000) huge += "the quick brown fox ";
  std::string dense;  // a few hundred symbols for a clip of a few seconds
  while (dense.size() < 900) dense += "and so on ";
  const std::string huge_id = split(good[0], '|')[0];
  const std::string dense_id = split(good[1], '|')[0];
  {
    std::ofstream metadata(corpus + "/metadata.csv");
    metadata << huge_id << "|" << huge << "|" << huge << "\n"
             << dense_id << "|" << dense << "|" << dense << "\n";
    for (size_t i = 2; i < good.size(); ++i) metadata << good[i] << "\n";
  }
  tts::data::PreprocessSummary summary = tts::data::preprocess_corpus(
      config({"data.max_skip_fraction=0.5"}), {corpus, kTmp + "/long_text", 2, nullptr});
  EXPECT_EQ(summary.skipped_by_reason["too much text"], 2);
  EXPECT_EQ(summary.kept, kGoodClips - 2);
  const std::string errors = tts::read_file(kTmp + "/long_text/errors.tsv");
  EXPECT_NE(errors.find(huge_id + "\ttoo much text: a transcript of"), std::string::npos)
      << errors.substr(0, 2000);
  EXPECT_NE(errors.find(dense_id + "\ttoo much text:"), std::string::npos)
      << errors.substr(0, 2000);
  EXPECT_NE(errors.find("symbols for"), std::string::npos) << errors.substr(0, 2000);
}

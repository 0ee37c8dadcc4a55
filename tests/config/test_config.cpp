#include <gtest/gtest.h>
#include <spdlog/sinks/ringbuffer_sink.h>

#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tts/config/config.h"
#include "tts/core/error.h"
#include "tts/core/logging.h"

using tts::UsageError;
using tts::config::Compression;
using tts::config::Config;
using tts::config::dump_config;
using tts::config::load_config;
using tts::config::LogLevel;
using tts::config::parse_config;
using tts::config::UnknownCharacters;

namespace {

// The message of the UsageError that `fn` throws; fails the test when it throws nothing.
template <class Fn>
std::string usage_error(Fn fn) {
  try {
    fn();
  } catch (const UsageError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a UsageError";
  return "";
}

std::string config_path(const std::string& name) {
  return std::string(TTS_SOURCE_DIR) + "/configs/" + name;
}

}  // namespace

TEST(Config, DefaultsAreNvidiasLJSpeechSettings) {
  Config config = parse_config("", "empty");
  EXPECT_EQ(config.audio.sample_rate, 22050);
  EXPECT_EQ(config.audio.n_fft, 1024);
  EXPECT_EQ(config.audio.hop_length, 256);
  EXPECT_EQ(config.audio.win_length, 1024);
  EXPECT_EQ(config.audio.n_mels, 80);
  EXPECT_DOUBLE_EQ(config.audio.fmax, 8000.0);
  EXPECT_EQ(config.model.n_frames_per_step, 1);
  EXPECT_EQ(config.model.decoder_rnn_dim, 1024);
  EXPECT_EQ(config.text.cleaners, std::vector{tts::config::Cleaner::kEnglish});
  EXPECT_EQ(config.audio.n_linear(), 513);
}

TEST(Config, ParsesValuesOfEveryType) {
  Config config = parse_config(
      "audio:\n  n_fft: 2048\n  fmax: 7600\n  linear: yes\n  compression: db\n"
      "text:\n  cleaners: [basic_cleaners, transliteration_cleaners]\n"
      "train:\n  max_steps: 10000000000\n",
      "inline");
  EXPECT_EQ(config.audio.n_fft, 2048);
  EXPECT_DOUBLE_EQ(config.audio.fmax, 7600.0);
  EXPECT_TRUE(config.audio.linear);
  EXPECT_EQ(config.audio.compression, Compression::kDb);
  EXPECT_EQ(config.text.cleaners,
            (std::vector{tts::config::Cleaner::kBasic, tts::config::Cleaner::kTransliteration}));
  EXPECT_EQ(config.train.max_steps, 10000000000LL);
}

TEST(Config, ShippedConfigsLoadAndHaveTheirHyperparameters) {
  Config nvidia = load_config(config_path("ljspeech_tacotron2.yaml"));
  EXPECT_EQ(nvidia.train.batch_size, 64);
  EXPECT_EQ(nvidia.model.encoder_embedding_dim, 512);

  Config rayhane = load_config(config_path("ljspeech_tacotron2_linear.yaml"));
  EXPECT_EQ(rayhane.audio.n_fft, 2048);
  EXPECT_EQ(rayhane.audio.hop_length, 275);
  EXPECT_EQ(rayhane.audio.win_length, 1100);
  EXPECT_DOUBLE_EQ(rayhane.audio.fmin, 55.0);
  EXPECT_DOUBLE_EQ(rayhane.audio.fmax, 7600.0);
  EXPECT_TRUE(rayhane.audio.symmetric);
  EXPECT_DOUBLE_EQ(rayhane.audio.max_abs_value, 4.0);
  EXPECT_TRUE(rayhane.audio.linear);
  EXPECT_TRUE(rayhane.model.predict_linear);
  EXPECT_EQ(rayhane.audio.n_linear(), 1025);

  Config tiny = load_config(config_path("tiny.yaml"));
  EXPECT_LT(tiny.model.decoder_rnn_dim, 256);
}

TEST(Config, DumpLoadsBackToTheSameConfig) {
  for (const char* name : {"ljspeech_tacotron2.yaml", "ljspeech_tacotron2_linear.yaml",
                           "ljspeech_tacotron2_phonemes.yaml", "tiny.yaml"}) {
    Config original = load_config(config_path(name), {"audio.log_floor=0.1", "data.val_size=0.05"});
    std::string dumped = dump_config(original);
    Config reloaded = parse_config(dumped, "dump");
    EXPECT_TRUE(original == reloaded) << name;
    EXPECT_EQ(dump_config(reloaded), dumped) << name;
    EXPECT_DOUBLE_EQ(reloaded.audio.log_floor, 0.1);
    EXPECT_DOUBLE_EQ(reloaded.data.val_size, 0.05);
  }
}

TEST(Config, DumpListsEveryKeyWithAComment) {
  std::string dumped = dump_config(Config{});
  for (const std::string& path : tts::config::all_keys()) {
    std::string key = path.substr(path.find('.') + 1);
    auto at = dumped.find("  " + key + ":");
    ASSERT_NE(at, std::string::npos) << path;
    auto line_end = dumped.find('\n', at);
    EXPECT_NE(dumped.substr(at, line_end - at).find("  # "), std::string::npos) << path;
  }
}

TEST(Config, UnknownKeyNamesFileLineAndSuggestsTheNearestKey) {
  std::string message =
      usage_error([] { parse_config("audio:\n  n_fft: 1024\n  hop_lenght: 200\n", "my.yaml"); });
  EXPECT_NE(message.find("my.yaml line 3"), std::string::npos) << message;
  EXPECT_NE(message.find("audio.hop_lenght: unknown key; did you mean audio.hop_length?"),
            std::string::npos)
      << message;
}

TEST(Config, KeyInTheWrongSectionSuggestsItsSection) {
  std::string message = usage_error([] { parse_config("audio:\n  batch_size: 8\n", "x.yaml"); });
  EXPECT_NE(message.find("did you mean train.batch_size?"), std::string::npos) << message;
}

// A near miss within the key's own section is suggested before a closer name in another one:
// model.speaker is a typo of model.speakers, not a misplaced data.speaker.
TEST(Config, AKeysOwnSectionIsSuggestedFirst) {
  std::string message = usage_error([] { parse_config("", "x.yaml", {"model.speaker=2"}); });
  EXPECT_NE(message.find("model.speaker: unknown key; did you mean model.speakers?"),
            std::string::npos)
      << message;
}

TEST(Config, UnknownSectionIsAnError) {
  std::string message = usage_error([] { parse_config("audo:\n  n_fft: 1024\n", "x.yaml"); });
  EXPECT_NE(message.find("x.yaml line 1: unknown section 'audo'; did you mean audio?"),
            std::string::npos)
      << message;
}

TEST(Config, WrongTypeNamesKeyExpectedTypeAndValue) {
  std::string message = usage_error([] { parse_config("audio:\n  n_fft: 10.5\n", "x.yaml"); });
  EXPECT_NE(message.find("x.yaml line 2: audio.n_fft: expected an integer, found '10.5'"),
            std::string::npos)
      << message;
  message = usage_error([] { parse_config("audio:\n  linear: maybe\n", "x.yaml"); });
  EXPECT_NE(message.find("audio.linear: expected a boolean"), std::string::npos) << message;
  message = usage_error([] { parse_config("text:\n  cleaners: {a: 1}\n", "x.yaml"); });
  EXPECT_NE(message.find("text.cleaners: expected a list of basic_cleaners, "), std::string::npos)
      << message;
  message = usage_error([] { parse_config("audio: 3\n", "x.yaml"); });
  EXPECT_NE(message.find("section 'audio' must be a mapping"), std::string::npos) << message;
}

TEST(Config, InvalidYamlNamesTheLine) {
  std::string message =
      usage_error([] { parse_config("audio:\n  n_fft: [1024\n  hop: 3\n", "x.yaml"); });
  EXPECT_NE(message.find("x.yaml line"), std::string::npos) << message;
  EXPECT_NE(message.find("not valid YAML"), std::string::npos) << message;
}

TEST(Config, RangeAndCrossFieldRulesNameTheKeyPath) {
  struct Case {
    const char* yaml;
    const char* expected;
  };
  const Case cases[] = {
      {"audio:\n  n_fft: 512\n  win_length: 1024\n",
       "audio.win_length = 1024: must be <= audio.n_fft (512)"},
      {"audio:\n  fmax: 12000\n", "audio.fmax = 12000: must be <= audio.sample_rate/2 (11025)"},
      {"model:\n  n_frames_per_step: 0\n", "model.n_frames_per_step = 0: must be at least 1"},
      {"model:\n  encoder_embedding_dim: 511\n", "model.encoder_embedding_dim = 511: must be even"},
      {"audio:\n  mel_scale: bark\n",
       "x.yaml line 2: audio.mel_scale: expected one of slaney, htk, found 'bark'"},
      {"train:\n  batch_size: 0\n", "train.batch_size = 0: must be at least 1"},
      {"data:\n  val_size: 2.5\n", "data.val_size = 2.5: must be a fraction"},
      {"distributed:\n  first_bucket_mb: 30\n", "distributed.first_bucket_mb = 30"},
      {"train:\n  precision: fp16\n", "train.precision: expected one of fp32, bf16, found 'fp16'"},
      {"train:\n  device: [cpu]\n",
       "train.device: expected one of auto, cpu, cuda, found a list '[cpu]'"},
  };
  for (const Case& c : cases) {
    std::string message = usage_error([&] { parse_config(c.yaml, "x.yaml"); });
    EXPECT_NE(message.find(c.expected), std::string::npos) << c.yaml << " -> " << message;
  }
}

// A run-wide choice is honoured by every family or refused for it at config time, naming the
// family and the key: the vocoders train in fp32 only; Tacotron-2 takes bf16.
TEST(Config, APrecisionAFamilyCannotTrainInIsRefusedNamingTheFamilyAndTheKey) {
  for (const char* config : {"hifigan_small.yaml", "wavenet_small.yaml"}) {
    std::string message =
        usage_error([&] { load_config(config_path(config), {"train.precision=bf16"}); });
    EXPECT_NE(message.find("train.precision"), std::string::npos) << config << ": " << message;
    EXPECT_NE(message.find("model.kind"), std::string::npos) << config << ": " << message;
    EXPECT_NE(message.find("fp32 only"), std::string::npos) << config << ": " << message;
    EXPECT_NO_THROW(load_config(config_path(config), {"train.precision=fp32"})) << config;
  }
  EXPECT_EQ(load_config(config_path("tiny.yaml"), {"train.precision=bf16"}).train.precision,
            tts::config::Precision::kBf16);
}

// Numbers that size memory have ceilings no real setup reaches; a broken rule names the file and
// the line that set the key (or the --set), and why the ceiling is where it is.
TEST(Config, CeilingsNameTheFileTheLineAndTheKey) {
  struct Case {
    const char* yaml;
    const char* expected;
  };
  const Case cases[] = {
      {"audio:\n  n_fft: 1073741824\n  win_length: 1024\n",
       "x.yaml line 2: config: audio.n_fft = 1073741824: must be at most 65536 (speech uses 256 to "
       "2048 samples; the number sizes memory)"},
      {"audio:\n  sample_rate: 22050\n  n_mels: 100000\n",
       "x.yaml line 3: config: audio.n_mels = 100000: must be at most 1024"},
      {"model:\n  decoder_rnn_dim: 11000\n",
       "x.yaml line 2: config: model.decoder_rnn_dim = 11000: must be at most 8192 (NVIDIA's "
       "widest "
       "layers have 1024 units"},
      {"model:\n  n_frames_per_step: 2147483647\n",
       "x.yaml line 2: config: model.n_frames_per_step = 2147483647: must be at most 32"},
      {"model:\n  postnet_kernel_size: 1001\n",
       "model.postnet_kernel_size = 1001: must be at most 255"},
      {"model:\n  postnet_n_convolutions: 100\n", "model.postnet_n_convolutions = 100"},
      {"model:\n  max_decoder_steps: 1000000000\n", "model.max_decoder_steps = 1000000000"},
      {"train:\n  batch_size: 1000000\n", "x.yaml line 2: config: train.batch_size = 1000000"},
      {"train:\n  r_schedule: [[0, 1000, 8]]\n",
       "x.yaml line 2: config: train.r_schedule = row 0 [0, 1000, 8]: r must be at most 32"},
      {"data:\n  max_frames: 2000000000\n", "data.max_frames = 2000000000"},
      {"data:\n  prefetch_batches: 100000\n", "data.prefetch_batches = 100000"},
      {"distributed:\n  bucket_mb: 1000000\n", "distributed.bucket_mb = 1000000"},
  };
  for (const Case& c : cases) {
    std::string message = usage_error([&] { parse_config(c.yaml, "x.yaml"); });
    EXPECT_NE(message.find(c.expected), std::string::npos) << c.yaml << " -> " << message;
  }
  std::string message = usage_error([] { parse_config("", "x.yaml", {"audio.n_mels=5000"}); });
  EXPECT_NE(message.find("--set audio.n_mels=5000: config: audio.n_mels = 5000"), std::string::npos)
      << message;
  // A rule broken by a default names the file.
  message = usage_error([] { parse_config("audio:\n  sample_rate: 8000\n", "x.yaml"); });
  EXPECT_NE(message.find("x.yaml: config: audio.fmax = 8000"), std::string::npos) << message;
}

TEST(Config, OverridesApplyInOrderAndAreValidated) {
  Config config = parse_config("train:\n  batch_size: 16\n", "x.yaml",
                               {"train.batch_size=32", "audio.fmax=7600",
                                "text.cleaners=[basic_cleaners]", "train.batch_size=48"});
  EXPECT_EQ(config.train.batch_size, 48);
  EXPECT_DOUBLE_EQ(config.audio.fmax, 7600.0);
  EXPECT_EQ(config.text.cleaners, std::vector{tts::config::Cleaner::kBasic});

  std::string message = usage_error([] { parse_config("", "x", {"train.batch_sise=4"}); });
  EXPECT_NE(message.find("--set train.batch_sise=4: train.batch_sise: unknown key; did you mean "
                         "train.batch_size?"),
            std::string::npos)
      << message;
  message = usage_error([] { parse_config("", "x", {"audio.fmax=20000"}); });
  EXPECT_NE(message.find("audio.fmax = 20000"), std::string::npos) << message;
  message = usage_error([] { parse_config("", "x", {"batch_size=4"}); });
  EXPECT_NE(message.find("expected section.key=value"), std::string::npos) << message;
  message = usage_error([] { parse_config("", "x", {"train.batch_size=abc"}); });
  EXPECT_NE(message.find("expected an integer, found 'abc'"), std::string::npos) << message;
}

TEST(Config, MissingFileSaysWhichAndWhatToPass) {
  std::string message = usage_error([] { load_config("/nonexistent/c.yaml"); });
  EXPECT_NE(message.find("cannot read config file '/nonexistent/c.yaml'"), std::string::npos)
      << message;
}

TEST(Config, FingerprintIgnoresLoggingAndSeesEverythingElse) {
  Config a;
  Config b;
  b.logging.level = LogLevel::kDebug;
  EXPECT_EQ(tts::config::fingerprint(a), tts::config::fingerprint(b));
  b.train.batch_size = 3;
  EXPECT_NE(tts::config::fingerprint(a), tts::config::fingerprint(b));
  EXPECT_EQ(tts::config::fingerprint(a).size(), 16u);
}

TEST(Config, DumpSectionsWritesOnlyThoseAndReadsBack) {
  Config config = parse_config("", "x", {"audio.n_fft=2048", "text.unknown=error"});
  std::string text = tts::config::dump_sections(config, {"audio", "text"});
  EXPECT_EQ(text.find("train:"), std::string::npos);
  Config reloaded = parse_config(text, "features.yaml");
  EXPECT_EQ(reloaded.audio.n_fft, 2048);
  EXPECT_EQ(reloaded.text.unknown, UnknownCharacters::kError);
}

namespace {

// Every choice field of the config, by "section.key", with each of its names: what a config file
// may hold there.
struct ChoiceLister {
  std::string current;
  std::vector<std::pair<std::string, std::vector<std::string>>> fields;

  template <class Options>
  void section(const char* name, Options& options) {
    current = name;
    options.visit(*this);
  }
  template <class T>
  void operator()(const char* key, T&, const char*) {
    if constexpr (tts::config::is_choice_v<T>) {
      fields.emplace_back(current + "." + key, tts::config::choice_names<T>());
    }
  }
};

}  // namespace

TEST(Config, EveryNameOfEveryChoiceReadsBackAsItselfThroughADump) {
  ChoiceLister lister;
  Config defaults;
  defaults.visit_sections(lister);
  ASSERT_GE(lister.fields.size(),
            19u);  // audio 6, text 3, data 1, model 1, train 6, distributed 1, logging 1
  for (const auto& [key, names] : lister.fields) {
    ASSERT_GE(names.size(), 1u) << key;
    for (const std::string& name : names) {
      // Choices that need another: phonemes are read with the IPA table, and only they.
      std::vector<std::string> overrides{key + "=" + name};
      if (key + "=" + name == "text.frontend=phonemes") overrides.push_back("text.symbol_set=ipa");
      if (key + "=" + name == "text.symbol_set=ipa") overrides.push_back("text.frontend=phonemes");
      // HiFi-GAN's second residual block takes two dilations per block.
      if (key + "=" + name == "hifigan.resblock=2") {
        overrides.push_back("hifigan.resblock_dilation_sizes=[[1, 3], [1, 3], [1, 3]]");
      }
      // A vocoder trains on waveforms the store keeps.
      if (key == "model.kind" && name != "tacotron2") overrides.push_back("audio.waveforms=true");
      Config config = parse_config("", "x", overrides);
      Config reloaded = parse_config(dump_config(config), "dump.yaml");
      EXPECT_TRUE(reloaded == config) << key << "=" << name;
      EXPECT_NE(dump_config(reloaded).find(key.substr(key.find('.') + 1) + ": " + name),
                std::string::npos)
          << key << "=" << name;
    }
    // A name of no choice is refused with every allowed one, at the override that gave it.
    std::string message = usage_error([&] { parse_config("", "x", {key + "=nonsense"}); });
    std::string expected = key + ": expected one of " + names[0];
    for (std::size_t i = 1; i < names.size(); ++i) expected += ", " + names[i];
    EXPECT_NE(message.find(expected), std::string::npos) << message;
    EXPECT_NE(message.find("found 'nonsense'"), std::string::npos) << message;
  }
}

TEST(Config, AChoicePrintsAsItsName) {
  EXPECT_EQ(fmt::format("{}", tts::config::Precision::kBf16), "bf16");
  EXPECT_EQ(tts::config::choice_name(tts::config::Backend::kAuto), "auto");
  std::ostringstream out;
  out << tts::config::LossNormalization::kPaddedBatch;
  EXPECT_EQ(out.str(), "padded_batch");
  EXPECT_EQ(tts::config::parse_choice<tts::config::Device>("cuda"), tts::config::Device::kCuda);
  EXPECT_EQ(tts::config::parse_choice<tts::config::Device>("gpu"), std::nullopt);
  EXPECT_THROW(tts::config::require_choice<tts::config::Backend>("mpi", "--backend"), UsageError);
}

// train.length_buckets and train.cuda_graphs: a graph replays one batch shape, on a CUDA device,
// one micro-batch a step; each refusal names the key, what it needs and the fix.
TEST(Config, CudaGraphsNeedLengthBucketsACudaDeviceAndOneMicroBatch) {
  Config plain = parse_config("", "x.yaml");
  EXPECT_EQ(plain.train.length_buckets, 0);
  EXPECT_FALSE(plain.train.cuda_graphs);
  EXPECT_EQ(parse_config("", "x.yaml", {"train.length_buckets=8"}).train.length_buckets, 8);
  EXPECT_NO_THROW(parse_config("", "x.yaml", {"train.length_buckets=8", "train.cuda_graphs=true"}));
  struct Case {
    std::vector<std::string> overrides;
    const char* expected;
  };
  const Case cases[] = {
      {{"train.length_buckets=-1"}, "train.length_buckets = -1: must be >= 0"},
      {{"train.length_buckets=65"}, "train.length_buckets = 65: must be at most 64"},
      {{"train.cuda_graphs=true"},
       "train.cuda_graphs = true: a CUDA graph replays one batch shape: set "
       "train.length_buckets (e.g. 8) as well, or train.cuda_graphs: false"},
      {{"train.cuda_graphs=true", "train.length_buckets=4", "train.device=cpu"},
       "train.cuda_graphs = true: CUDA graphs run on a CUDA device: set train.device: cuda"},
      {{"train.cuda_graphs=true", "train.length_buckets=4", "train.accumulate=2"},
       "but train.accumulate is 2: set train.accumulate: 1"},
  };
  for (const Case& c : cases) {
    std::string message = usage_error([&] { parse_config("", "x.yaml", c.overrides); });
    EXPECT_NE(message.find(c.expected), std::string::npos) << message;
  }
}

// Tacotron-2's own settings moved from section train to its section model; configs and
// checkpoints written before name them the old way, which still sets the new key, with a warning
// that names both.
TEST(Config, MovedKeysSetTheirNewPlaceWithAWarning) {
  auto sink = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(16);
  auto logger = tts::log::get("config");
  logger->sinks().push_back(sink);
  Config config =
      parse_config("train:\n  step_products: gemm\n", "old.yaml", {"train.decoder_step=composed"});
  logger->sinks().pop_back();
  EXPECT_EQ(config.model.recurrent_products, tts::config::RecurrentProducts::kGemm);
  EXPECT_EQ(config.model.decoder_step, tts::config::DecoderStep::kComposed);
  const std::vector<std::string> lines = sink->last_formatted();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[0].find("old.yaml line 2: train.step_products has moved to "
                          "model.recurrent_products"),
            std::string::npos)
      << lines[0];
  EXPECT_NE(lines[1].find("--set train.decoder_step=composed: train.decoder_step has moved to "
                          "model.decoder_step"),
            std::string::npos)
      << lines[1];
  // The new keys are where a dump writes them, and the old ones are not keys of their own.
  const std::string dumped = dump_config(config);
  EXPECT_NE(dumped.find("recurrent_products: gemm"), std::string::npos);
  EXPECT_EQ(dumped.find("step_products"), std::string::npos);
  EXPECT_EQ(parse_config(dumped, "dumped"), config);
}

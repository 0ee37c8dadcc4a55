// read_audio (libsndfile, our bounds, soxr) on arbitrary bytes, resampled to 22050 Hz and mixed to
// mono (seeds: the WAV files of tests/data).
#include "fuzz_input.h"
#include "tts/audio/audio_io.h"
#include "tts/core/logging.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool quiet = [] {
    tts::log::get("audio")->set_level(spdlog::level::off);
    return true;
  }();
  (void)quiet;
  std::string path = tts::fuzz::write_input(data, size, ".wav");
  tts::config::AudioOptions options;
  options.channels = tts::config::Channels::kMix;
  tts::fuzz::expect_success_or_error([&] { tts::audio::read_audio(path, options); });
  return 0;
}

// Reading and writing audio: scaling conventions, channels, resampling, WAV round trip, and the
// bad files preprocessing meets in real corpora (each must be a tts::Error naming the file).
#include <gtest/gtest.h>
#include <sndfile.h>
#include <sys/stat.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <thread>

#include "audio_test_util.h"
#include "tts/audio/audio_io.h"
#include "tts/audio/audio_processor.h"
#include "tts/core/error.h"
#include "tts/core/fs.h"

namespace tts::audio {
namespace {

using testing::tmp_path;

// Writes interleaved float samples with libsndfile in `format` (e.g. SF_FORMAT_PCM_24) inside
// `container` (WAV unless told).
void write_with_sndfile(const std::string& path, const std::vector<float>& interleaved,
                        int channels, int rate, int format, int container = SF_FORMAT_WAV) {
  SF_INFO info{};
  info.samplerate = rate;
  info.channels = channels;
  info.format = container | format;
  SNDFILE* file = sf_open(path.c_str(), SFM_WRITE, &info);
  ASSERT_NE(file, nullptr) << sf_strerror(nullptr);
  sf_command(file, SFC_SET_NORM_FLOAT, nullptr, SF_TRUE);
  sf_writef_float(file, interleaved.data(), static_cast<sf_count_t>(interleaved.size() / channels));
  sf_close(file);
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// Expects `f` to throw tts::Error whose message names `path`.
template <class F>
void expect_error_naming(const std::string& path, F f, const std::string& also = "") {
  try {
    f();
    ADD_FAILURE() << path << ": expected tts::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    if (!also.empty()) {
      EXPECT_NE(std::string(e.what()).find(also), std::string::npos) << e.what();
    }
  }
}

TEST(AudioIo, WavRoundTripIsExactOnThe16BitGrid) {
  std::vector<float> x = {0.f, 0.5f, -1.f, 32767.f / 32768.f, -1.f / 32768.f, 0.25f};
  const std::string path = tmp_path("round_trip.wav");
  write_wav(path, x, 22050);
  int rate = 0;
  EXPECT_EQ(read_audio(path, config::AudioOptions{}, &rate), x);
  EXPECT_EQ(rate, 22050);
  // Out-of-range values clip rather than wrap.
  write_wav(path, {1.5f, -2.f}, 22050);
  EXPECT_EQ(read_audio(path, config::AudioOptions{}),
            (std::vector<float>{32767.f / 32768.f, -1.f}));
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp." + std::to_string(getpid())));
}

// What write_wav clips is counted: past the 16-bit grid's ends, not at them (-1 and
// 32767/32768 are exact), so `vocode` can say how much of its audio clipped.
TEST(AudioIo, ClippedSamplesAreThoseWriteWavClips) {
  EXPECT_EQ(clipped_samples({0.f, -1.f, 32767.f / 32768.f, 0.99f}), 0u);
  EXPECT_EQ(clipped_samples({1.f, 1.5f, -1.001f, 0.5f}), 3u);
  EXPECT_EQ(clipped_samples({}), 0u);
}

TEST(AudioIo, WiderFormatsScaleLikeInt16) {
  const std::vector<float> x = {0.5f, -0.25f, 0.125f, -1.f};
  for (int format : {SF_FORMAT_PCM_24, SF_FORMAT_PCM_32, SF_FORMAT_FLOAT}) {
    const std::string path = tmp_path("format.wav");
    write_with_sndfile(path, x, 1, 22050, format);
    std::vector<float> y = read_audio(path, config::AudioOptions{});
    ASSERT_EQ(y.size(), x.size());
    for (size_t i = 0; i < x.size(); ++i) EXPECT_FLOAT_EQ(y[i], x[i]) << format;
  }
}

TEST(AudioIo, ChannelsAreMixedPickedOrRefused) {
  const std::string path = tmp_path("stereo.wav");
  write_with_sndfile(path, {0.5f, 0.25f, -0.5f, 0.f}, 2, 22050, SF_FORMAT_PCM_16);
  config::AudioOptions options;
  options.channels = config::Channels::kMix;
  EXPECT_EQ(read_audio(path, options), (std::vector<float>{0.375f, -0.25f}));
  options.channels = config::Channels::kFirst;
  EXPECT_EQ(read_audio(path, options), (std::vector<float>{0.5f, -0.5f}));
  options.channels = config::Channels::kError;
  expect_error_naming(
      path, [&] { read_audio(path, options); }, "2 channels");
}

TEST(AudioIo, OtherRatesAreResampled) {
  const std::string path = tmp_path("44k.wav");
  write_wav(path, testing::sine(440.0, 1.0, 44100, 0.5), 44100);
  int rate = 0;
  std::vector<float> y = read_audio(path, config::AudioOptions{}, &rate);
  EXPECT_EQ(rate, 44100);
  EXPECT_NEAR(static_cast<double>(y.size()), 22050.0, 1.0);
  // Away from the edges the result is the same sine sampled at 22050 Hz.
  std::vector<float> want = testing::sine(440.0, 1.0, 22050, 0.5);
  double error = 0;
  for (size_t i = 1000; i < 21000; ++i) error = std::max(error, double(std::abs(y[i] - want[i])));
  EXPECT_LT(error, 1e-3);
}

TEST(AudioIo, BadFilesAreErrorsNamingTheFile) {
  config::AudioOptions options;
  const std::string empty = tmp_path("empty.wav");
  write_bytes(empty, "");
  expect_error_naming(empty, [&] { read_audio(empty, options); });

  std::string header;
  {
    const std::string good = tmp_path("good.wav");
    write_wav(good, testing::sine(440.0, 0.1, 22050, 0.5), 22050);
    std::ifstream in(good, std::ios::binary);
    header.assign(std::istreambuf_iterator<char>(in), {});
  }
  const std::string truncated = tmp_path("truncated_header.wav");
  write_bytes(truncated, header.substr(0, 20));
  expect_error_naming(truncated, [&] { read_audio(truncated, options); });

  const std::string zero_length = tmp_path("zero_length.wav");
  write_wav(zero_length, {}, 22050);
  expect_error_naming(
      zero_length, [&] { read_audio(zero_length, options); }, "no samples");

  const std::string text = tmp_path("not_audio.wav");
  write_bytes(text,
              "LJ001-0001|Printing, in the only sense with which we are at present concerned");
  expect_error_naming(text, [&] { read_audio(text, options); });

  const std::string directory = tmp_path("a_directory.wav");
  std::filesystem::create_directories(directory);
  expect_error_naming(
      directory, [&] { read_audio(directory, options); }, "directory");

  const std::string missing = tmp_path("missing.wav");
  expect_error_naming(
      missing, [&] { read_audio(missing, options); }, "no such");

  const std::string nan = tmp_path("nan.wav");
  write_with_sndfile(nan, {0.1f, std::numeric_limits<float>::quiet_NaN(), 0.2f}, 1, 22050,
                     SF_FORMAT_FLOAT);
  expect_error_naming(
      nan, [&] { read_audio(nan, options); }, "nan");
  const std::string inf = tmp_path("inf.wav");
  write_with_sndfile(inf, {0.1f, std::numeric_limits<float>::infinity(), 0.2f}, 1, 22050,
                     SF_FORMAT_FLOAT);
  expect_error_naming(
      inf, [&] { read_audio(inf, options); }, "inf");

  AudioProcessor processor(options);
  const std::string silence = tmp_path("silence.wav");
  write_wav(silence, std::vector<float>(22050, 0.f), 22050);
  expect_error_naming(
      silence, [&] { processor.compute_file(silence, false); }, "all silence");
  const std::string tiny = tmp_path("tiny.wav");
  write_wav(tiny, testing::sine(440.0, 0.01, 22050, 0.5), 22050);
  expect_error_naming(
      tiny, [&] { processor.compute_file(tiny, false); }, "shorter than one frame");
  expect_error_naming(empty, [&] { processor.compute_file(empty, false); });
}

// Files libsndfile refuses, read in one thread while another writes files: the reader must never
// close a descriptor that is not its own (Note [libsndfile never holds a descriptor]). With
// sf_open_fd, libsndfile closed the refused file's descriptor and its owner closed the number
// again, closing the writer's temporary under it ("Bad file descriptor").
TEST(AudioIo, RefusedFilesCloseNoDescriptorOfAnotherThread) {
  config::AudioOptions options;
  const std::string garbage = tmp_path("garbage_for_threads.wav");
  write_bytes(garbage, "this is not a wav file at all");
  const std::string written = tmp_path("written_by_a_thread.bin");
  const std::string bytes(4096, 'x');
  std::atomic<bool> stop{false};
  std::atomic<int> refused{0};
  std::thread reader([&] {
    while (!stop) {
      try {
        read_audio(garbage, options);
      } catch (const Error&) {
        ++refused;
      }
    }
  });
  int writes = 0;
  std::string failure;
  for (; writes < 2000 && failure.empty(); ++writes) {
    try {
      write_file_atomic(written, bytes);
      if (read_file(written) != bytes) failure = "the file read back differs";
    } catch (const Error& e) {
      failure = e.what();
    }
  }
  stop = true;
  reader.join();
  EXPECT_EQ(failure, "") << "after " << writes << " writes and " << refused << " refused reads";
  EXPECT_GT(refused, 0);
  // Sounds libsndfile accepts still read and write through the same path.
  const std::string good = tmp_path("good_after_threads.wav");
  write_wav(good, {0.25f, -0.5f}, 22050);
  EXPECT_EQ(read_audio(good, options), (std::vector<float>{0.25f, -0.5f}));
}

// FLAC reports a PCM subtype: the check that an uncompressed file holds its samples goes by the
// container, so FLAC reads (its samples exactly the WAV's) and Vorbis reads (closely).
TEST(AudioIo, FlacAndVorbisReadLikeTheirWav) {
  config::AudioOptions options;
  const std::vector<float> sine = testing::sine(440.0, 0.5, 22050, 0.5);
  const std::string wav = tmp_path("same.wav");
  const std::string flac = tmp_path("same.flac");
  const std::string ogg = tmp_path("same.ogg");
  write_with_sndfile(wav, sine, 1, 22050, SF_FORMAT_PCM_16);
  write_with_sndfile(flac, sine, 1, 22050, SF_FORMAT_PCM_16, SF_FORMAT_FLAC);
  write_with_sndfile(ogg, sine, 1, 22050, SF_FORMAT_VORBIS, SF_FORMAT_OGG);
  const std::vector<float> from_wav = read_audio(wav, options);
  EXPECT_EQ(read_audio(flac, options), from_wav);
  const std::vector<float> from_ogg = read_audio(ogg, options);
  ASSERT_EQ(from_ogg.size(), from_wav.size());
  double error = 0;
  double energy = 0;
  for (size_t i = 0; i < from_wav.size(); ++i) {
    error += (from_ogg[i] - from_wav[i]) * (from_ogg[i] - from_wav[i]);
    energy += from_wav[i] * from_wav[i];
  }
  EXPECT_LT(std::sqrt(error / energy), 0.1) << "Vorbis is lossy but close";
}

// 8 channels x 48 kHz x 76 s of FLAC silence (a few KB) would decode to 29.2 million samples,
// past the 28.8 million (600 s of 48 kHz mono) a clip may hold: refused before decoding.
TEST(AudioIo, DecodedSamplesHaveACeiling) {
  const std::string path = tmp_path("long_silence.flac");
  SF_INFO info{};
  info.samplerate = 48000;
  info.channels = 8;
  info.format = SF_FORMAT_FLAC | SF_FORMAT_PCM_16;
  SNDFILE* file = sf_open(path.c_str(), SFM_WRITE, &info);
  ASSERT_NE(file, nullptr) << sf_strerror(nullptr);
  const std::vector<short> second(48000 * 8, 0);
  for (int s = 0; s < 76; ++s) sf_writef_short(file, second.data(), 48000);
  sf_close(file);
  config::AudioOptions options;
  options.channels = config::Channels::kMix;
  expect_error_naming(
      path, [&] { read_audio(path, options); }, "28800000");
}

TEST(AudioIo, AFifoIsRefusedWithoutWaiting) {
  const std::string path = tmp_path("pipe.wav");
  std::filesystem::remove(path);
  ASSERT_EQ(::mkfifo(path.c_str(), 0644), 0);
  expect_error_naming(
      path, [&] { read_audio(path, config::AudioOptions{}); }, "FIFO");
}

TEST(AudioProcessor, RejectsNonFiniteSamples) {
  AudioProcessor processor{config::AudioOptions{}};
  std::vector<float> y = testing::sine(440.0, 0.5, 22050, 0.5);
  y[100] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_THROW(processor.compute(y, false), Error);
  y[100] = -std::numeric_limits<float>::infinity();
  EXPECT_THROW(processor.compute(y, false), Error);
}

}  // namespace
}  // namespace tts::audio

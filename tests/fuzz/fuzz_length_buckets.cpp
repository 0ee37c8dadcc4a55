// A run folder's length_buckets.txt for LengthBuckets::read (seeds: ladders as format() writes
// them, from make_length_buckets). A ladder it accepts must hold what parse() promises and read
// back through format() unchanged; one that does not aborts.
#include <cstdlib>

#include "fuzz_input.h"
#include "tts/data/length_buckets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = tts::fuzz::write_input(data, size, "-length_buckets.txt");
  tts::fuzz::expect_success_or_error([&] {
    using tts::data::LengthBuckets;
    const LengthBuckets ladder = LengthBuckets::read(path);
    if (ladder.empty() || ladder.size() > tts::config::kMaxLengthBuckets ||
        ladder.text.size() != ladder.frames.size()) {
      std::abort();
    }
    for (int i = 0; i < ladder.size(); ++i) {
      if (ladder.text[i] < 1 || ladder.frames[i] % ladder.frame_multiple != 0 ||
          ladder.frames[i] > tts::data::kMaxLengthBucketValue ||
          (i > 0 &&
           (ladder.frames[i] <= ladder.frames[i - 1] || ladder.text[i] < ladder.text[i - 1]))) {
        std::abort();
      }
    }
    if (LengthBuckets::parse(ladder.format(), path) != ladder) std::abort();
  });
  return 0;
}

#include "tts/config/data_options.h"

#include <cmath>

namespace tts::config {

void DataOptions::validate() const {
  require(
      speaker.find_first_of("/\\\t\n\r ") == std::string::npos && speaker != "." && speaker != "..",
      "data.speaker", speaker, "must be a name without '/', '\\', spaces or tabs");
  require(!csv_file.empty() && csv_file.find("..") == std::string::npos && csv_file[0] != '/',
          "data.csv_file", csv_file, "must be a file inside the corpus folder");
  require(csv_delimiter.size() == 1 && csv_delimiter != "\n" && csv_delimiter != "\r",
          "data.csv_delimiter", csv_delimiter, "must be one character, not a line break");
  int paths = 0;
  int texts = 0;
  int speakers = 0;
  int ids = 0;
  for (const std::string& column : csv_columns) {
    require(column == "path" || column == "text" || column == "speaker" || column == "id" ||
                column == "ignore",
            "data.csv_columns", column, "each column is one of path, text, speaker, id, ignore");
    paths += column == "path";
    texts += column == "text";
    speakers += column == "speaker";
    ids += column == "id";
  }
  require(paths == 1 && texts == 1 && speakers <= 1 && ids <= 1, "data.csv_columns",
          fmt::format("{}", fmt::join(csv_columns, ", ")),
          "must name path and text once each, speaker and id at most once");
  require(min_speaker_minutes >= 0, "data.min_speaker_minutes", min_speaker_minutes,
          "must be >= 0");
  require(val_size >= 0 && (val_size < 1 || std::floor(val_size) == val_size), "data.val_size",
          val_size, "must be a fraction in [0, 1) or a whole number of utterances");
  require(max_seconds > 0, "data.max_seconds", max_seconds, "must be > 0");
  require_at_most("data.max_seconds", max_seconds, kMaxUtteranceSeconds,
                  "the audio reader's clip limit");
  require(max_skip_fraction >= 0 && max_skip_fraction <= 1, "data.max_skip_fraction",
          max_skip_fraction, "must be in [0, 1]");
  require(max_frames >= 0, "data.max_frames", max_frames, "must be >= 0 (0 = no limit)");
  require_at_most("data.max_frames", max_frames, kMaxUtteranceFrames,
                  "600 s of audio are about 52,000 frames");
  require(num_workers >= 0, "data.num_workers", num_workers,
          "must be >= 0 (0 loads on the training thread)");
  require_at_most("data.num_workers", num_workers, kMaxLoaderWorkers, "one or two per core");
  require(prefetch_batches >= 1, "data.prefetch_batches", prefetch_batches, "must be at least 1");
  require_at_most("data.prefetch_batches", prefetch_batches, kMaxPrefetchBatches, "4 by default");
  require(sort_pool_batches >= 1, "data.sort_pool_batches", sort_pool_batches,
          "must be at least 1");
  require_at_most("data.sort_pool_batches", sort_pool_batches, kMaxSortPoolBatches,
                  "32 by default");
}

}  // namespace tts::config

// Phonemization with libespeak-ng in process: utterances per second on one thread, and how the
// model's phoneme text (phonemize: cut at punctuation, marks kept) compares with espeak-ng's
// clauses of the whole line (clauses: what `espeak-ng -q --ipa` prints) once the punctuation is
// taken out.
//
//   bench_phonemes TRANSCRIPTS [VOICE]
//   TRANSCRIPTS: lines ID|text (LJSpeech's metadata: the last field is the text), cleaned with
//   english_cleaners_corrected first. VOICE: espeak-ng voice (default en-us).
#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "tts/core/timer.h"
#include "tts/text/cleaners.h"
#include "tts/text/phonemizer.h"

namespace {

// `ipa` without the punctuation phonemize() keeps, words separated by one space.
std::string words_only(const std::string& ipa) {
  std::string out;
  for (char c : ipa) {
    if (std::string(",;:.!?-").find(c) != std::string::npos) c = ' ';
    if (c == ' ' && (out.empty() || out.back() == ' ')) continue;
    out += c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s TRANSCRIPTS [VOICE]\n", argv[0]);
    return 2;
  }
  std::ifstream in(argv[1]);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    auto bar = line.rfind('|');
    if (bar != std::string::npos)
      lines.push_back(tts::text::english_cleaners_corrected(line.substr(bar + 1)));
  }
  tts::text::Phonemizer phonemizer(argc > 2 ? argv[2] : "en-us");
  tts::Stopwatch clock;
  std::vector<std::string> ipa;
  for (const std::string& line : lines) ipa.push_back(phonemizer.phonemize(line));
  const double seconds = clock.seconds();
  size_t differ = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string whole;
    for (const std::string& clause : phonemizer.clauses(lines[i])) whole += clause + " ";
    if (words_only(ipa[i]) != words_only(whole)) {
      if (differ++ < 5) {
        std::printf("differs: %s\n  phonemize: %s\n  clauses:   %s\n", lines[i].c_str(),
                    words_only(ipa[i]).c_str(), words_only(whole).c_str());
      }
    }
  }
  std::printf(
      "{\"utterances\": %zu, \"seconds\": %.3f, \"utterances_per_s\": %.1f, "
      "\"differ_from_whole_line\": %zu, \"version\": \"%s\"}\n",
      lines.size(), seconds, static_cast<double>(lines.size()) / seconds, differ,
      tts::text::Phonemizer::version().c_str());
  return 0;
}

#include "tts/eval/cer.h"

#include <algorithm>

#include "tts/core/error.h"

namespace tts::eval {
namespace {

// One code point of UTF-8 from `text` at `i` (advanced); a malformed byte is returned alone as
// 0xDC00 + byte (a lone surrogate, which no valid text holds).
char32_t next_code_point(std::string_view text, size_t& i) {
  const auto lead = static_cast<unsigned char>(text[i]);
  if (lead < 0x80) {
    ++i;
    return lead;
  }
  const int extra = (lead >> 5) == 0x6 ? 1 : (lead >> 4) == 0xE ? 2 : (lead >> 3) == 0x1E ? 3 : -1;
  if (extra < 0 || i + extra >= text.size()) {
    ++i;
    return 0xDC00 + lead;
  }
  char32_t cp = lead & (0x3F >> extra);
  for (int k = 1; k <= extra; ++k) {
    const auto byte = static_cast<unsigned char>(text[i + k]);
    if ((byte & 0xC0) != 0x80) {
      ++i;
      return 0xDC00 + lead;
    }
    cp = (cp << 6) | (byte & 0x3F);
  }
  i += extra + 1;
  return cp;
}

bool is_punctuation(char32_t c) {
  if (c < 0x80) {
    return (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) ||
           (c >= 0x7B && c <= 0x7E);
  }
  static constexpr char32_t kMarks[] = {0x2018, 0x2019, 0x201C, 0x201D, 0x00AB, 0x00BB,
                                        0x2013, 0x2014, 0x2026, 0x00A1, 0x00BF};
  return std::find(std::begin(kMarks), std::end(kMarks), c) != std::end(kMarks);
}

bool is_space(char32_t c) { return c == ' ' || (c >= 0x09 && c <= 0x0D); }

}  // namespace

std::vector<char32_t> normalize_for_cer(std::string_view text) {
  std::vector<char32_t> out;
  bool pending_space = false;
  for (size_t i = 0; i < text.size();) {
    char32_t c = next_code_point(text, i);
    if (is_punctuation(c)) continue;
    if (is_space(c)) {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) out.push_back(U' ');
    pending_space = false;
    if (c >= 'A' && c <= 'Z') c = c - 'A' + 'a';
    out.push_back(c);
  }
  return out;
}

int64_t levenshtein(const std::vector<char32_t>& a, const std::vector<char32_t>& b) {
  std::vector<int64_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = static_cast<int64_t>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    int64_t diagonal = row[0];
    row[0] = static_cast<int64_t>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      const int64_t above = row[j];
      row[j] = std::min({above + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

CerResult character_error_rate(std::string_view reference, std::string_view hypothesis,
                               const std::string& what) {
  const std::vector<char32_t> ref = normalize_for_cer(reference);
  TTS_CHECK(!ref.empty(),
            "{}: the text is empty once normalized (lowercase, no punctuation), so its character "
            "error rate is undefined: give it words or leave the utterance out of --text",
            what);
  CerResult result;
  result.edits = levenshtein(ref, normalize_for_cer(hypothesis));
  result.reference_chars = static_cast<int64_t>(ref.size());
  result.cer = static_cast<double>(result.edits) / static_cast<double>(result.reference_chars);
  return result;
}

}  // namespace tts::eval

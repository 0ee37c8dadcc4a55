#include "tts/eval/dtw.h"

#include <limits>
#include <string>

#include "tts/core/error.h"

namespace tts::eval {

std::vector<std::pair<int64_t, int64_t>> dtw_path(
    int64_t n, int64_t m, const std::function<double(int64_t, int64_t)>& cost,
    const std::string& what) {
  TTS_CHECK(n > 0 && m > 0, "{}: cannot align an empty sequence ({} and {} frames)", what, n, m);
  TTS_CHECK(n <= kMaxDtwCells / m,
            "{}: {} x {} frames is more than the {} cells one alignment may take: evaluate "
            "shorter utterances (split the clips)",
            what, n, m, kMaxDtwCells);
  constexpr double kInf = std::numeric_limits<double>::infinity();
  // steps[i * m + j]: 0 diagonal, 1 from (i, j-1), 2 from (i-1, j).
  std::vector<uint8_t> steps(static_cast<size_t>(n * m), 0);
  std::vector<double> previous(static_cast<size_t>(m), kInf);
  std::vector<double> current(static_cast<size_t>(m), kInf);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < m; ++j) {
      const double local = cost(i, j);
      if (i == 0 && j == 0) {
        current[0] = local;
        continue;
      }
      double best = kInf;
      uint8_t step = 0;
      if (i > 0 && j > 0 && previous[j - 1] + local < best) {
        best = previous[j - 1] + local;
        step = 0;
      }
      if (j > 0 && current[j - 1] + local < best) {
        best = current[j - 1] + local;
        step = 1;
      }
      if (i > 0 && previous[j] + local < best) {
        best = previous[j] + local;
        step = 2;
      }
      current[j] = best;
      steps[static_cast<size_t>(i * m + j)] = step;
    }
    std::swap(previous, current);
  }
  std::vector<std::pair<int64_t, int64_t>> path;
  int64_t i = n - 1;
  int64_t j = m - 1;
  path.emplace_back(i, j);
  while (i > 0 || j > 0) {
    const uint8_t step = steps[static_cast<size_t>(i * m + j)];
    if (step == 0) {
      --i;
      --j;
    } else if (step == 1) {
      --j;
    } else {
      --i;
    }
    path.emplace_back(i, j);
  }
  return {path.rbegin(), path.rend()};
}

}  // namespace tts::eval

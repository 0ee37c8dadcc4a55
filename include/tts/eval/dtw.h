// Dynamic time warping of two sequences of frames (docs/evaluate.md), the alignment that MCD, F0
// RMSE and VDE are averaged over.
//
// Step pattern: from (i-1, j-1), (i, j-1) or (i-1, j), each adding the local cost once (unit
// weights, librosa.sequence.dtw's default, "symmetric1"); the path runs from (0, 0) to
// (n-1, m-1) and has between max(n, m) and n + m - 1 pairs. Ties are broken in that order
// (diagonal first), as librosa does, so both find the same path.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace tts::eval {

// The most cells (n x m) one alignment may take: a byte of back-pointers each (about 200 MB);
// two 20-minute clips at 86 frames/s would be 10^10.
constexpr int64_t kMaxDtwCells = int64_t{200} * 1000 * 1000;

// The aligned pairs (i, j), from (0, 0) to (n - 1, m - 1). `cost(i, j)` is the local cost of
// pairing frame i of the first sequence with frame j of the second (>= 0). Throws tts::Error when
// n or m is 0 or n x m exceeds kMaxDtwCells (`what` names the utterance in the message).
std::vector<std::pair<int64_t, int64_t>> dtw_path(
    int64_t n, int64_t m, const std::function<double(int64_t, int64_t)>& cost,
    const std::string& what = "dtw");

}  // namespace tts::eval

#!/usr/bin/env bash
# The new-voice recipe (scripts/new_voice.sh) end to end at toy sizes, reusing a built tts-train:
# it must exit 0 and write a table with a figure in every row it promises; run again, it does
# nothing it has already done. Outside ctest, like tests/quickstart/run.sh.
#   tests/new_voice/run.sh [BUILD_DIR]   (default: build/)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build_dir="$(cd "$root" && realpath -m "${1:-build}")"
work="$(mktemp -d "${TMPDIR:-/tmp}/tts_new_voice.XXXXXX")"
log="$work/new_voice.log"
fail() {
  echo "new-voice test: FAILED: $*" >&2
  echo "new-voice test: the last lines of $log (work kept in $work):" >&2
  tail -n 30 "$log" >&2
  exit 1
}
recipe() {
  MINUTES="1" BASE_STEPS=12 TUNE_STEPS=12 VOC_STEPS=6 VOC_TUNE_STEPS=4 BASE_COUNT=24 HELD_OUT=3 \
    SETUP=0 BUILD_DIR="$build_dir" "$root/scripts/new_voice.sh" "$work/out" >>"$log" 2>&1
}
echo "new-voice test: scripts/new_voice.sh at toy sizes, build $build_dir, work $work"
recipe || fail "the recipe exited with $?"
table="$work/out/table.md"
[ -f "$table" ] || fail "no $table"
# Each row is "| model | vocoder | MCD | ...": every promised pair has a number for MCD.
while IFS= read -r row; do
  line="$(grep -F "| $row |" "$table" || true)"
  [ -n "$line" ] || fail "the table has no row '$row'"
  mcd="$(echo "$line" | awk -F'|' '{gsub(/ /, "", $4); print $4}')"
  [[ "$mcd" =~ ^[0-9]+\.[0-9]+$ ]] || fail "row '$row' has no MCD: $line"
done <<'ROWS'
the base voice's own recordings | -
the new voice's own mels (copy synthesis) | HiFi-GAN, base
base model unchanged | Griffin-Lim
base model unchanged | HiFi-GAN, base
1 min: fine-tuned | Griffin-Lim
1 min: fine-tuned | HiFi-GAN, base
1 min: fine-tuned | HiFi-GAN, fine-tuned on GTA
1 min: from scratch | Griffin-Lim
1 min: NVIDIA's warm start | Griffin-Lim
ROWS
# Each step leaves its mark; a second run redoes none of them (its log says no "train").
marks=$(find "$work/out/.done" -type f | wc -l)
runs_before=$(wc -l <"$work/out/times.tsv")
recipe || fail "the rerun exited with $?"
[ "$(wc -l <"$work/out/times.tsv")" -eq "$runs_before" ] || fail "the rerun trained again"
[ "$(find "$work/out/.done" -type f | wc -l)" -eq "$marks" ] || fail "the rerun added steps"
rm -rf "$work"
echo "new-voice test: passed"

#!/usr/bin/env bash
# The quickstart as a new user runs it, checked: scripts/quickstart.sh with a few training steps
# must exit 0 and end with its summary (alignment scores, then "Done. Look at:") having made the
# run's checkpoint, plots, sample, the synthesized sentence with its plots and the report.
# First, no script of the project pipes into head or grep -q/-m (what made it exit 141). Outside ctest, like
# tests/slurm/run.sh: it runs setup.sh (root, to install what is missing) and builds tts-train.
#   tests/quickstart/run.sh [BUILD_DIR]   (default: build/, reused when already built)
# STEPS (default 4) sets the training length; the work and its log go to a scratch folder that is
# removed on success and kept, and named, on failure.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build_dir="$(cd "$root" && realpath -m "${1:-build}")"
steps="${STEPS:-4}"
# The cause of the quickstart's old exit 141, everywhere: under pipefail, a pipe into a reader that
# stops early (head, grep -q, grep -m) fails whenever the writer gets SIGPIPE. Timing decides, so
# no run is a guard; the pattern is.
early="$(grep -nE '\|[[:space:]]*(head|grep[[:space:]]+(-[a-zA-Z]*[qm]|--quiet|--max-count))' \
  "$root"/scripts/*.sh "$root"/scripts/lib/*.sh "$root"/scripts/*.sbatch "$root"/.ci/run \
  "$root"/tests/*/run.sh | grep -vE '^[^:]+:[0-9]+:[[:space:]]*#' || true)"
if [ -n "$early" ]; then
  echo "quickstart test: FAILED: a pipe into head or grep -q/-m (SIGPIPE under pipefail); read a file or use sed -n instead:" >&2
  echo "$early" >&2
  exit 1
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/tts_quickstart.XXXXXX")"
log="$work/quickstart.log"

fail() {
  echo "quickstart test: FAILED: $*" >&2
  echo "quickstart test: the last lines of $log (work kept in $work):" >&2
  tail -n 30 "$log" >&2
  exit 1
}

echo "quickstart test: scripts/quickstart.sh with STEPS=$steps, build $build_dir, work $work"
set +e
STEPS="$steps" QUICKSTART_DIR="$work/quickstart" BUILD_DIR="$build_dir" \
  "$root/scripts/quickstart.sh" >"$log" 2>&1
rc=$?
set -e
[ "$rc" -eq 0 ] || fail "scripts/quickstart.sh exited with $rc (141: a pipe closed early, SIGPIPE)"

# The summary, in order: the scores of the one validation (at the last step), then the files.
grep -q '^Alignment at each validation' "$log" || fail "no 'Alignment at each validation' summary"
grep -Eq "^  step $steps: diagonal score [0-9.]+, focus rate [0-9.]+$" "$log" ||
  fail "no alignment scores of step $steps in the summary"
# "Done. Look at:" and, after it, only the summary's indented lines.
awk '/^Done\. Look at:$/ { done = 1; next } done && !/^  / { bad = 1 } END { exit !(done && !bad) }' \
  "$log" || fail "the log does not end with the 'Done. Look at:' summary"
for file in run/checkpoints/latest "run/plots/step_${steps}_alignment.png" \
  "run/plots/step_${steps}_mel.png" "run/samples/step_$steps.wav" sample.wav \
  sample.alignment.png sample.mel.png report.html; do
  [ -s "$work/quickstart/$file" ] || fail "the quickstart did not make $file"
done
rm -rf "$work"
echo "quickstart test: passed (exit 0, summary and outputs of a $steps-step run)"

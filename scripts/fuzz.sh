#!/usr/bin/env bash
# Builds and runs the libFuzzer harnesses of tests/fuzz/ (docs/security.md: what each reads).
#   scripts/fuzz.sh NAME SECONDS   fuzz one harness for SECONDS; NAME: npy, torch_file,
#                                  torch_pickle, audio, config, metadata, nvidia_keys,
#                                  features_yaml, report, json, hifigan_config, waveform,
#                                  optimizer_state, length_buckets
#   scripts/fuzz.sh --ci [SECONDS] CI stage: build every harness, replay the regression inputs
#                                  (tests/fuzz/regressions/NAME/ and the hostile files of
#                                  tests/data/untrusted/), then fuzz each from its seeds with a
#                                  fixed seed and number of inputs (repeatable), at most SECONDS
#                                  (default 60)
# The build (clang, ASan + UBSan, only the reader sources each harness needs) goes to build-fuzz/
# (FUZZ_BUILD_DIR overrides), the growing corpus to build-fuzz/corpus/NAME and what crashed to
# build-fuzz/crashes/NAME/: add such a file to tests/fuzz/regressions/NAME/ once it is fixed.
# Exit code 1 when a harness finds or replays a crash.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build_dir="${FUZZ_BUILD_DIR:-$root/build-fuzz}"
names=(npy torch_file torch_pickle audio config metadata nvidia_keys features_yaml report json
  hifigan_config waveform optimizer_state length_buckets)
# Per input: libFuzzer reports a slower or larger run as a finding (a hang, an allocation no input
# of this size justifies).
# Inputs up to 4 MiB: attacks by depth (nested containers, alias chains, megabyte keys) need
# megabytes, which libFuzzer's default (the largest seed, or 4 KiB) never reaches.
limits=(-rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=20 -max_len=4194304)
export LSAN_OPTIONS="suppressions=$root/tests/fuzz/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"

usage() {
  sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

build() {
  local launcher=()
  if command -v ccache >/dev/null 2>&1; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
  local generator=()
  if [ ! -f "$build_dir/CMakeCache.txt" ] && command -v ninja >/dev/null 2>&1; then
    generator=(-G Ninja)
  fi
  cmake -S "$root/tests/fuzz" -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_COMPILER="${FUZZ_CXX:-clang++}" "${launcher[@]}" >/dev/null
  cmake --build "$build_dir" -j "$(nproc)" --target "$@"
}

# Real files of the kind each harness reads, copied into build-fuzz/seeds/NAME.
seeds() {
  local name="$1" dir="$build_dir/seeds/$1"
  rm -rf "$dir"
  mkdir -p "$dir"
  local data="$root/tests/data"
  case "$name" in
    npy)
      find "$data" -name '*.npy' -size -64k -exec cp {} "$dir/" \; ;;
    torch_file)
      cp "$data/nvidia_tacotron2_tiny/checkpoint.pt" "$dir/"
      cp "$data"/untrusted/*.pt "$dir/" ;;
    torch_pickle)
      # data.pkl of each torch.save file (python3's zipfile, or nothing when there is none).
      for file in "$data/nvidia_tacotron2_tiny/checkpoint.pt" "$data"/untrusted/*.pt; do
        python3 - "$file" "$dir/$(basename "$file" .pt).pkl" <<'PY' 2>/dev/null || true
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    name = next(n for n in z.namelist() if n.endswith("data.pkl"))
    open(sys.argv[2], "wb").write(z.read(name))
PY
      done ;;
    audio)
      cp "$data"/audio/*.wav "$data"/untrusted/*.wav "$data"/untrusted/*.flac "$dir/" ;;
    config)
      cp "$root"/configs/*.yaml "$dir/" ;;
    features_yaml)
      # A config holds the audio: and text: sections a features.yaml records.
      cp "$root"/configs/*.yaml "$data"/untrusted/*.yaml "$dir/" ;;
    metadata)
      cp "$data/ljspeech_sample_transcripts.txt" "$dir/metadata.csv" ;;
    json)
      find "$data/vocoders" -name '*.json' -exec cp --backup=numbered {} "$dir/" \; ;;
    hifigan_config)
      for file in "$data"/vocoders/*/hifigan_config.json "$data"/vocoders/step/config.json; do
        cp "$file" "$dir/$(basename "$(dirname "$file")").json"
      done ;;
    waveform)
      find "$data" -name '*.npy' -size -64k -exec cp --backup=numbered {} "$dir/" \; ;;
    optimizer_state)
      # Adam states in the harness's byte format (a sound one, one per check) and a small
      # checkpoint of ours; the hostile checkpoints of tests/data/untrusted.
      python3 "$root/tests/fuzz/optimizer_state_seeds.py" "$dir"
      cp "$data"/untrusted/checkpoint_*.pt "$dir/" ;;
    length_buckets)
      # Ladders as a run records them: one bucket, a few, the most, a large frame multiple.
      printf 'frame_multiple 1\n7 40\n' >"$dir/one.txt"
      printf 'frame_multiple 2\n25 22\n25 42\n31 60\n40 82\n' >"$dir/four.txt"
      printf 'frame_multiple 6\n' >"$dir/many.txt"
      for i in $(seq 1 64); do printf '%d %d\n' "$((i * 3))" "$((i * 60))" >>"$dir/many.txt"; done
      printf 'frame_multiple 96\n120 960\n300 2880\n' >"$dir/wide.txt" ;;
    report)
      # metrics.jsonl of a run: train and validation records, as train writes them.
      printf '%s\n' \
        '{"kind": "train", "step": 10, "loss": 1.5, "mel_loss": 1.2, "grad_norm": 3, "lr": 0.001, "step_s": 0.5}' \
        '{"kind": "train", "step": 20, "loss": 1.1, "mel_loss": 0.9, "grad_norm": 2, "lr": 0.001, "step_s": 0.4}' \
        '{"kind": "val", "step": 20, "loss": 1.2, "diagonal_score": 0.4, "infer_focus_rate": null}' \
        >"$dir/metrics.jsonl" ;;
    nvidia_keys)
      # The parameter names of NVIDIA's tiny checkpoint, one per line.
      python3 - "$data/nvidia_tacotron2_tiny/checkpoint.pt" "$dir/names.txt" <<'PY' 2>/dev/null || true
import re, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    pickle = z.read(next(n for n in z.namelist() if n.endswith("data.pkl")))
names = sorted(set(re.findall(rb"[a-z_]+(?:\.[a-z0-9_]+)+", pickle)))
open(sys.argv[2], "wb").write(b"\n".join(names))
PY
      ;;
  esac
  echo "$dir"
}

# The past crashes and hostile files of this harness's kind, one run each.
replay() {
  local name="$1" files=()
  if [ -d "$root/tests/fuzz/regressions/$name" ]; then
    while IFS= read -r -d '' f; do files+=("$f"); done \
      < <(find "$root/tests/fuzz/regressions/$name" -type f ! -name '*.md' -print0)
  fi
  case "$name" in
    npy) files+=("$root"/tests/data/untrusted/*.npy) ;;
    torch_file) files+=("$root"/tests/data/untrusted/*.pt) ;;
    audio) files+=("$root"/tests/data/untrusted/*.wav "$root"/tests/data/untrusted/*.flac) ;;
    features_yaml) files+=("$root"/tests/data/untrusted/*.yaml) ;;
    waveform) files+=("$root"/tests/data/untrusted/*.npy) ;;
    optimizer_state) files+=("$root"/tests/data/untrusted/checkpoint_*.pt) ;;
  esac
  [ ${#files[@]} -gt 0 ] || return 0
  echo "fuzz: $name: replaying ${#files[@]} regression inputs"
  "$build_dir/fuzz_$name" "${limits[@]}" "${files[@]}" >"$build_dir/replay_$name.log" 2>&1 || {
    tail -40 "$build_dir/replay_$name.log" >&2
    echo "fuzz: $name: a regression input crashes again (log: $build_dir/replay_$name.log)" >&2
    return 1
  }
}

# CI's runs are repeatable: a fixed seed and a fixed number of inputs per harness (about 20 s
# each on a 2-core machine; max_total_time caps a slower machine), from the seeds alone.
ci_runs() {
  case "$1" in
    npy) echo 300000 ;;
    torch_file | torch_pickle | audio) echo 3000 ;;
    config | features_yaml | report | hifigan_config | waveform) echo 10000 ;;
    optimizer_state) echo 20000 ;;
    json | length_buckets) echo 100000 ;;
    metadata | nvidia_keys) echo 50000 ;;
  esac
}

fuzz() {
  local name="$1" seconds="$2"
  local extra=()
  if [ -n "${ci:-}" ]; then
    rm -rf "$build_dir/corpus/$name"
    extra=(-seed=1 -runs="$(ci_runs "$name")")
  fi
  local corpus="$build_dir/corpus/$name" crashes="$build_dir/crashes/$name/"
  mkdir -p "$corpus" "$crashes"
  local seed_dir
  seed_dir="$(seeds "$name")"
  echo "fuzz: $name for ${seconds}s"
  local log="$build_dir/fuzz_$name.log"
  if ! "$build_dir/fuzz_$name" "${limits[@]}" ${extra[@]+"${extra[@]}"} \
      -max_total_time="$seconds" -print_final_stats=1 \
      -artifact_prefix="$crashes" "$corpus" "$seed_dir" >"$log" 2>&1; then
    tail -60 "$log" >&2
    echo "fuzz: $name found a crash in $crashes: $(find "$crashes" -type f -printf "%f " | cut -c1-200) (log: $log)" >&2
    return 1
  fi
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$log" | sed "s/^/fuzz: $name: /"
}

[ $# -ge 1 ] || usage
if [ "$1" = --ci ]; then
  ci=1
  seconds="${2:-60}"
  build "${names[@]/#/fuzz_}"
  status=0
  for name in "${names[@]}"; do replay "$name" || status=1; done
  for name in "${names[@]}"; do fuzz "$name" "$seconds" || status=1; done
  exit $status
fi
name="$1"
seconds="${2:?usage: scripts/fuzz.sh NAME SECONDS}"
[[ " ${names[*]} " == *" $name "* ]] || { echo "fuzz: no harness '$name' (${names[*]})" >&2; exit 2; }
build "fuzz_$name"
replay "$name"
fuzz "$name" "$seconds"

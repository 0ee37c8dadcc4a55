#!/usr/bin/env bash
# Weak-scaling report: trains the same per-rank batch on 1..N ranks through tts-train's launcher
# and prints, for each rank count, the table multi-GPU users ask for: global batch, s/step,
# utterances/s, mel frames/s, speedup and scaling efficiency against 1 rank, exposed
# communication, data wait, rank spread, padding (the share of each rank's padded frames that is
# padding) and padded-frame imbalance. The figures are the trainer's own phase timers
# (metrics.jsonl), averaged over the timed steps after the warm-up steps. The same figures go to
# WORK/scaling.tsv, and WORK/scaling.png draws them: speedup and efficiency against the rank count
# with the ideal lines, and the time of a step by phase at each rank count (tts-train plot-scaling).
#
#   bench/bench_scaling.sh [--nproc "1 2"] [--steps 10] [--warmup 2] [--batch B]
#                            [--threads 1] [--config configs/tiny.yaml] [--data FEATS]
#                            [--clips 96] [--work DIR] [-- extra train arguments, e.g. --set ...]
#
# Without --data, a corpus of --clips espeak-ng utterances is made and preprocessed in the work
# folder (default: a new folder under /tmp) first. Default rank counts: every GPU doubling up to
# the GPU count (1 2 4 8), or "1 2" on CPU. Needs a built tts-train (scripts/build.sh).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=lib/feature_store.sh
source "$root/bench/lib/feature_store.sh"
build_dir="${BUILD_DIR:-$root/build}"
tts="$build_dir/tts-train"

nproc_list=""
steps=10
warmup=2
batch=""
threads=1
config="$root/configs/tiny.yaml"
data=""
clips=96
work=""
extra=()

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }
while [ $# -gt 0 ]; do
  case "$1" in
    --nproc) nproc_list="$2"; shift 2 ;;
    --steps) steps="$2"; shift 2 ;;
    --warmup) warmup="$2"; shift 2 ;;
    --batch) batch="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --config) config="$2"; shift 2 ;;
    --data) data="$2"; shift 2 ;;
    --clips) clips="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "bench_scaling: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
[ -x "$tts" ] || { echo "bench_scaling: $tts not found; build first (scripts/build.sh)" >&2; exit 1; }
for n in steps warmup threads clips; do
  [[ "${!n}" =~ ^[0-9]+$ ]] || { echo "bench_scaling: --$n expects a number, got '${!n}'" >&2; exit 2; }
done
[ "$steps" -ge 1 ] || { echo "bench_scaling: --steps must be at least 1" >&2; exit 2; }

gpus=0
if command -v nvidia-smi >/dev/null 2>&1; then
  gpus=$(nvidia-smi --list-gpus 2>/dev/null | wc -l || echo 0)
fi
if [ -z "$nproc_list" ]; then
  if [ "$gpus" -gt 0 ]; then
    nproc_list=""
    for n in 1 2 4 8 16 32 64; do [ "$n" -le "$gpus" ] && nproc_list="$nproc_list $n"; done
  else
    nproc_list="1 2"
  fi
fi
for n in $nproc_list; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "bench_scaling: --nproc expects rank counts like \"1 2 4\", got '$n'" >&2; exit 2; }
done

[ -n "$work" ] || work="$(mktemp -d /tmp/tts_scaling.XXXXXX)"
mkdir -p "$work"
if [ -z "$data" ]; then
  data="$work/feats"
  [ -f "$data/metadata.tsv" ] ||
    echo "bench_scaling: making a corpus of $clips espeak-ng utterances in $work/corpus" >&2
  espeak_feature_store "$tts" "$config" "$work/corpus" "$data" "$clips" >&2
fi

batch_args=()
[ -n "$batch" ] && batch_args=(--set "train.batch_size=$batch")

# Mean of the train records after the warm-up in a metrics.jsonl, as "key=value" pairs.
summarize() {
  awk -v warmup="$warmup" '
    function field(key,   m) {
      if (match($0, "\"" key "\": [^,}]*")) { m = substr($0, RSTART, RLENGTH); sub(/^[^:]*: /, "", m); return m + 0 }
      return 0
    }
    /"kind": "train"/ {
      if (field("step") <= warmup) next
      s = field("step_s"); n++; time += s
      frames += field("mel_frames_per_s") * s; utts += field("utterances_per_s") * s
      comm += field("comm_exposed_s"); data += field("data_wait_s")
      forward += field("forward_s"); backward += field("backward_s"); optimizer += field("optimizer_s")
      spread += field("rank_spread"); imbalance += field("padded_frames_imbalance")
      padded += field("padded_frames_per_rank")
    }
    END {
      if (n == 0) { print "steps=0"; exit }
      printf "steps=%d step_s=%.4f utts=%.2f frames=%.1f comm=%.2f data=%.2f spread=%.3f imbalance=%.3f padded=%.1f",
        n, time / n, utts / time, frames / time, 100 * comm / time, 100 * data / time, spread / n, imbalance / n, padded / n
      printf " data_s=%.5f forward_s=%.5f backward_s=%.5f comm_s=%.5f optimizer_s=%.5f\n",
        data / n, forward / n, backward / n, comm / n, optimizer / n
    }' "$1"
}

results=()
for n in $nproc_list; do
  run="$work/run_$n"
  rm -rf "$run"
  echo "bench_scaling: $n rank(s), $warmup warm-up + $steps timed steps" >&2
  if ! "$tts" train --config "$config" --data "$data" --out "$run" --nproc-per-node "$n" \
    --max-steps $((warmup + steps)) --set train.log_interval=1 --set train.val_interval=1000000 \
    --set train.checkpoint_interval=1000000 --set logging.samples=false --set logging.plots=false \
    --set "distributed.threads_per_rank=$threads" "${batch_args[@]}" "${extra[@]}" \
    >"$run.log" 2>&1; then
    echo "bench_scaling: training on $n rank(s) failed; the last lines of $run.log:" >&2
    tail -n 20 "$run.log" >&2
    exit 1
  fi
  # One sed that stops at the first match, no pipe (head in a pipeline fails it under pipefail).
  per_rank=$(sed -n -E '/batch [0-9]+ per rank/{s/.*batch ([0-9]+) per rank.*/\1/p;q}' "$run.log")
  results+=("ranks=$n per_rank=$per_rank $(summarize "$run/metrics.jsonl")")
done

echo
echo "Weak scaling: $(basename "$config"), ${threads} thread(s) per rank, $steps timed steps after $warmup warm-up; $(date -u +%Y-%m-%d)"
echo "$(uname -n): $(nproc) cores$( [ "$gpus" -gt 0 ] && echo ", $gpus GPU(s)")"
echo
echo "| ranks | global batch | s/step | utterances/s | mel frames/s | speedup | efficiency | exposed comm | data wait | rank spread | padding | pad imbalance |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
base=""
base_ranks=1
for line in "${results[@]}"; do
  declare -A r=()
  for pair in $line; do r[${pair%%=*}]=${pair#*=}; done
  [ "${r[steps]}" != "0" ] || { echo "bench_scaling: no timed steps for ${r[ranks]} rank(s); raise --steps" >&2; exit 1; }
  [ -n "$base" ] || { base="${r[frames]}"; base_ranks="${r[ranks]}"; }
  awk -v ranks="${r[ranks]}" -v per_rank="${r[per_rank]}" -v step_s="${r[step_s]}" -v utts="${r[utts]}" \
    -v frames="${r[frames]}" -v base="$base" -v base_ranks="$base_ranks" -v comm="${r[comm]}" -v data="${r[data]}" \
    -v spread="${r[spread]}" -v imbalance="${r[imbalance]}" -v padded="${r[padded]}" 'BEGIN {
      speedup = frames / base
      padding = padded > 0 ? 100 * (1 - frames * step_s / ranks / padded) : 0
      printf "| %d | %d | %.3f | %.1f | %.0f | %.2fx | %.2f | %.1f%% | %.1f%% | %.3f | %.1f%% | %.3f |\n",
        ranks, ranks * per_rank, step_s, utts, frames, speedup, speedup * base_ranks / ranks, comm, data, spread, padding, imbalance
    }'
  unset r
done
echo
echo "Speedup: mel frames/s against the first row ($base_ranks rank(s)); efficiency: speedup per added rank (1.0 = linear). Runs and logs: $work"

# The table for tts-train plot-scaling, and its picture.
table="$work/scaling.tsv"
per_rank_batch=""
printf 'ranks\tglobal_batch\tmel_frames_per_s\tstep_s\tdata_wait_s\tforward_s\tbackward_s\tcomm_exposed_s\toptimizer_s\n' >"$table"
for line in "${results[@]}"; do
  declare -A r=()
  for pair in $line; do r[${pair%%=*}]=${pair#*=}; done
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "${r[ranks]}" $((r[ranks] * r[per_rank])) "${r[frames]}" \
    "${r[step_s]}" "${r[data_s]}" "${r[forward_s]}" "${r[backward_s]}" "${r[comm_s]}" "${r[optimizer_s]}" >>"$table"
  [ -n "$per_rank_batch" ] || per_rank_batch="${r[per_rank]}"
  unset r
done
title="Weak scaling: $(basename "$config"), batch $per_rank_batch per rank, ${threads} thread(s) per rank; $(uname -n), $(nproc) cores$( [ "$gpus" -gt 0 ] && echo ", $gpus GPU(s)"); $(date -u +%Y-%m-%d)"
"$tts" plot-scaling --table "$table" --title "$title" --out "$work/scaling.png" >&2
echo "Picture: $work/scaling.png (table: $table)"

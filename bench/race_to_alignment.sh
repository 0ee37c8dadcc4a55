#!/usr/bin/env bash
# The race to alignment: NVIDIA/tacotron2's own training loop and ours, on one espeak-ng corpus,
# at one config (bench/race.yaml: the small config of docs/benchmarks.md at r 1), each recording
# the validation diagonal score every VAL steps; prints one Markdown table row per run (the step
# and minutes at which the score first passes 0.5 and 0.7) and draws the curves against steps
# and against wall time.
#
#   bench/race_to_alignment.sh PEER_DIR [STEPS]
#
# PEER_DIR: a checkout of NVIDIA/tacotron2 outside this repository (measured: commit 185cd24).
# Its Python needs torch, numpy, scipy, unidecode, inflect, yaml and matplotlib (Debian:
# apt-get install python3-torch python3-scipy python3-unidecode python3-inflect python3-yaml
# python3-matplotlib). STEPS: training steps of each run (default 4000).
# Environment: BENCH_DIR (bench-race/, ignored by git), COUNT (500 utterances: LJSpeech
# transcripts of at most 50 characters, bench/data/ljspeech_short_transcripts.txt, spoken by
# espeak-ng), VAL (50), PYTHON (/usr/bin/python3: Debian's torch, the libtorch our Debian build
# links), BUILD_DIR (build/), ROWS (the runs, in order; default all of: nvidia ours-nvidia
# ours-nvidia-seed7 ours-defaults ours-r-schedule nvidia-seed7), JOBS (1: one run at a time; 2:
# NVIDIA's runs, one after the other, beside ours, one core each), PLOT (the PNG to draw;
# default BENCH_DIR/race.png).
# The runs (batch 4, lr 1e-3, one thread, seed 1234 unless named otherwise):
#   nvidia                NVIDIA's train.py loop (bench/nvidia_race.py): its Adam, Tacotron2Loss,
#                         clipping, random batches; writes its initial weights, init.pt
#   nvidia-seed7          the same with seed 7
#   nvidia-noshuffle      seed 1234 without TextMelLoader's file-list shuffle: the same
#                         distribution of batches, another draw (not in the default ROWS)
#   ours-nvidia           ours under NVIDIA's recipe (docs/nvidia.md), from NVIDIA's init.pt
#   ours-nvidia-seed7     the same with train.seed 7 (another init, data order and dropout): how
#                         far chance alone moves a curve (ours at seed 1234 initializes as NVIDIA's
#                         does at torch.manual_seed(1234) on the CPU: the same weights)
#   ours-defaults         our defaults (real-frame loss, zeroed padding, length-sorted pools, Adam
#                         eps 1e-6) with guided attention, weight 50 (configs/tiny.yaml's)
#   ours-r-schedule       the same with train.r_schedule: r 2 to step STEPS/4, then r 1
# Our rows log as a user's run does (metrics.jsonl, TensorBoard); NVIDIA's writes metrics.jsonl
# only (train.py's tensorboard logger is left out), which favours NVIDIA's wall time.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=lib/feature_store.sh
source "$root/bench/lib/feature_store.sh"
if [ $# -lt 1 ]; then
  sed -n '2,35p' "$0" >&2
  exit 2
fi
peer="$(cd "$1" && pwd)"
steps="${2:-4000}"
work="${BENCH_DIR:-$root/bench-race}"
count="${COUNT:-500}"
val="${VAL:-50}"
python="${PYTHON:-/usr/bin/python3}"
jobs="${JOBS:-1}"
all_rows="nvidia ours-nvidia ours-nvidia-seed7 ours-defaults ours-r-schedule nvidia-seed7"
rows="${ROWS:-$all_rows}"
all_rows="$all_rows nvidia-noshuffle"
plot="${PLOT:-$work/race.png}"
config="$root/bench/race.yaml"
tts="${BUILD_DIR:-$root/build}/tts-train"
[ -x "$tts" ] || { echo "race_to_alignment: no $tts; run scripts/build.sh --target tts-train" >&2; exit 1; }
[ -f "$peer/model.py" ] || { echo "race_to_alignment: $peer has no model.py: give a checkout of NVIDIA/tacotron2" >&2; exit 1; }
case "$jobs" in 1 | 2) ;; *) echo "race_to_alignment: JOBS is '$jobs': expected 1 or 2" >&2; exit 2 ;; esac
for row in $rows; do
  case " $all_rows " in *" $row "*) ;; *)
    echo "race_to_alignment: unknown row '$row' in ROWS: expected some of: $all_rows" >&2
    exit 2 ;;
  esac
done
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1

mkdir -p "$work"
feats="$work/feats-$count"
espeak_feature_store "$tts" "$config" "$work/corpus-$count" "$feats" "$count" \
  "$root/bench/data/ljspeech_short_transcripts.txt" >"$work/preprocess.log" 2>&1
"$tts" config --config "$config" >"$work/race.resolved.yaml"
# NVIDIA's DataLoader drops an epoch's last partial batch; our sampler spreads it over the epoch.
n_train=$(($(wc -l <"$feats/train.tsv") - 1))
batch=$(awk '$1 == "batch_size:" {print $2; exit}' "$work/race.resolved.yaml")
[ $((n_train % batch)) -eq 0 ] || echo "race_to_alignment: warning: $n_train training" \
  "utterances are not a multiple of the batch ($batch): NVIDIA's epochs drop the last" \
  "$((n_train % batch)), ours spread them over the epoch" >&2
"$tts" config --config "$config" --set train.seed=7 >"$work/race.seed7.resolved.yaml"
nvidia_race=("$python" -W ignore "$root/bench/nvidia_race.py" "$peer" --feats "$feats"
  --val-interval "$val" --log-interval 10 --threads 1)
# NVIDIA's initial weights, which ours-nvidia starts from (its run writes the same file).
"${nvidia_race[@]}" --config "$work/race.resolved.yaml" --out "$work/init" --steps 0 >/dev/null

recipe=(--set train.adam_eps=1e-8 --set train.loss_normalization=padded_batch
  --set train.guided_attention_weight=0 --set model.zero_padding_in_convolutions=false
  --set model.nvidia_postnet_gradient=true --set data.sort_pool_batches=1
  --set train.batch_norm=per_rank)
run_ours() {  # NAME [options...]
  local name="$1"
  shift
  rm -rf "$work/run-$name"
  "$tts" train --config "$config" --data "$feats" --out "$work/run-$name" --max-steps "$steps" \
    --set train.val_interval="$val" --set train.log_interval=10 \
    --set train.checkpoint_interval="$steps" --set logging.samples=false \
    --set logging.plots=false "$@" >"$work/run-$name.log" 2>&1
}
run_row() {
  case "$1" in
    nvidia | nvidia-seed7 | nvidia-noshuffle)
      local resolved="$work/race.resolved.yaml" extra=()
      [ "$1" != nvidia-seed7 ] || resolved="$work/race.seed7.resolved.yaml"
      [ "$1" != nvidia-noshuffle ] || extra=(--no-list-shuffle)
      rm -rf "$work/run-$1"
      "${nvidia_race[@]}" --config "$resolved" --out "$work/run-$1" --steps "$steps" \
        "${extra[@]}" >"$work/run-$1.log" 2>&1 ;;
    ours-nvidia) run_ours "$1" "${recipe[@]}" --init-from "$work/init/init.pt" ;;
    ours-nvidia-seed7) run_ours "$1" "${recipe[@]}" --set train.seed=7 ;;
    ours-defaults) run_ours "$1" --set train.guided_attention_weight=50 ;;
    ours-r-schedule)
      run_ours "$1" --set train.guided_attention_weight=50 \
        --set "train.r_schedule=[[0, 2, 4], [$((steps / 4)), 1, 4]]" ;;
  esac || { echo "race_to_alignment: the run '$1' failed; see $work/run-$1.log" >&2; return 1; }
}

echo "# $(date -u +%FT%TZ) $steps steps, validation every $val, $count utterances, jobs $jobs," \
  "load $(cut -d' ' -f1 /proc/loadavg), $("$python" -c 'import torch; print("NVIDIA on torch", torch.__version__)')"
nvidia_rows=() ours_rows=()
for row in $rows; do
  case "$row" in nvidia*) nvidia_rows+=("$row") ;; *) ours_rows+=("$row") ;; esac
done
nvidia_pid=""
trap '[ -z "$nvidia_pid" ] || { pkill -P "$nvidia_pid"; kill "$nvidia_pid"; } 2>/dev/null || true' EXIT
if [ "$jobs" -ge 2 ]; then  # NVIDIA's rows in the background, ours in the foreground
  (for row in "${nvidia_rows[@]}"; do run_row "$row"; done) &
  nvidia_pid=$!
  for row in "${ours_rows[@]}"; do run_row "$row"; done
  wait "$nvidia_pid" || { echo "race_to_alignment: an NVIDIA run failed; see $work/run-nvidia*.log" >&2; exit 1; }
  nvidia_pid=""
else
  for row in $rows; do run_row "$row"; done
fi
runs=()
for row in $rows; do runs+=("$row=$work/run-$row/metrics.jsonl"); done
"$python" "$root/bench/race_report.py" --steps "$steps" --plot "$plot" "${runs[@]}"

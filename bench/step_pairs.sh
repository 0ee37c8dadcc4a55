#!/usr/bin/env bash
# Times our training step and NVIDIA/tacotron2's model.py back to back, in pairs (the machine is
# shared: the ratio of a pair measured together is what counts), and prints one line per pair.
#
#   bench/step_pairs.sh --peer DIR [--python PY] [--tts BIN] [--small] [--batch B] [--text T]
#                       [--frames F] [--steps N] [--threads N] [--pairs N] [--rss]
#
# --peer: a checkout of NVIDIA/tacotron2 outside this repository (measured: commit 185cd24;
#   docs/benchmarks.md, "Training step", has the commands and figures).
# --python: the Python whose torch NVIDIA's side runs on (default: Debian's /usr/bin/python3).
# --small: embedding 128, RNNs 256, prenet 64, attention 64, postnet 128 on both sides.
# --rss: also the peak resident memory of each side (/usr/bin/time -v).
# Both sides use r = 1 (NVIDIA's code cannot train with r > 1), no linear head, one BLAS/OpenMP
# thread per intra-op thread.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
peer="" python=/usr/bin/python3 tts="$root/build/tts-train" small=0 rss=0
batch=4 text=60 frames=200 steps=3 threads=1 pairs=3
nvidia_step="${NVIDIA_STEP:-$root/bench/nvidia_step.py}"
while [ $# -gt 0 ]; do
  case "$1" in
    --peer) peer="$2"; shift 2 ;;
    --python) python="$2"; shift 2 ;;
    --tts) tts="$2"; shift 2 ;;
    --small) small=1; shift ;;
    --rss) rss=1; shift ;;
    --batch) batch="$2"; shift 2 ;;
    --text) text="$2"; shift 2 ;;
    --frames) frames="$2"; shift 2 ;;
    --steps) steps="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --pairs) pairs="$2"; shift 2 ;;
    *) echo "step_pairs: unknown argument '$1' (see the header of $0)" >&2; exit 2 ;;
  esac
done
if [ -z "$peer" ] || [ ! -f "$peer/model.py" ]; then
  echo "step_pairs: --peer must name a checkout of NVIDIA/tacotron2 (model.py), got '$peer'" >&2
  exit 2
fi
if [ ! -f "$nvidia_step" ]; then
  echo "step_pairs: no $nvidia_step (set NVIDIA_STEP to the driver's path)" >&2
  exit 2
fi
ours_args=(bench --config "$root/configs/ljspeech_tacotron2.yaml" --set model.n_frames_per_step=1
  --set model.predict_linear=false --batch "$batch" --text-len "$text" --frames "$frames"
  --steps "$steps" --threads "$threads")
nvidia_args=("$nvidia_step" "$peer" --batch "$batch" --text "$text" --frames "$frames"
  --steps "$steps" --threads "$threads")
if [ "$small" = 1 ]; then
  for kv in symbols_embedding_dim=128 encoder_embedding_dim=128 decoder_rnn_dim=256 prenet_dim=64 \
    attention_rnn_dim=256 attention_dim=64 postnet_embedding_dim=128; do
    ours_args+=(--set "model.$kv")
  done
  nvidia_args+=(--small)
fi
export OPENBLAS_NUM_THREADS="$threads" OMP_NUM_THREADS="$threads" MKL_NUM_THREADS="$threads"

# Runs "$@", prints its stdout; with --rss, appends "peak_rss_mb N".
measure() {
  if [ "$rss" = 1 ]; then
    local log
    log="$(mktemp)"
    /usr/bin/time -v -o "$log" "$@"
    awk '/Maximum resident set size/ {printf "peak_rss_mb %.0f\n", $NF / 1024}' "$log"
    rm -f "$log"
  else
    "$@"
  fi
}

echo "# $(date -u +%FT%TZ) batch $batch text $text frames $frames threads $threads small $small"
echo "# ours: $tts; nvidia: $python $(basename "$nvidia_step") ($("$python" -c \
  'import torch; print("torch", torch.__version__)'))"
for pair in $(seq 1 "$pairs"); do
  load="$(cut -d' ' -f1 /proc/loadavg)"
  ours="$(measure "$tts" "${ours_args[@]}" 2>/dev/null)"
  theirs="$(measure "$python" "${nvidia_args[@]}" 2>/dev/null)"
  ours_s="$(sed -n 's/.*"median_step_s": \([0-9.]*\).*/\1/p' <<<"$ours")"
  theirs_s="$(awk '/^median_step_s/ {print $2}' <<<"$theirs")"
  line="pair $pair load $load ours $ours_s s nvidia $theirs_s s"
  line+=" ratio $(awk -v a="$ours_s" -v b="$theirs_s" 'BEGIN {printf "%.2fx", b / a}')"
  if [ "$rss" = 1 ]; then
    line+=" rss_mb ours $(awk '/^peak_rss_mb/ {print $2}' <<<"$ours")"
    line+=" nvidia $(awk '/^peak_rss_mb/ {print $2}' <<<"$theirs")"
  fi
  echo "$line"
done

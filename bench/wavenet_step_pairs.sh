#!/usr/bin/env bash
# Times our WaveNet training step and r9y9/wavenet_vocoder's back to back, in pairs (the machine is
# shared: the ratio of a pair measured together is what counts), and prints one line per pair.
#
#   bench/wavenet_step_pairs.sh --peer DIR [--python PY] [--tts BIN] [--small] [--batch B]
#                               [--frames F] [--steps N] [--threads N] [--pairs N]
#
# --peer: a checkout of r9y9/wavenet_vocoder outside this repository.
# --python: the Python whose torch r9y9's side runs on (default: Debian's /usr/bin/python3).
# --small: configs/wavenet_small.yaml's network (8 layers in 2 stacks, 32 channels) on both
#   sides; without it, configs/wavenet_mol.yaml's (r9y9's mol_wavenet.json: 24 layers in 4
#   stacks, 512/512/256 channels).
# --frames: mel frames per window (x 256 samples). One BLAS/OpenMP thread per intra-op thread.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
peer="" python=/usr/bin/python3 tts="$root/build/tts-train" small=0
batch=1 frames=8 steps=3 threads=1 pairs=3
while [ $# -gt 0 ]; do
  case "$1" in
    --peer) peer="$2"; shift 2 ;;
    --python) python="$2"; shift 2 ;;
    --tts) tts="$2"; shift 2 ;;
    --small) small=1; shift ;;
    --batch) batch="$2"; shift 2 ;;
    --frames) frames="$2"; shift 2 ;;
    --steps) steps="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --pairs) pairs="$2"; shift 2 ;;
    *) echo "wavenet_step_pairs: unknown argument '$1' (see the header of $0)" >&2; exit 2 ;;
  esac
done
if [ -z "$peer" ] || [ ! -f "$peer/wavenet_vocoder/wavenet.py" ]; then
  echo "wavenet_step_pairs: --peer must name a checkout of r9y9/wavenet_vocoder" \
    "(wavenet_vocoder/wavenet.py), got '$peer'" >&2
  exit 2
fi
config="$root/configs/wavenet_mol.yaml" sizes=()
if [ "$small" = 1 ]; then
  config="$root/configs/wavenet_small.yaml"
  sizes=(--layers 8 --stacks 2 --residual 32 --gate 32 --skip 32 --ema-decay 0.999)
fi
ours_args=(bench --config "$config" --batch "$batch" --frames "$frames" --steps "$steps"
  --threads "$threads")
r9y9_args=("$root/bench/wavenet_r9y9_step.py" "$peer" "${sizes[@]}" --batch "$batch"
  --frames "$frames" --steps "$steps" --threads "$threads")
export OPENBLAS_NUM_THREADS="$threads" OMP_NUM_THREADS="$threads" MKL_NUM_THREADS="$threads"

echo "# $(date -u +%FT%TZ) batch $batch frames $frames ($((frames * 256)) samples) threads" \
  "$threads small $small"
echo "# ours: $tts; r9y9: $python wavenet_r9y9_step.py ($("$python" -c \
  'import torch; print("torch", torch.__version__)'))"
for pair in $(seq 1 "$pairs"); do
  load="$(cut -d' ' -f1 /proc/loadavg)"
  ours="$("$tts" "${ours_args[@]}" 2>/dev/null)"
  theirs="$("$python" "${r9y9_args[@]}" 2>/dev/null)"
  ours_s="$(sed -n 's/.*"median_step_s": \([0-9.]*\).*/\1/p' <<<"$ours")"
  theirs_s="$(sed -n 's/.*"median_step_s": \([0-9.]*\).*/\1/p' <<<"$theirs")"
  ours_p="$(sed -n 's/.*"params": \([0-9]*\).*/\1/p' <<<"$ours")"
  theirs_p="$(sed -n 's/.*"params": \([0-9]*\).*/\1/p' <<<"$theirs")"
  echo "pair $pair load $load ours $ours_s s r9y9 $theirs_s s r9y9/ours" \
    "$(awk -v a="$theirs_s" -v b="$ours_s" 'BEGIN {printf "%.2f", a / b}') params" \
    "$ours_p/$theirs_p"
done

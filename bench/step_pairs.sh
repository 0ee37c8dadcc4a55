#!/usr/bin/env bash
# Times our training step and NVIDIA/tacotron2's model.py back to back, in pairs (the machine is
# shared: the ratio of a pair measured together is what counts), and prints one line per pair
# (bench/lib/step_pairs.sh): each side's median step and nvidia/ours.
#
#   bench/step_pairs.sh --peer DIR [--python PY] [--tts BIN] [--small] [--batch B] [--text T]
#                       [--frames F] [--steps N] [--threads N] [--pairs N] [--rss] [--isa avx2]
#                       [--set KEY=VALUE ...]
#
# --peer: a checkout of NVIDIA/tacotron2 outside this repository (measured: commit 185cd24;
#   docs/benchmarks.md, "Training step", has the commands and figures).
# --python: the Python whose torch NVIDIA's side runs on (default: Debian's /usr/bin/python3).
# --small: embedding 128, RNNs 256, prenet 64, attention 64, postnet 128 on both sides.
# --rss: also the peak resident memory of each side (/usr/bin/time -v).
# --set KEY=VALUE: a setting of our side only (e.g. model.recurrent_products=gemm), repeatable.
# --isa avx2: both sides as on an AVX2-only host (bench/lib/step_pairs.sh); the first line names
#   the CPU, its widest vector extension and this limit.
# Both sides use r = 1 (NVIDIA's code cannot train with r > 1), no linear head, one BLAS/OpenMP
# thread per intra-op thread.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=lib/step_pairs.sh
source "$root/bench/lib/step_pairs.sh"
peer="" python=/usr/bin/python3 tts="$root/build/tts-train" small=0 rss=0 isa=""
batch=4 text=60 frames=200 steps=3 threads=1 pairs=3
nvidia_step="${NVIDIA_STEP:-$root/bench/nvidia_step.py}"
ours_set=()
extra_option() {
  if [ "$1" = --text ] && [ $# -ge 2 ]; then text="$2" consumed=2; fi
  if [ "$1" = --set ] && [ $# -ge 2 ]; then ours_set+=(--set "$2") consumed=2; fi
}
pair_options step_pairs "$@"
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
  --steps "$steps" --threads "$threads" ${ours_set[@]+"${ours_set[@]}"})
peer_args=("$nvidia_step" "$peer" --batch "$batch" --text "$text" --frames "$frames"
  --steps "$steps" --threads "$threads")
if [ "$small" = 1 ]; then
  for kv in symbols_embedding_dim=128 encoder_embedding_dim=128 decoder_rnn_dim=256 prenet_dim=64 \
    attention_rnn_dim=256 attention_dim=64 postnet_embedding_dim=128; do
    ours_args+=(--set "model.$kv")
  done
  peer_args+=(--small)
fi

echo "# $(date -u +%FT%TZ) batch $batch text $text frames $frames threads $threads small $small; $(pair_cpu)"
run_pairs nvidia

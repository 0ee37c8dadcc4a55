#!/usr/bin/env bash
# Times our WaveNet training step and r9y9/wavenet_vocoder's back to back, in pairs (the machine is
# shared: the ratio of a pair measured together is what counts), and prints one line per pair.
#
#   bench/wavenet_step_pairs.sh --peer DIR [--python PY] [--tts BIN] [--small] [--batch B]
#                               [--frames F] [--steps N] [--threads N] [--pairs N] [--rss]
#
# --peer: a checkout of r9y9/wavenet_vocoder outside this repository.
# --python: the Python whose torch r9y9's side runs on (default: Debian's /usr/bin/python3).
# --small: configs/wavenet_small.yaml's network (8 layers in 2 stacks, 32 channels) on both
#   sides; without it, configs/wavenet_mol.yaml's (r9y9's mol_wavenet.json: 24 layers in 4
#   stacks, 512/512/256 channels).
# --frames: mel frames per window (x 256 samples). One BLAS/OpenMP thread per intra-op thread.
# --rss: also the peak resident memory of each side (/usr/bin/time -v). One line per pair
# (bench/lib/step_pairs.sh): each side's median step, r9y9/ours and both parameter counts.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=lib/step_pairs.sh
source "$root/bench/lib/step_pairs.sh"
peer="" python=/usr/bin/python3 tts="$root/build/tts-train" small=0 rss=0 isa=""
batch=1 frames=8 steps=3 threads=1 pairs=3
pair_options wavenet_step_pairs "$@"
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
peer_args=("$root/bench/wavenet_r9y9_step.py" "$peer" "${sizes[@]}" --batch "$batch"
  --frames "$frames" --steps "$steps" --threads "$threads")

echo "# $(date -u +%FT%TZ) batch $batch frames $frames ($((frames * 256)) samples) threads" \
  "$threads small $small; $(pair_cpu)"
run_pairs r9y9

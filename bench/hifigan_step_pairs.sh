#!/usr/bin/env bash
# Times our HiFi-GAN training step and jik876/hifi-gan's train.py loop body back to back, in pairs
# (the machine is shared: the ratio of a pair measured together is what counts), and prints one
# line per pair (bench/lib/step_pairs.sh): each side's median step, jik876/ours and both parameter
# counts.
#
#   bench/hifigan_step_pairs.sh --peer DIR [--version 1|2|3] [--python PY] [--tts BIN]
#                               [--batch B] [--frames F] [--steps N] [--threads N] [--pairs N]
#                               [--rss]
#
# --peer: a checkout of jik876/hifi-gan outside this repository (measured: commit 4769534).
# --version: jik876's config_vN.json on its side, configs/hifigan_vN.yaml on ours (equal: test
#   HifiganInterop.ConfigsEqualJik876s); default 1.
# --python: the Python whose torch jik876's side runs on (default: Debian's /usr/bin/python3); the
#   driver is bench/hifigan_jik876_step.py.
# --frames: mel frames per segment (x 256 samples; default 32, train.py's segment_size 8192).
# One BLAS/OpenMP thread per intra-op thread; --rss: also each side's peak resident memory.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=lib/step_pairs.sh
source "$root/bench/lib/step_pairs.sh"
peer="" python=/usr/bin/python3 tts="$root/build/tts-train" small=0 rss=0 isa=""
batch=1 frames=32 steps=3 threads=1 pairs=3 version=1
extra_option() {
  if [ "$1" = --version ] && [ $# -ge 2 ]; then version="$2" consumed=2; fi
}
pair_options hifigan_step_pairs "$@"
if [ -z "$peer" ] || [ ! -f "$peer/models.py" ] || [ ! -f "$peer/config_v1.json" ]; then
  echo "hifigan_step_pairs: --peer must name a checkout of jik876/hifi-gan (models.py," \
    "config_v1.json), got '$peer'" >&2
  exit 2
fi
case "$version" in 1 | 2 | 3) ;; *) echo "hifigan_step_pairs: --version is '$version': expected 1, 2 or 3" >&2; exit 2 ;; esac
[ "$small" = 0 ] || { echo "hifigan_step_pairs: no --small (jik876's discriminators have one size)" >&2; exit 2; }
ours_args=(bench --config "$root/configs/hifigan_v$version.yaml" --batch "$batch" --frames "$frames"
  --steps "$steps" --threads "$threads")
peer_args=(-W ignore "$root/bench/hifigan_jik876_step.py" "$peer" --config "config_v$version.json"
  --batch "$batch" --frames "$frames" --steps "$steps" --threads "$threads")

echo "# $(date -u +%FT%TZ) V$version batch $batch frames $frames ($((frames * 256)) samples)" \
  "threads $threads; $(pair_cpu)"
run_pairs jik876

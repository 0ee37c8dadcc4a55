#!/usr/bin/env bash
# Data-parallel training on this machine, one process per device, through tts-train's built-in
# launcher: a thin wrapper around `tts-train train`. Usage:
#   scripts/train_multi_gpu.sh CONFIG FEATURES RUN_DIR [more tts-train train options]
# Environment, each passed on only when set: NPROC (as --nproc-per-node: how many worker
# processes), BACKEND (as --backend: gloo or nccl), BUILD_DIR (where tts-train is; default build/).
# Unset, tts-train decides: one process per visible GPU (CUDA_VISIBLE_DEVICES counts), 1 without
# a GPU; the backend from the config's distributed.backend (auto: nccl on CUDA, gloo on CPU; gloo
# when train.device is cpu). Interrupt with Ctrl-C: every rank finishes its step, rank 0 writes a
# checkpoint, and `--resume` continues from it.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
if [ $# -lt 3 ]; then
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" >&2
  exit 2
fi
config="$1" features="$2" run="$3"
shift 3
tts="${BUILD_DIR:-$root/build}/tts-train"
launch=()
[ -z "${NPROC:-}" ] || launch+=(--nproc-per-node "$NPROC")
[ -z "${BACKEND:-}" ] || launch+=(--backend "$BACKEND")
exec "$tts" train --config "$config" --data "$features" --out "$run" ${launch[@]+"${launch[@]}"} "$@"

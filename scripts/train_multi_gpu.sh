#!/usr/bin/env bash
# Data-parallel training on all GPUs of this machine (or N CPU processes), one process per device,
# through tts-train's built-in launcher. Usage:
#   scripts/train_multi_gpu.sh CONFIG FEATURES RUN_DIR [more tts-train train options]
# Environment: NPROC (default: every visible GPU, else 2 CPU processes), BACKEND (nccl or gloo;
# default nccl with GPUs), BUILD_DIR (default build/). Interrupt with Ctrl-C: every rank finishes
# its step, rank 0 writes a checkpoint, and `--resume` continues from it.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
if [ $# -lt 3 ]; then
  sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
config="$1" features="$2" run="$3"
shift 3
tts="${BUILD_DIR:-$root/build}/tts-train"
gpus=0
if command -v nvidia-smi >/dev/null 2>&1; then
  gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader 2>/dev/null | wc -l)
  if [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then
    gpus=$(echo "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | grep -c .)
  fi
fi
if [ "$gpus" -gt 0 ]; then
  nproc="${NPROC:-$gpus}" backend="${BACKEND:-nccl}"
else
  nproc="${NPROC:-2}" backend="${BACKEND:-gloo}"
fi
echo "training on $nproc process(es), backend $backend" >&2
exec "$tts" train --config "$config" --data "$features" --out "$run" \
  --nproc-per-node "$nproc" --backend "$backend" "$@"

#!/usr/bin/env bash
# One prepared check for a GPU machine: a machine with an NVIDIA GPU, CUDA, cuDNN, NCCL, CMake,
# Ninja and PyTorch 2.11.0+cu130, but without the other libraries tts-train builds with and
# without a network. Those travel in .devdeps/ (ignored by git): .devdeps/debs/ holds their Debian
# 12 packages (.deb files), which scripts/fetch_gpu_deps.sh downloads on a Debian machine with apt.
# Copy the working tree with .devdeps/ to the GPU machine and run this script from the project's
# root there, with OUT naming the folder for the logs (default gpu-check/). It builds with
# scripts/gpu_build.sh (unpacks .devdeps/debs/ under /opt/deps, builds build-gpu/ against the
# machine's own CUDA libtorch) and runs, each step logged to $OUT/NAME.log:
#   tests           the whole suite (CUDA-only tests run instead of skipping)
#   nccl_selftest   a real NCCL process group of one rank: all-reduce, all-gather, barrier
#   train_nccl      1 GPU through a real NCCL group (--process-group), tiny config
#   train_gloo_2    2 ranks on the one GPU with Gloo on CUDA tensors (NCCL refuses two ranks on one
#                   GPU; Gloo does not): every multi-rank CUDA path (reducer, stop flag, frame
#                   weights, rank-0 side work, checkpoint)
#   resume_1gpu     that 2-rank GPU checkpoint resumed on 1 GPU
#   resume_cpu      and on the CPU
#   train_bf16      1 GPU, train.precision = bf16 (autocast), tiny config
#   bench_*         `tts-train bench` at NVIDIA's dimensions, batch 64, in fp32, TF32 and bf16,
#                   with mel frames/s; and TF32 with the fused decoder step's CUDA kernels
#                   (model.decoder_step: fused_cuda; the suite's CudaPaths.FusedDecoderStepMatchesTheCpu
#                   checks them first)
# Every step runs even if an earlier one failed; a summary table is printed last and the exit
# code is non-zero if any step failed.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root" || exit 1
out="${OUT:-$root/gpu-check}"
mkdir -p "$out"
declare -a summary=()
failed=0

step() {  # step NAME COMMAND...: runs COMMAND, logging to $out/NAME.log, and records the result
  local name="$1"
  shift
  local start=$SECONDS
  echo "== $name: $*"
  "$@" >"$out/$name.log" 2>&1
  local rc=$?
  tail -n 4 "$out/$name.log"
  summary+=("$(printf '%-14s %-6s %5ds' "$name" "$([ $rc -eq 0 ] && echo ok || echo "rc=$rc")" $((SECONDS - start)))")
  [ $rc -eq 0 ] || failed=1
  return $rc
}

nvidia-smi >"$out/nvidia-smi.txt" 2>&1 || true
if ! step build scripts/gpu_build.sh; then
  printf '%s\n' "${summary[@]}"
  exit 1
fi
eval "$(grep '^export LD_LIBRARY_PATH=' "$out/build.log" | tail -n 1)"
tts="$root/build-gpu/tts-train"

step tests bash -c "cd build-gpu && ctest --output-on-failure -j 8 --timeout 600"
step nccl_selftest "$tts" dist-selftest --nproc-per-node 1 --backend nccl --rounds 5

corpus="$out/corpus"
feats="$out/features"
cuda=(--set train.device=cuda --set train.log_interval=5 --set train.val_interval=10
  --set train.checkpoint_interval=10)
if step corpus env MAX_CHARS=80 scripts/make_corpus.sh "$corpus" 24 &&
  step preprocess "$tts" preprocess --config configs/tiny.yaml --input "$corpus" --output "$feats"; then
  step train_nccl "$tts" train --config configs/tiny.yaml --data "$feats" --out "$out/run_nccl" \
    --nproc-per-node 1 --backend nccl --process-group --max-steps 20 "${cuda[@]}"
  if step train_gloo_2 "$tts" train --config configs/tiny.yaml --data "$feats" \
    --out "$out/run_gloo2" --nproc-per-node 2 --backend gloo --max-steps 20 "${cuda[@]}"; then
    cp -r "$out/run_gloo2" "$out/run_1gpu"
    cp -r "$out/run_gloo2" "$out/run_cpu"
    step resume_1gpu "$tts" train --config configs/tiny.yaml --data "$feats" --out "$out/run_1gpu" \
      --resume --max-steps 30 "${cuda[@]}"
    step resume_cpu "$tts" train --config configs/tiny.yaml --data "$feats" --out "$out/run_cpu" \
      --resume --max-steps 30 --set train.device=cpu
  fi
  step train_bf16 "$tts" train --config configs/tiny.yaml --data "$feats" --out "$out/run_bf16" \
    --max-steps 20 --set train.precision=bf16 "${cuda[@]}"
fi

benches=(fp32 tf32 bf16 tf32_fused)
for name in "${benches[@]}"; do
  tf32=false precision=fp32 decoder_step=fused
  [ "$name" = tf32 ] && tf32=true
  [ "$name" = bf16 ] && precision=bf16
  [ "$name" = tf32_fused ] && tf32=true && decoder_step=fused_cuda
  step "bench_$name" "$tts" bench --config configs/ljspeech_tacotron2.yaml --batch 64 \
    --text-len 150 --frames 800 --steps 10 --device cuda --set "train.tf32=$tf32" \
    --set "train.precision=$precision" --set "model.decoder_step=$decoder_step"
done

echo
echo "== summary (logs in $out)"
printf '%s\n' "${summary[@]}"
for name in "${benches[@]}"; do
  echo "bench $name: $(grep -h '^{' "$out/bench_$name.log" 2>/dev/null | tail -n 1)"
done
exit $failed

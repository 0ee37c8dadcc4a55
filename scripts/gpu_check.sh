#!/usr/bin/env bash
# One prepared check for a GPU machine (see ../shared/device/README.md), run from the project's
# root with `carry: [".devdeps"]` after `../shared/device/fetch-deps.sh` here:
#   build against the machine's CUDA libtorch, run the test suite, a 1-GPU NCCL training smoke
#   run of configs/tiny.yaml through the launcher, and `tts-train bench` at full dimensions in
#   fp32 (bf16 autocast once implemented). Logs go to $OUT (default: gpu-check/); a summary table is printed last.
# Every step runs even if an earlier one failed; the exit code is non-zero if any failed.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
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
  tail -n 5 "$out/$name.log"
  summary+=("$(printf '%-14s %-6s %5ds' "$name" "$([ $rc -eq 0 ] && echo ok || echo "rc=$rc")" $((SECONDS - start)))")
  [ $rc -eq 0 ] || failed=1
  return $rc
}

if ! step build .devdeps/gpu-build.sh; then
  printf '%s\n' "${summary[@]}"
  exit 1
fi
eval "$(grep '^export LD_LIBRARY_PATH=' "$out/build.log" | tail -n 1)"
tts="$root/build-gpu/tts-train"

step tests bash -c "cd build-gpu && ctest --output-on-failure -j 8 --timeout 600"
# A real NCCL process group (one rank on the one GPU) through the launcher: all-reduce, all-gather.
step nccl_group "$tts" dist-selftest --nproc-per-node 1 --backend nccl --rounds 5

corpus="$out/corpus"
feats="$out/features"
if step corpus env MAX_CHARS=80 scripts/make_corpus.sh "$corpus" 16 &&
  step preprocess "$tts" preprocess --config configs/tiny.yaml --input "$corpus" --output "$feats"; then
  step train_nccl "$tts" train --config configs/tiny.yaml --data "$feats" --out "$out/run" \
    --nproc-per-node 1 --backend nccl --max-steps 20 --set train.device=cuda
fi

# bf16 autocast is not implemented yet (train.precision: bf16 is refused); fp32 only until then.
precisions=(fp32)
for precision in "${precisions[@]}"; do
  step "bench_$precision" "$tts" bench --config configs/ljspeech_tacotron2.yaml --batch 32 \
    --text-len 150 --frames 800 --steps 20 --device cuda --set "train.precision=$precision"
done

echo
echo "== summary (logs in $out)"
printf '%s\n' "${summary[@]}"
for precision in "${precisions[@]}"; do
  echo "bench $precision: $(grep -h '^{' "$out/bench_$precision.log" 2>/dev/null | tail -n 1)"
done
exit $failed

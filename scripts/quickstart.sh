#!/usr/bin/env bash
# The main job end to end on a fresh Debian 12 machine: install what is missing, build, make a
# small LJSpeech-format corpus with espeak-ng, preprocess it, train the tiny Tacotron-2 on 2 CPU
# ranks (on every GPU where there are GPUs), and synthesize a sentence.
# Work goes to quickstart/ (QUICKSTART_DIR overrides); STEPS sets the training length.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="${QUICKSTART_DIR:-$root/quickstart}"
build_dir="${BUILD_DIR:-$root/build}"
steps="${STEPS:-60}"
tts="$build_dir/tts-train"
config="$root/configs/tiny.yaml"

"$root/scripts/setup.sh"
"$root/scripts/build.sh"
rm -rf "$work"
mkdir -p "$work"

echo "== 1/4 corpus: 48 LJSpeech sentences spoken by espeak-ng"
MAX_CHARS=80 "$root/scripts/make_corpus.sh" "$work/corpus" 48

echo "== 2/4 preprocess: text cleaning, mel targets, feature store"
"$tts" preprocess --config "$config" --input "$work/corpus" --output "$work/feats"

gpus=0
if command -v nvidia-smi >/dev/null 2>&1; then
  gpus=$(nvidia-smi --list-gpus 2>/dev/null | wc -l || echo 0)
fi
if [ "$gpus" -gt 0 ]; then
  ranks="$gpus"
  echo "== 3/4 train: $steps steps on $gpus GPU(s)"
else
  ranks=2
  echo "== 3/4 train: $steps steps on 2 CPU ranks (Gloo)"
fi
"$tts" train --config "$config" --data "$work/feats" --out "$work/run" \
  --nproc-per-node "$ranks" --max-steps "$steps" --set train.val_interval=30 \
  --set train.checkpoint_interval=30

echo "== 4/4 synthesize"
"$tts" synthesize --checkpoint "$work/run/checkpoints/latest" \
  --text "The quick brown fox jumps over the lazy dog." --out "$work/sample.wav"
"$tts" inspect "$work/run/checkpoints/latest" | head -8

cat <<DONE

Done. Look at:
  $work/run/metrics.jsonl          loss, frames/s and phase times per log interval
  $work/run/plots/                 alignment and mel plots at each validation
  $work/sample.wav                 the synthesized sentence (a tiny model after $steps steps:
                                   expect noise-like speech, not words)
  tensorboard --logdir $work/run   if TensorBoard is installed
DONE

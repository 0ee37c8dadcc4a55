#!/usr/bin/env bash
# The main job end to end on a fresh Debian 12 machine: install what is missing, build, make a
# small LJSpeech-format corpus with espeak-ng, preprocess it, train the tiny Tacotron-2 on 2 CPU
# ranks (on every GPU where there are GPUs), synthesize a sentence
# and write the run's report (one HTML page).
# Work goes to quickstart/ (QUICKSTART_DIR overrides); STEPS sets the training length (validation,
# plots, a sample and a checkpoint every 30 steps, or once at the end of a shorter run);
# BUILD_DIR the build folder (an existing build is reused).
# Ends with exit 0 and a summary; tests/quickstart/run.sh checks both.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="${QUICKSTART_DIR:-$root/quickstart}"
build_dir="${BUILD_DIR:-$root/build}"
steps="${STEPS:-60}"
[[ "$steps" =~ ^[1-9][0-9]*$ ]] || { echo "quickstart: STEPS must be a positive number of steps, got '$steps'" >&2; exit 2; }
# A run shorter than 30 steps still validates (and plots) once, at its last step.
interval=$((steps < 30 ? steps : 30))
tts="$build_dir/tts-train"
config="$root/configs/tiny.yaml"

"$root/scripts/setup.sh"
# Only the executable this script runs, not the test and benchmark programs.
BUILD_DIR="$build_dir" "$root/scripts/build.sh" --target tts-train
rm -rf "$work"
mkdir -p "$work"

echo "== 1/5 corpus: 48 LJSpeech sentences spoken by espeak-ng"
MAX_CHARS=80 "$root/scripts/make_corpus.sh" "$work/corpus" 48

echo "== 2/5 preprocess: text cleaning, mel targets, feature store"
"$tts" preprocess --config "$config" --input "$work/corpus" --output "$work/feats"

gpus=0
if command -v nvidia-smi >/dev/null 2>&1; then
  gpus=$(nvidia-smi --list-gpus 2>/dev/null | wc -l || echo 0)
fi
if [ "$gpus" -gt 0 ]; then
  ranks="$gpus"
  echo "== 3/5 train: $steps steps on $gpus GPU(s)"
else
  ranks=2
  echo "== 3/5 train: $steps steps on 2 CPU ranks (Gloo)"
fi
"$tts" train --config "$config" --data "$work/feats" --out "$work/run" \
  --nproc-per-node "$ranks" --max-steps "$steps" --set "train.val_interval=$interval" \
  --set "train.checkpoint_interval=$interval"

echo "== 4/5 synthesize"
"$tts" synthesize --checkpoint "$work/run/checkpoints/latest" \
  --text "The quick brown fox jumps over the lazy dog." --out "$work/sample.wav" --plot
# Into a file, then its head: under pipefail, `inspect | head` fails when head closes the pipe
# before inspect has written everything (SIGPIPE, exit 141).
"$tts" inspect "$work/run/checkpoints/latest" >"$work/inspect.txt"
head -n 8 "$work/inspect.txt"

echo "== 5/5 report"
"$tts" report "$work/run" --out "$work/report.html"

# The alignment scores of each validation (metrics.jsonl, "val" records): is attention learning?
# One sed, no pipe: a run without a validation yields no lines rather than failing the script.
scores="$(sed -n -E \
  '/"kind": "val"/s/.*"step": ([0-9]+).*"diagonal_score": ([0-9]*\.?[0-9]{0,3})[0-9e-]*.*"focus_rate": ([0-9]*\.?[0-9]{0,3})[0-9e-]*.*/  step \1: diagonal score \2, focus rate \3/p' \
  "$work/run/metrics.jsonl")"

cat <<DONE

Alignment at each validation (diagonal score 1.0 = one sharp diagonal, ~1/tokens = attention
spread evenly; the tiny model passes 0.5 after about 1,800 steps: docs/benchmarks.md):
$scores

Done. Look at:
  $work/report.html                the run on one page (config, loss and alignment curves, phase
                                   times, the latest plots and audio, checkpoints); self-contained:
                                   copy it anywhere and open it in a browser
  $work/run/metrics.jsonl          loss, alignment scores, frames/s and phase times
  $work/run/plots/                 alignment and mel plots at each validation: a clean diagonal
                                   line in *_alignment.png means attention has learnt to align
  $work/run/samples/               Griffin-Lim audio of each validation's free-running synthesis
  $work/sample.wav                 the synthesized sentence (a tiny model after $steps steps:
                                   expect noise-like speech, not words), with its plots
                                   sample.alignment.png and sample.mel.png
  tensorboard --logdir $work/run   if TensorBoard is installed (scripts/setup.sh --torch pip
                                   puts one in .deps/torch-*/bin/)
DONE

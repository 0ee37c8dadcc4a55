#!/usr/bin/env bash
# Convergence benchmark: how many steps and minutes until the validation diagonal score (Coqui's
# alignment score, see include/tts/models/tacotron2/training/alignment_metrics.h) first exceeds 0.5 and 0.7.
#
#   bench/bench_convergence.sh NAME STEPS [tts-train train options...]
#
# Makes (once) an espeak-ng corpus of up to COUNT (300) LJSpeech sentences of at most MAX_CHARS
# (100) characters (135 of the 300 sample transcripts are that short) and its feature store under
# BENCH_DIR (bench-convergence/, ignored by git), trains the config
# CONFIG (configs/tiny.yaml) for STEPS steps with a validation every VAL (50) steps and the extra
# options, then prints one Markdown table row. Examples (the rows of docs/benchmarks.md):
#   bench/bench_convergence.sh tiny-no-guided 2000 --set train.guided_attention_weight=0
#   bench/bench_convergence.sh tiny 2000            # tiny.yaml: guided attention, weight 50
#   bench/bench_convergence.sh tiny-r4-2 2000 --set train.guided_attention_weight=0 \
#     --set 'train.r_schedule=[[0, 4, 4], [1000, 2, 4]]'
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=lib/feature_store.sh
source "$root/bench/lib/feature_store.sh"
if [ $# -lt 2 ]; then
  sed -n '2,15p' "$0" >&2
  exit 2
fi
name="$1"
steps="$2"
shift 2
work="${BENCH_DIR:-$root/bench-convergence}"
config="${CONFIG:-$root/configs/tiny.yaml}"
count="${COUNT:-300}"
val="${VAL:-50}"
tts="${BUILD_DIR:-$root/build}/tts-train"
[ -x "$tts" ] || { echo "bench_convergence: no $tts; run scripts/build.sh --target tts-train" >&2; exit 1; }

feats="$work/feats-$(basename "$config" .yaml)-$count"
MAX_CHARS="${MAX_CHARS:-100}" espeak_feature_store "$tts" "$config" "$work/corpus-$count" "$feats" \
  "$count" >/dev/null
run="$work/run-$name"
rm -rf "$run"
start=$(date +%s)
"$tts" train --config "$config" --data "$feats" --out "$run" --max-steps "$steps" \
  --set train.val_interval="$val" --set train.checkpoint_interval="$steps" \
  --set logging.samples=false --set logging.plots=false "$@" >"$run.log" 2>&1
end=$(date +%s)

# First validation step whose diagonal score exceeds each threshold, and the run's elapsed time
# there (train records carry elapsed_s).
python3 - "$run/metrics.jsonl" "$name" "$steps" "$((end - start))" <<'PY'
import json, sys
path, name, steps, total = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
records = [json.loads(line) for line in open(path)]
elapsed = {r["step"]: r["elapsed_s"] for r in records if r["kind"] == "train" and "elapsed_s" in r}
vals = [r for r in records if r["kind"] == "val" and r.get("diagonal_score") is not None]
def first(threshold):
    for r in vals:
        if r["diagonal_score"] > threshold:
            before = [s for s in elapsed if s <= r["step"]]
            minutes = elapsed[max(before)] / 60 if before else float("nan")
            return f"{int(r['step'])} ({minutes:.0f} min)"
    return f"> {steps}"
best = max((r["diagonal_score"] for r in vals), default=float("nan"))
last = vals[-1] if vals else {}
print(f"| {name} | {first(0.5)} | {first(0.7)} | {best:.3f} | "
      f"{last.get('diagonal_score', float('nan')):.3f} / {last.get('focus_rate', float('nan')):.3f} | "
      f"{steps} steps, {total / 60:.0f} min |")
PY

#!/usr/bin/env bash
# Characters against phonemes: one espeak-ng corpus, one config (bench/race.yaml at our defaults
# with guided attention, weight 50, as the race to alignment's "ours-defaults" row), trained once
# reading the cleaned characters and once reading espeak-ng's IPA of them, at several seeds per
# side. Each run records the validation diagonal score and loss every VAL steps; prints one
# Markdown table row per run (the step and minutes at which the score first passes 0.5 and 0.7)
# and draws the curves against steps and against wall time.
#
#   bench/race_frontends.sh [STEPS]
#
# STEPS: training steps of each run (default 3000).
# Environment: BENCH_DIR (bench-race-frontends/, ignored by git), COUNT (500 utterances: LJSpeech
# transcripts of at most 50 characters, bench/data/ljspeech_short_transcripts.txt, spoken by
# espeak-ng), VAL (50), SEEDS (train.seed of each pair of runs; default "1234 7 99"), JOBS (1: one
# run at a time; 2: each seed's two runs side by side, one core each), PYTHON (/usr/bin/python3
# with matplotlib, for the table and plot), BUILD_DIR (build/), PLOT (the PNG to draw; default
# BENCH_DIR/race_frontends.png).
# Both sides read the text through english_cleaners_corrected; characters use the english symbol
# set, phonemes espeak-ng's en-us IPA (text.frontend: phonemes, symbol_set: ipa), made once by
# preprocess. The corpus is spoken by espeak-ng itself, so its audio follows exactly the phonemes
# the phoneme side reads: an upper bound on what phonemes gain over a recorded voice.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
case "${1:-}" in -h | --help) sed -n '2,21p' "$0"; exit 0 ;; esac
steps="${1:-3000}"
work="${BENCH_DIR:-$root/bench-race-frontends}"
count="${COUNT:-500}"
val="${VAL:-50}"
seeds="${SEEDS:-1234 7 99}"
jobs="${JOBS:-1}"
python="${PYTHON:-/usr/bin/python3}"
plot="${PLOT:-$work/race_frontends.png}"
config="$root/bench/race.yaml"
tts="${BUILD_DIR:-$root/build}/tts-train"
[ -x "$tts" ] || { echo "race_frontends: no $tts; run scripts/build.sh --target tts-train" >&2; exit 1; }
case "$steps" in '' | *[!0-9]*) echo "race_frontends: STEPS is '$steps': expected a whole number" >&2; exit 2 ;; esac
case "$jobs" in 1 | 2) ;; *) echo "race_frontends: JOBS is '$jobs': expected 1 or 2" >&2; exit 2 ;; esac
for seed in $seeds; do
  case "$seed" in *[!0-9]*) echo "race_frontends: seed '$seed' in SEEDS: expected whole numbers" >&2; exit 2 ;; esac
done
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1

# text_of SIDE: sets the array text to SIDE's --set arguments (preprocess and train alike).
text_of() {
  text=(--set "text.cleaners=[english_cleaners_corrected]")
  case "$1" in
    characters) text+=(--set text.symbol_set=english --set text.frontend=characters) ;;
    phonemes) text+=(--set text.symbol_set=ipa --set text.frontend=phonemes --set text.language=en-us) ;;
  esac
}

mkdir -p "$work"
corpus="$work/corpus-$count"
[ -f "$corpus/metadata.csv" ] || "$root/scripts/make_corpus.sh" "$corpus" "$count" \
  "$root/bench/data/ljspeech_short_transcripts.txt" >"$work/corpus.log" 2>&1 ||
  { echo "race_frontends: making the corpus failed; see $work/corpus.log" >&2; exit 1; }
# One feature store per front end: the same mels, other symbol ids. A store whose metadata.tsv
# exists (written last by preprocess) is complete and kept.
for side in characters phonemes; do
  feats="$work/feats-$side"
  [ ! -f "$feats/metadata.tsv" ] || continue
  text_of "$side"
  "$tts" preprocess --config "$config" --input "$corpus" --output "$feats" "${text[@]}" \
    >"$work/preprocess-$side.log" 2>&1 ||
    { echo "race_frontends: preprocess for $side failed; see $work/preprocess-$side.log" >&2; exit 1; }
done

run() {  # SIDE SEED
  local side="$1" seed="$2" name="$1-seed$2" text
  text_of "$side"
  rm -rf "$work/run-$name"
  "$tts" train --config "$config" --data "$work/feats-$side" --out "$work/run-$name" \
    --max-steps "$steps" "${text[@]}" --set train.seed="$seed" \
    --set train.guided_attention_weight=50 --set train.val_interval="$val" \
    --set train.log_interval=10 --set train.checkpoint_interval="$steps" \
    --set logging.samples=false --set logging.plots=false >"$work/run-$name.log" 2>&1 ||
    { echo "race_frontends: the run $name failed; see $work/run-$name.log" >&2; return 1; }
}

echo "# $(date -u +%FT%TZ) $steps steps, validation every $val, $count utterances, seeds $seeds," \
  "jobs $jobs, load $(cut -d' ' -f1 /proc/loadavg)"
for seed in $seeds; do
  if [ "$jobs" -ge 2 ]; then
    run characters "$seed" &
    pid=$!
    run phonemes "$seed" || { kill "$pid" 2>/dev/null; exit 1; }
    wait "$pid"
  else
    run characters "$seed"
    run phonemes "$seed"
  fi
done
runs=()
for seed in $seeds; do
  for side in characters phonemes; do runs+=("$side-seed$seed=$work/run-$side-seed$seed/metrics.jsonl"); done
done
"$python" "$root/bench/race_report.py" --steps "$steps" --plot "$plot" \
  --title "Characters against phonemes (bench/race_frontends.sh)" "${runs[@]}"

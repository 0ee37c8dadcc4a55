#!/usr/bin/env bash
# A new voice from minutes of speech, end to end on this machine (docs/new-voice.md):
#
#   scripts/new_voice.sh [OUT]          (default: new_voice/ in the repository)
#
#  1. corpora: a base voice (BASE_VOICE, BASE_COUNT sentences) and a new voice (NEW_VOICE), both
#     spoken by espeak-ng from tests/data/ljspeech_short_transcripts.txt, and HELD_OUT sentences
#     neither voice trains on, recorded in both voices;
#  2. the base model: a tiny Tacotron-2 (configs/tiny.yaml) and a small HiFi-GAN
#     (configs/hifigan_small.yaml) trained on the base voice;
#  3. for each size of MINUTES (minutes of the new voice): Tacotron-2 fine-tuned from the base
#     model (train.freeze [embedding, encoder], a lower learning rate, early stopping), trained
#     from scratch (with the base model's step budget), and warm-started as NVIDIA's recipe does
#     (every layer but the embedding, ignore_layers); the fine-tuned model's GTA mels and the base
#     HiFi-GAN fine-tuned on them;
#  4. each model speaks the held-out sentences, and `tts-train evaluate` compares them with the
#     new voice's recordings (MCD, F0 RMSE, VDE; CER when pocketsphinx can be imported by
#     ASR_PYTHON). OUT/table.md holds the table, OUT/times.tsv the steps and wall time of each run.
#
# Sizes and lengths (environment): MINUTES ("1 5 15"), BASE_STEPS (2000), TUNE_STEPS (600),
# SCRATCH_STEPS (as BASE_STEPS: from scratch gets the base model's budget),
# VOC_STEPS (1500), VOC_TUNE_STEPS (300), BASE_COUNT (400), HELD_OUT (20), BASE_VOICE (en-us),
# NEW_VOICE (en-us+f3), TUNE_LR (5e-4), BUILD_DIR (build/; an existing build is reused),
# SETUP=0 skips scripts/setup.sh and the build (a built tts-train must be there).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="${1:-$root/new_voice}"
build_dir="${BUILD_DIR:-$root/build}"
minutes="${MINUTES:-1 5 15}"
base_steps="${BASE_STEPS:-2000}"
tune_steps="${TUNE_STEPS:-600}"
scratch_steps="${SCRATCH_STEPS:-${BASE_STEPS:-2000}}"
voc_steps="${VOC_STEPS:-1500}"
voc_tune_steps="${VOC_TUNE_STEPS:-300}"
base_count="${BASE_COUNT:-400}"
held_out="${HELD_OUT:-20}"
base_voice="${BASE_VOICE:-en-us}"
new_voice="${NEW_VOICE:-en-us+f3}"
tune_lr="${TUNE_LR:-5e-4}"
transcripts="$root/tests/data/ljspeech_short_transcripts.txt"
tacotron="$root/configs/tiny.yaml"
hifigan="$root/configs/hifigan_small.yaml"
tts="$build_dir/tts-train"

for n in "$base_steps" "$tune_steps" "$scratch_steps" "$voc_steps" "$voc_tune_steps" "$base_count" "$held_out"; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "new_voice: step and sentence counts must be positive numbers, got '$n'" >&2; exit 2; }
done
for m in $minutes; do
  [[ "$m" =~ ^[1-9][0-9]*$ ]] || { echo "new_voice: MINUTES must be whole minutes, got '$m'" >&2; exit 2; }
done
if [ "${SETUP:-1}" != 0 ]; then
  "$root/scripts/setup.sh"
  BUILD_DIR="$build_dir" "$root/scripts/build.sh" --target tts-train
fi
[ -x "$tts" ] || { echo "new_voice: no $tts; run without SETUP=0 to build it" >&2; exit 1; }

asr_python="${ASR_PYTHON:-}"
if [ -z "$asr_python" ]; then
  for candidate in "$root"/.deps/torch-*/bin/python python3; do
    if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c "import pocketsphinx" 2>/dev/null; then
      asr_python="$candidate"
      break
    fi
  done
fi

mkdir -p "$work"
work="$(cd "$work" && pwd)"
times="$work/times.tsv"
[ -f "$times" ] || printf 'run\tsteps\tseconds\n' >"$times"
log() { echo "== $*"; }
# Runs a command once: a finished step leaves OUT/.done/NAME, so a rerun goes on where it stopped.
once() {
  local name="$1"
  shift
  [ -f "$work/.done/$name" ] && return 0
  "$@"
  mkdir -p "$work/.done"
  touch "$work/.done/$name"
}
# `train` with its wall time and its last step in times.tsv.
timed_train() {
  local name="$1"
  shift
  local start end step
  start=$(date +%s)
  "$tts" train "$@" --out "$work/runs/$name" >"$work/logs/$name.log" 2>&1 ||
    { tail -n 20 "$work/logs/$name.log" >&2; return 1; }
  end=$(date +%s)
  step=$(sed -n 's/.* at step \([0-9]*\) (epoch.*/\1/p' "$work/logs/$name.log" | tail -n 1)
  printf '%s\t%s\t%s\n' "$name" "${step:-?}" $((end - start)) >>"$times"
}
mkdir -p "$work/logs" "$work/runs" "$work/speech" "$work/eval"

log "1/5 corpora: $base_voice (base, $base_count sentences), $new_voice (new voice), $held_out held-out sentences"
make_corpora() {
  local lines="$work/lines"
  mkdir -p "$lines"
  head -n "$held_out" "$transcripts" >"$lines/held_out.txt"
  sed -n "$((held_out + 1)),$((held_out + base_count))p" "$transcripts" >"$lines/base.txt"
  tail -n "+$((held_out + base_count + 1))" "$transcripts" >"$lines/new.txt"
  VOICE="$base_voice" "$root/scripts/make_corpus.sh" "$work/base_corpus" "$base_count" "$lines/base.txt" >/dev/null
  # Enough sentences for the largest size at 2 s a sentence (espeak-ng speaks these in 2-7 s).
  local new_count largest=0
  for m in $minutes; do [ "$m" -le "$largest" ] || largest="$m"; done
  new_count=$((largest * 30 + 10))
  VOICE="$new_voice" "$root/scripts/make_corpus.sh" "$work/new_corpus" "$new_count" "$lines/new.txt" >/dev/null
  # The held-out sentences in both voices, named by their line (N.wav: what synthesize
  # --text-file writes for sentence N).
  for voice_dir in "$new_voice:held_out_new" "$base_voice:held_out_base"; do
    VOICE="${voice_dir%%:*}" "$root/scripts/make_corpus.sh" "$work/${voice_dir#*:}" "$held_out" "$lines/held_out.txt" >/dev/null
  done
  mkdir -p "$work/reference" "$work/base_voice_reference"
  local n=0 id text
  : >"$work/held_out_texts.tsv"
  : >"$work/held_out_sentences.txt"
  while IFS='|' read -r id text; do
    n=$((n + 1))
    cp "$work/held_out_new/wavs/$id.wav" "$work/reference/$n.wav"
    cp "$work/held_out_base/wavs/$id.wav" "$work/base_voice_reference/$n.wav"
    printf '%s\t%s\n' "$n" "$text" >>"$work/held_out_texts.tsv"
    printf '%s\n' "$text" >>"$work/held_out_sentences.txt"
  done <"$lines/held_out.txt"
  # Each size: the new voice's first sentences up to that many minutes (16-bit mono 22050 Hz:
  # 44,100 bytes a second after the 44-byte header).
  for m in $minutes; do
    local dir="$work/new_${m}min" total=0 size
    mkdir -p "$dir/wavs"
    : >"$dir/metadata.csv"
    while IFS='|' read -r id raw normalized; do
      [ "$total" -lt $((m * 60 * 44100)) ] || break
      size=$(stat -c %s "$work/new_corpus/wavs/$id.wav")
      total=$((total + size - 44))
      ln -f "$work/new_corpus/wavs/$id.wav" "$dir/wavs/$id.wav"
      printf '%s|%s|%s\n' "$id" "$raw" "$normalized" >>"$dir/metadata.csv"
    done <"$work/new_corpus/metadata.csv"
    [ "$total" -ge $((m * 60 * 44100)) ] ||
      { echo "new_voice: the new voice's corpus holds $((total / 44100)) s, less than $m min" >&2; return 1; }
  done
}
once corpora make_corpora

log "2/5 preprocess"
once pre_base "$tts" preprocess --config "$tacotron" --input "$work/base_corpus" --output "$work/feats/base" >"$work/logs/pre_base.log" 2>&1
once pre_held_out "$tts" preprocess --config "$tacotron" --input "$work/held_out_new" --output "$work/feats/held_out" >"$work/logs/pre_held_out.log" 2>&1
once pre_base_voc "$tts" preprocess --config "$hifigan" --input "$work/base_corpus" --output "$work/feats/base_voc" >"$work/logs/pre_base_voc.log" 2>&1
for m in $minutes; do
  # Validation of a fine-tune: 2 utterances (the held-out sentences are the evaluation).
  once "pre_${m}min" "$tts" preprocess --config "$tacotron" --set data.val_size=2 \
    --input "$work/new_${m}min" --output "$work/feats/new_${m}min" >"$work/logs/pre_${m}min.log" 2>&1
done

log "3/5 base models: Tacotron-2 $base_steps steps, HiFi-GAN $voc_steps steps ($base_voice)"
once base timed_train base --config "$tacotron" --data "$work/feats/base" --max-steps "$base_steps" \
  --nproc-per-node 2 --set train.val_interval=250 --set train.checkpoint_interval=250
once base_voc timed_train base_voc --config "$hifigan" --data "$work/feats/base_voc" \
  --max-steps "$voc_steps" --set train.val_interval=500 --set train.checkpoint_interval=500
base="$work/runs/base/checkpoints/latest"
base_voc="$work/runs/base_voc/checkpoints/latest"

log "4/5 the new voice: fine-tuned, from scratch, NVIDIA's warm start; the vocoder fine-tuned on GTA mels"
# Every Tacotron-2 run of the new voice validates every 50 steps (or 6 times in a shorter run),
# saves each new best and stops after 4 validations without one; its best checkpoint is the one
# evaluated.
every=$((tune_steps / 6 > 0 ? tune_steps / 6 : 1))
every=$((every < 50 ? every : 50))
selection=(--set "train.val_interval=$every" --set "train.checkpoint_interval=$scratch_steps"
  --set train.early_stopping=4 --set logging.samples=false)
fine_tune=(--init-from "$base" --set "train.learning_rate=$tune_lr" --set "train.lr_min=0"
  --set "train.freeze=[embedding,encoder]" --set train.validate_at_start=true)
best() { python3 "$root/scripts/lib/new_voice_table.py" best "$work/runs/$1" "$2"; }
for m in $minutes; do
  data="$work/feats/new_${m}min"
  once "tuned_${m}min" timed_train "tuned_${m}min" --config "$tacotron" --data "$data" \
    --max-steps "$tune_steps" "${fine_tune[@]}" "${selection[@]}"
  once "scratch_${m}min" timed_train "scratch_${m}min" --config "$tacotron" --data "$data" \
    --max-steps "$scratch_steps" "${selection[@]}"
  # NVIDIA's warm start (train.py --warm_start): every tensor but ignore_layers' embedding.weight,
  # everything trains at the run's learning rate.
  once "nvidia_${m}min" timed_train "nvidia_${m}min" --config "$tacotron" --data "$data" \
    --max-steps "$tune_steps" --init-from "$base" --init-skip embedding.weight "${selection[@]}"
  once "gta_${m}min" "$tts" gta --checkpoint "$(best "tuned_${m}min" "$base")" \
    --data "$data" --out "$work/feats/gta_${m}min" --wavs "$work/new_${m}min" >"$work/logs/gta_${m}min.log" 2>&1
  once "voc_${m}min" timed_train "voc_${m}min" --config "$hifigan" --data "$work/feats/gta_${m}min" \
    --max-steps "$voc_tune_steps" --init-from "$base_voc" --set "train.val_interval=$voc_tune_steps" \
    --set "train.checkpoint_interval=$voc_tune_steps"
done

log "5/5 evaluate on the $held_out held-out sentences"
asr=()
[ -z "$asr_python" ] || asr=(--text "$work/held_out_texts.tsv" --asr pocketsphinx --asr-python "$asr_python")
[ -n "$asr_python" ] || echo "new_voice: pocketsphinx is not importable (ASR_PYTHON): no CER" >&2
# evaluate NAME CLIPS: the held-out clips of a model against the new voice's recordings.
evaluate() {
  "$tts" evaluate --reference "$work/reference" --synthesized "$2" --out "$work/eval/$1" "${asr[@]}" \
    >"$work/logs/eval_$1.log" 2>&1 || { tail -n 20 "$work/logs/eval_$1.log" >&2; return 1; }
}
# speak NAME CHECKPOINT [VOCODER]: the held-out sentences (Griffin-Lim without a vocoder), then
# their evaluation.
speak() {
  local vocoder=()
  [ -z "${3:-}" ] || vocoder=(--vocoder "$3")
  "$tts" synthesize --checkpoint "$2" "${vocoder[@]}" --text-file "$work/held_out_sentences.txt" \
    --out "$work/speech/$1" >"$work/logs/speak_$1.log" 2>&1 ||
    { tail -n 20 "$work/logs/speak_$1.log" >&2; return 1; }
  evaluate "$1" "$work/speech/$1"
}
# The new voice's own mels through the base HiFi-GAN (copy synthesis): what the vocoder alone
# costs, named N as the references are.
copy_synthesis() {
  local n=0 id mels=()
  mkdir -p "$work/held_out_mels"
  while IFS='|' read -r id _; do
    n=$((n + 1))
    cp "$work/feats/held_out/mels/$id.npy" "$work/held_out_mels/$n.npy"
    mels+=(--mel "$work/held_out_mels/$n.npy")
  done <"$work/lines/held_out.txt"
  "$tts" vocode --checkpoint "$base_voc" "${mels[@]}" --out "$work/speech/copy_base_voc" \
    >"$work/logs/vocode_copy.log" 2>&1 || { tail -n 20 "$work/logs/vocode_copy.log" >&2; return 1; }
  evaluate copy_base_voc "$work/speech/copy_base_voc"
}
once eval_new_voice evaluate new_voice "$work/reference"
once eval_base_voice evaluate base_voice "$work/base_voice_reference"
once eval_copy_base_voc copy_synthesis
# Each acoustic model with Griffin-Lim (what it predicts, whatever the vocoder) and with the base
# HiFi-GAN; the fine-tuned one also with the HiFi-GAN fine-tuned on its GTA mels.
once eval_base_gl speak base_gl "$base"
once eval_base_hifigan speak base_hifigan "$base" "$base_voc"
for m in $minutes; do
  tuned="$(best "tuned_${m}min" "$base")"
  once "eval_tuned_${m}min_gl" speak "tuned_${m}min_gl" "$tuned"
  once "eval_tuned_${m}min_hifigan" speak "tuned_${m}min_hifigan" "$tuned" "$base_voc"
  once "eval_tuned_${m}min_tuned_hifigan" speak "tuned_${m}min_tuned_hifigan" "$tuned" \
    "$work/runs/voc_${m}min/checkpoints/latest"
  for run in scratch nvidia; do
    once "eval_${run}_${m}min_gl" speak "${run}_${m}min_gl" \
      "$(best "${run}_${m}min" "$work/runs/${run}_${m}min/checkpoints/latest")"
  done
done

python3 "$root/scripts/lib/new_voice_table.py" table "$work" "$minutes" >"$work/table.md"
cat "$work/table.md"
echo "new_voice: done; the table is $work/table.md, each run's log in $work/logs"

#!/usr/bin/env bash
# Makes a small corpus with espeak-ng (22050 Hz, 16-bit mono PCM WAVs) from LJSpeech transcripts.
#
#   scripts/make_corpus.sh OUT [COUNT] [TRANSCRIPTS]
#
# COUNT utterances (default 40) are taken in order from TRANSCRIPTS (lines "ID|text"; default:
# tests/data/ljspeech_sample_transcripts.txt, 300 LJSpeech transcripts). MAX_CHARS=N keeps only
# transcripts of at most N characters (short clips make fast tests). VOICE=NAME speaks them with
# that espeak-ng voice (de, es, en-us+f3, ...; default: espeak-ng's default, English).
#
# VOICES="V1 V2 ..." makes a corpus of several speakers instead: each voice speaks the next COUNT
# transcripts and is the speaker named after it ('+' as '_': en-us+f3 is en-us_f3). LAYOUT says
# how the corpus is laid out (docs/corpora.md):
#   ljspeech  OUT/metadata.csv (ID|raw|normalized) and OUT/wavs/ID.wav (the default; one voice)
#   vctk      OUT/txt/SPK/SPK_NNN.txt and OUT/wav48/SPK/SPK_NNN.wav
#   libritts  OUT/SPK/1/SPK_1_NNN.wav and SPK_1_NNN.normalized.txt
#   csv       OUT/metadata.csv (wavs/ID.wav|SPK|text) and OUT/wavs/ID.wav
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
if [ $# -lt 1 ]; then
  echo "usage: $0 OUT [COUNT] [TRANSCRIPTS]" >&2
  exit 2
fi
out="$1"
count="${2:-40}"
transcripts="${3:-$root/tests/data/ljspeech_sample_transcripts.txt}"
max_chars="${MAX_CHARS:-100000}"
layout="${LAYOUT:-ljspeech}"
voices="${VOICES:-${VOICE:-}}"
case "$layout" in
  ljspeech | vctk | libritts | csv) ;;
  *) echo "make_corpus: LAYOUT=$layout: expected ljspeech, vctk, libritts or csv" >&2; exit 2 ;;
esac
command -v espeak-ng >/dev/null || { echo "make_corpus: espeak-ng is missing; run scripts/setup.sh" >&2; exit 1; }
[ -f "$transcripts" ] || { echo "make_corpus: no transcripts file '$transcripts'" >&2; exit 1; }
# shellcheck disable=SC2206  # voices are words
voice_list=($voices)
[ "${#voice_list[@]}" -gt 0 ] || voice_list=("")
if [ "$layout" = ljspeech ] && [ "${#voice_list[@]}" -gt 1 ]; then
  echo "make_corpus: an ljspeech-layout corpus has one speaker; set LAYOUT=vctk, libritts or csv" >&2
  exit 2
fi

mkdir -p "$out"
table="$out/metadata.csv.tmp"
[ "$layout" = vctk ] || [ "$layout" = libritts ] || : >"$table"
made=0
exec 3<"$transcripts"
for voice in "${voice_list[@]}"; do
  speaker="${voice//+/_}"
  speaker="${speaker:-speaker}"
  voice_args=()
  [ -z "$voice" ] || voice_args=(-v "$voice")
  spoken=0
  while [ "$spoken" -lt "$count" ] && IFS='|' read -r id text <&3; do
    [ -n "$id" ] || continue
    [ "${#text}" -le "$max_chars" ] || continue
    number=$(printf '%03d' $((spoken + 1)))
    case "$layout" in
      ljspeech) wav="$out/wavs/$id.wav" ;;
      vctk) id="${speaker}_$number"; wav="$out/wav48/$speaker/$id.wav" ;;
      libritts) id="${speaker}_1_$number"; wav="$out/$speaker/1/$id.wav" ;;
      csv) id="${speaker}_$number"; wav="$out/wavs/$id.wav" ;;
    esac
    mkdir -p "$(dirname "$wav")"
    espeak-ng ${voice_args[@]+"${voice_args[@]}"} -s 170 -w "$wav" -- "$text"
    case "$layout" in
      ljspeech) printf '%s|%s|%s\n' "$id" "$text" "$text" >>"$table" ;;
      vctk) mkdir -p "$out/txt/$speaker"; printf '%s\n' "$text" >"$out/txt/$speaker/$id.txt" ;;
      libritts) printf '%s' "$text" >"$out/$speaker/1/$id.normalized.txt" ;;
      csv) printf 'wavs/%s.wav|%s|%s\n' "$id" "$speaker" "$text" >>"$table" ;;
    esac
    spoken=$((spoken + 1))
    made=$((made + 1))
  done
done
exec 3<&-
[ ! -f "$table" ] || mv "$table" "$out/metadata.csv"
echo "make_corpus: $made utterances of ${#voice_list[@]} speaker(s) in $out ($layout layout)"

#!/usr/bin/env bash
# Makes a small LJSpeech-format corpus with espeak-ng: OUT/metadata.csv (ID|raw|normalized) and
# OUT/wavs/ID.wav (22050 Hz, 16-bit mono PCM), from LJSpeech transcripts.
#
#   scripts/make_corpus.sh OUT [COUNT] [TRANSCRIPTS]
#
# COUNT utterances (default 40) are taken in order from TRANSCRIPTS (lines "ID|text"; default:
# tests/data/ljspeech_sample_transcripts.txt, 300 LJSpeech transcripts). MAX_CHARS=N keeps only
# transcripts of at most N characters (short clips make fast tests). VOICE=NAME speaks them with
# that espeak-ng voice (de, es, ...; default: espeak-ng's default, English).
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
voice=()
[ -z "${VOICE:-}" ] || voice=(-v "$VOICE")
command -v espeak-ng >/dev/null || { echo "make_corpus: espeak-ng is missing; run scripts/setup.sh" >&2; exit 1; }
[ -f "$transcripts" ] || { echo "make_corpus: no transcripts file '$transcripts'" >&2; exit 1; }

mkdir -p "$out/wavs"
metadata="$out/metadata.csv.tmp"
: >"$metadata"
made=0
while IFS='|' read -r id text; do
  [ -n "$id" ] || continue
  [ "${#text}" -le "$max_chars" ] || continue
  espeak-ng ${voice[@]+"${voice[@]}"} -s 170 -w "$out/wavs/$id.wav" -- "$text"
  printf '%s|%s|%s\n' "$id" "$text" "$text" >>"$metadata"
  made=$((made + 1))
  [ "$made" -lt "$count" ] || break
done <"$transcripts"
mv "$metadata" "$out/metadata.csv"
echo "make_corpus: $made utterances in $out"

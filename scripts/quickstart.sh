#!/usr/bin/env bash
# The main job end to end on a fresh Debian 12 machine: install what is missing, build, make a
# small LJSpeech-format corpus with espeak-ng, and run every tts-train stage that exists on it.
# Work goes to quickstart/ (QUICKSTART_DIR overrides).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="${QUICKSTART_DIR:-$root/quickstart}"
build_dir="${BUILD_DIR:-$root/build}"
tts="$build_dir/tts-train"
config="$root/configs/tiny.yaml"

"$root/scripts/setup.sh"
"$root/scripts/build.sh"
mkdir -p "$work"

echo "== corpus: LJSpeech-format, espeak-ng"
MAX_CHARS=80 "$root/scripts/make_corpus.sh" "$work/corpus" 24

echo "== config: the resolved tiny config"
"$tts" config --config "$config" >"$work/config.yaml"
echo "wrote $work/config.yaml"

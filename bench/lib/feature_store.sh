# shellcheck shell=bash
# Sourced by the benchmark scripts that train on a generated corpus (bench_convergence.sh,
# bench_scaling.sh, race_to_alignment.sh). Reads $root, which the sourcing script sets.
# shellcheck disable=SC2154  # root comes from that script

# espeak_feature_store TTS CONFIG CORPUS FEATS COUNT [TRANSCRIPTS]: makes, once, CORPUS (COUNT
# utterances spoken by espeak-ng with scripts/make_corpus.sh, from TRANSCRIPTS or its default;
# MAX_CHARS passes through the environment) and FEATS, its feature store under CONFIG. A store
# whose metadata.tsv exists (written last by preprocess) is complete and kept as it is.
espeak_feature_store() {
  local tts="$1" config="$2" corpus="$3" feats="$4" count="$5"
  shift 5
  [ ! -f "$feats/metadata.tsv" ] || return 0
  [ -f "$corpus/metadata.csv" ] || "$root/scripts/make_corpus.sh" "$corpus" "$count" "$@"
  "$tts" preprocess --config "$config" --input "$corpus" --output "$feats"
}

# shellcheck shell=bash
# Sourced by the scripts that time our training step beside a peer's, in pairs (step_pairs.sh,
# wavenet_step_pairs.sh, hifigan_step_pairs.sh): the machine is shared, so the ratio of a pair
# measured back to back is what counts.
#
# The sourcing script sets its defaults (peer python tts small rss batch frames steps threads
# pairs) and may define `extra_option OPTION [VALUE]`, which handles an option of its own and sets
# `consumed` to the number of arguments it took (0: not its option). Then:
#   pair_options NAME "$@"   parses the shared options (--peer --python --tts --small --rss --batch
#                            --frames --steps --threads --pairs --isa) and sets the thread and
#                            instruction-set variables
#                            (--isa avx2: both sides' libtorch kernels, BLAS and our kernels use no
#                            wider vectors than AVX2 + FMA, as on an AVX2-only host: ATEN_CPU_
#                            CAPABILITY, OPENBLAS_CORETYPE=Haswell, MKL_ENABLE_INSTRUCTIONS=AVX2)
#   run_pairs LABEL          times "$tts" "${ours_args[@]}" and "$python" "${peer_args[@]}" PAIRS
#                            times, one after the other, and prints one line per pair: the load,
#                            each side's median step, LABEL/ours, and each side's parameter count
#                            and (with --rss) peak resident memory where the side prints them.
# Either side prints "median_step_s" (and "params") as a JSON line or as "key value" lines.
# shellcheck disable=SC2154,SC2034  # the variables are the sourcing script's

pair_options() {
  local name="$1"
  shift
  while [ $# -gt 0 ]; do
    consumed=0
    if declare -F extra_option >/dev/null; then extra_option "$@"; fi
    if [ "$consumed" -gt 0 ]; then shift "$consumed"; continue; fi
    case "$1" in
      --small) small=1; shift; continue ;;
      --rss) rss=1; shift; continue ;;
    esac
    [ $# -ge 2 ] || { echo "$name: $1 needs a value (see the header of $0)" >&2; exit 2; }
    case "$1" in
      --peer) peer="$2" ;;
      --python) python="$2" ;;
      --tts) tts="$2" ;;
      --batch) batch="$2" ;;
      --frames) frames="$2" ;;
      --steps) steps="$2" ;;
      --threads) threads="$2" ;;
      --pairs) pairs="$2" ;;
      --isa) isa="$2" ;;
      *) echo "$name: unknown argument '$1' (see the header of $0)" >&2; exit 2 ;;
    esac
    shift 2
  done
  local value
  for value in "$batch" "$frames" "$steps" "$threads" "$pairs"; do
    case "$value" in '' | *[!0-9]*)
      echo "$name: '$value' is not a whole number (--batch --frames --steps --threads --pairs)" >&2
      exit 2 ;;
    esac
  done
  [ -x "$tts" ] || { echo "$name: no $tts (--tts; scripts/build.sh --target tts-train)" >&2; exit 2; }
  export OPENBLAS_NUM_THREADS="$threads" OMP_NUM_THREADS="$threads" MKL_NUM_THREADS="$threads"
  case "${isa:-}" in
    '') ;;
    avx2) export ATEN_CPU_CAPABILITY=avx2 OPENBLAS_CORETYPE=Haswell MKL_ENABLE_INSTRUCTIONS=AVX2 ;;
    *) echo "$name: --isa takes avx2 (the CPU's widest is the default), got '$isa'" >&2; exit 2 ;;
  esac
}

# The CPU, its widest vector extension and the limit --isa set: what the ratios ran on.
pair_cpu() {
  local model widest=sse
  model="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
  grep -qw avx2 /proc/cpuinfo && widest=avx2
  grep -qw avx512f /proc/cpuinfo && widest=avx512f
  echo "cpu $model, widest $widest, limited to ${isa:-none}"
}

# pair_field KEY TEXT: KEY's number in TEXT ("KEY": N or KEY N).
pair_field() {
  sed -nE "s/.*(\"$1\": |^$1 )([0-9.]+).*/\\2/p" <<<"$2" | head -n 1
}

# Runs "$@", prints its stdout; with --rss, appends "peak_rss_mb N".
pair_measure() {
  if [ "$rss" = 1 ]; then
    local log
    log="$(mktemp)"
    /usr/bin/time -v -o "$log" "$@"
    awk '/Maximum resident set size/ {printf "peak_rss_mb %.0f\n", $NF / 1024}' "$log"
    rm -f "$log"
  else
    "$@"
  fi
}

run_pairs() {
  local label="$1" pair load ours theirs ours_s theirs_s line driver arg
  for arg in "${peer_args[@]}"; do
    case "$arg" in *.py) driver="$(basename "$arg")"; break ;; esac
  done
  echo "# ours: $tts; $label: $python ${driver:-${peer_args[0]}} ($("$python" -c \
    'import torch; print("torch", torch.__version__)'))"
  for pair in $(seq 1 "$pairs"); do
    load="$(cut -d' ' -f1 /proc/loadavg)"
    ours="$(pair_measure "$tts" "${ours_args[@]}" 2>/dev/null)" ||
      { echo "pair $pair: ours failed: $tts ${ours_args[*]}" >&2; return 1; }
    theirs="$(pair_measure "$python" "${peer_args[@]}" 2>/dev/null)" ||
      { echo "pair $pair: $label's side failed: $python ${peer_args[*]}" >&2; return 1; }
    ours_s="$(pair_field median_step_s "$ours")"
    theirs_s="$(pair_field median_step_s "$theirs")"
    line="pair $pair load $load ours $ours_s s $label $theirs_s s $label/ours"
    line+=" $(awk -v a="$theirs_s" -v b="$ours_s" 'BEGIN {printf "%.2f", a / b}')"
    if [ -n "$(pair_field params "$theirs")" ]; then
      line+=" params $(pair_field params "$ours")/$(pair_field params "$theirs")"
    fi
    if [ "$rss" = 1 ]; then
      line+=" rss_mb ours $(pair_field peak_rss_mb "$ours") $label $(pair_field peak_rss_mb "$theirs")"
    fi
    echo "$line"
  done
}

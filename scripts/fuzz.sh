#!/usr/bin/env bash
# Runs kiln's libFuzzer targets (fuzz/, docs/robustness.md).
#   scripts/fuzz.sh TARGET SECONDS   one target for SECONDS on its corpus
#   scripts/fuzz.sh all SECONDS      every target, as many at once as there are cores
#   scripts/fuzz.sh regressions      every target once on each input of fuzz/regressions/TARGET/
# Builds the targets in the sanitized configuration first (scripts/build.sh asan
# kiln_fuzz_targets), or uses the build folder $KILN_FUZZ_BUILD when set. The seeds in
# fuzz/corpus/TARGET/ are only read; inputs the fuzzer finds go to build/fuzz-corpus/TARGET/,
# crashing inputs to build/fuzz-crashes/TARGET/, the log with libFuzzer's final statistics to
# build/fuzz-logs/TARGET.log.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
targets=(onnx ir_text npy params artifact top_mlir)
usage() {
  echo "usage: $0 {${targets[*]// /|}|all} SECONDS | $0 regressions" >&2
  exit 2
}
(($# >= 1)) || usage
which=$1
seconds=${2:-}
[[ $which == regressions || $seconds =~ ^[0-9]+$ ]] || usage

build=${KILN_FUZZ_BUILD:-$root/build/asan}
if [[ -z ${KILN_FUZZ_BUILD:-} ]]; then
  mkdir -p "$root/build"
  "$root/scripts/build.sh" asan kiln_fuzz_targets >"$root/build/fuzz-build.log" 2>&1 || {
    tail -n 40 "$root/build/fuzz-build.log" >&2
    echo "fuzz: the fuzz build failed (log: build/fuzz-build.log)" >&2
    exit 1
  }
fi

# The artifact target loads graph.json and params.bin beside one real kernel library: the
# bundled CNN compiled once by a release kiln, when there is one.
artifact_lib() {
  local kiln=$root/build/release/kiln out=$root/build/fuzz-artifact/cnn.kiln
  [[ -f $out/lib.so ]] || { [[ -x $kiln ]] && "$kiln" compile "$root/examples/cnn/model.onnx" -o "$out" >/dev/null; } || true
  [[ -f $out/lib.so ]] && echo "$out/lib.so"
  return 0
}
export KILN_FUZZ_ARTIFACT_LIB=${KILN_FUZZ_ARTIFACT_LIB:-$(artifact_lib)}
# Leaks are findings; a bad input must never need more than 2 GB or 10 s.
limits=(-rss_limit_mb=2048 -malloc_limit_mb=2048 -timeout=10)

run_target() {
  local target=$1 corpus=$root/build/fuzz-corpus/$1 crashes=$root/build/fuzz-crashes/$1/
  local log=$root/build/fuzz-logs/$1.log
  mkdir -p "$corpus" "$crashes" "$(dirname "$log")"
  local start=$SECONDS status=0 TIMEFORMAT='%3U %3S'
  { time "$build/fuzz/fuzz_$target" "${limits[@]}" -max_total_time="$seconds" -print_final_stats=1 \
    -artifact_prefix="$crashes" "$corpus" "$root/fuzz/corpus/$target" >"$log" 2>&1; } 2>"$log.cpu" || status=$?
  if ((status != 0)); then
    tail -n 60 "$log" >&2
    echo "fuzz $target: FAILED (input kept in $crashes, log $log)" >&2
    return 1
  fi
  local execs cpu
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  cpu=$(awk '{ printf "%.0f", $1 + $2 }' "$log.cpu")
  echo "fuzz $target: ${execs:-?} executions in $((SECONDS - start)) s ($cpu CPU-seconds), no crash" \
    "(corpus $corpus)"
}

run_regressions() {
  local target=$1 dir=$root/fuzz/regressions/$1
  compgen -G "$dir/*" >/dev/null || return 0
  if ! "$build/fuzz/fuzz_$target" "${limits[@]}" "$dir"/* >"$root/build/fuzz-logs/$target.regressions.log" 2>&1; then
    tail -n 60 "$root/build/fuzz-logs/$target.regressions.log" >&2
    echo "fuzz $target: a regression input fails again" >&2
    return 1
  fi
  echo "fuzz $target: $(ls "$dir" | wc -l) regression inputs pass"
}

mkdir -p "$root/build/fuzz-logs"
status=0
case "$which" in
  all)
    # One target per core at a time (each fuzzer is single-threaded), in batches: every run
    # lasts SECONDS.
    cores=$(nproc)
    for ((i = 0; i < ${#targets[@]}; i += cores)); do
      pids=()
      for t in "${targets[@]:i:cores}"; do
        run_target "$t" &
        pids+=($!)
      done
      for pid in "${pids[@]}"; do wait "$pid" || status=1; done
    done
    ;;
  regressions) for t in "${targets[@]}"; do run_regressions "$t" || status=1; done ;;
  *)
    [[ " ${targets[*]} " == *" $which "* ]] || usage
    run_target "$which" || status=1
    ;;
esac
exit $status

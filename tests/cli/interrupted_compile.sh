#!/usr/bin/env bash
# `kiln compile` interrupted while the C compiler runs: SIGINT, SIGTERM and SIGHUP end it with
# 128 + the signal, leaving no artifact under the requested name, no partial folder beside it,
# no entry, partial or failed, in the kernel cache and no C compiler still running. After SIGKILL (which no
# program can answer) the next compile removes what the killed one left.
set -uo pipefail
kiln=$1 src=$2
source "$(dirname "${BASH_SOURCE[0]}")/lib/expect.sh"
model=$src/examples/cnn/model.onnx

# Starts a compile with an empty cache and returns once the C compiler works on its kernels.
start_compile() {
  rm -rf "$tmp/cache" "$tmp/out"
  mkdir -p "$tmp/out"
  KILN_CACHE_DIR=$tmp/cache "$kiln" compile "$model" -o "$tmp/out/model.kiln" >/dev/null 2>"$tmp/err" &
  compile_pid=$!
  for _ in $(seq 1 1000); do
    compgen -G "$tmp/cache/.*.partial-*/kernels.c" >/dev/null && return 0
    kill -0 "$compile_pid" 2>/dev/null || break
    sleep 0.01
  done
  fail "the compile never reached the C compiler"
  return 1
}

partials() { find "$tmp/out" "$tmp/cache" -name '.*partial*' 2>/dev/null; }

for sig in INT TERM HUP; do
  start_compile || continue
  kill -s "$sig" "$compile_pid"
  wait "$compile_pid"
  status=$?
  expected=$((128 + $(kill -l "$sig")))
  # kiln waits for its C compilers to be gone before it exits: no grace period here.
  before=$failures
  if [[ $status -ne $expected ]]; then fail "SIG$sig: exit status $status, expected $expected"; fi
  if [[ -e $tmp/out/model.kiln ]]; then fail "SIG$sig: an artifact was left under the requested name"; fi
  if [[ -n $(partials) ]]; then fail "SIG$sig: partial files left: $(partials)"; fi
  entries=$(find "$tmp/cache" -mindepth 1 -maxdepth 1 2>/dev/null)
  if [[ -n $entries ]]; then fail "SIG$sig: the cache keeps an entry of the interrupted build: $entries"; fi
  if pgrep -f "$tmp/cache" >/dev/null; then fail "SIG$sig: a C compiler still runs: $(pgrep -af "$tmp/cache")"; fi
  [[ $failures -eq $before ]] && echo "ok SIG$sig: status $status, nothing left behind"
done

# SIGKILL: the killed run's partial folders stay until the next compile in the same places.
if start_compile; then
  kill -s KILL "$compile_pid"
  wait "$compile_pid" 2>/dev/null
  pkill -f "$tmp/cache" 2>/dev/null  # its orphaned C compiler
  sleep 0.2
  if [[ -z $(partials) ]]; then fail "SIGKILL: expected the killed run to leave a partial cache entry"; fi
  KILN_CACHE_DIR=$tmp/cache "$kiln" compile "$model" -o "$tmp/out/model.kiln" >/dev/null 2>"$tmp/err" ||
    fail "the compile after SIGKILL failed: $(cat "$tmp/err")"
  if [[ ! -f $tmp/out/model.kiln/lib.so ]]; then fail "the compile after SIGKILL wrote no artifact"; fi
  if [[ -n $(partials) ]]; then fail "the compile after SIGKILL left the killed run's partials: $(partials)"; fi
  [[ $failures -eq 0 ]] && echo "ok SIGKILL: the next compile removed what the killed one left"
fi

[[ $failures -eq 0 ]] || { echo "$failures failure(s)"; exit 1; }

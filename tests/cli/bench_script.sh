#!/usr/bin/env bash
# bench/run.sh runs end to end on the MLP alone (one round, two timed runs, no warm-up) into a
# scratch results file: the table has the MLP's row with both engines' times at 1 and 2
# threads, the geometric-mean row, ONNX Runtime's fixed cost per call and the efficiency row
# (the MLP's three 32x1024x1024 products are 0.201 GFLOP). No timing is checked.
set -uo pipefail
kiln=$1 root=$2
source "$root/tests/cli/lib/expect.sh"

results_before=$(stat -c %Y "$root/bench/results.md" 2>/dev/null || echo none)
MODELS=mlp ROUNDS=1 REPEAT=2 WARMUP=0 RESULTS=$tmp/results.md BENCH_CACHE=$tmp/cache \
  bash "$root/bench/run.sh" "$kiln" >"$tmp/table" 2>"$tmp/log" || fail "bench/run.sh exited $?: $(tail -n 5 "$tmp/log")"

number='[0-9]+(\.[0-9]+)?(e[-+]?[0-9]+)?'
row="^\| mlp \| $number( \| $number){2} \| $number( \| $number){2} \| $number \| 0 \| yes \|$"
for file in "$tmp/table" "$tmp/results.md"; do
  [[ -f $file ]] || { fail "$file was not written"; continue; }
  grep -qE "$row" "$file" || fail "$(basename "$file"): no complete mlp row: $(grep '^| mlp' "$file")"
  grep -qE "^\| geometric mean \| \| \| \| $number \| \| \| $number \| \| \|$" "$file" ||
    fail "$(basename "$file"): no geometric-mean row"
  grep -qE "ONNX Runtime through the Node binding $number µs at 1 thread, $number µs at 2" "$file" ||
    fail "$(basename "$file"): no fixed-cost line"
  grep -qE "^\| mlp \| 0\.201 \| $number \([0-9]+%\) \| $number \([0-9]+%\) \| $number \| $number \|$" "$file" ||
    fail "$(basename "$file"): no efficiency row for mlp: $(grep '^| mlp' "$file" | tail -n 1)"
done
grep -q "Machine: .*avx512f" "$tmp/results.md" || grep -q "Machine: .*no-avx512f" "$tmp/results.md" ||
  fail "results.md: no machine line"
[[ $(stat -c %Y "$root/bench/results.md" 2>/dev/null || echo none) == "$results_before" ]] ||
  fail "RESULTS was ignored: bench/results.md was rewritten"
exit $((failures > 0))

#!/usr/bin/env bash
# `kiln compile --stats`: one row per pass that ran (its time, the kernels @main would launch
# after it, op calls, fused functions, constants) and the kernel count before and after
# fusion. On the bundled CNN, fusion must cut the kernels; at -O 0 (one op per kernel) it
# must not.
set -uo pipefail
kiln=$1 root=$2
source "$(dirname "${BASH_SOURCE[0]}")/lib/expect.sh"
model=$root/examples/cnn/model.onnx

row() {  # row PASS FIELD: a column (2 ms, 3 kernels, 4 op calls, 5 fused, 6 constants, 7 const-only) of PASS's last row
  awk -v pass="$1" -v field="$2" '$1 == pass { value = $field } END { print value }' "$tmp/stats"
}

"$kiln" compile "$model" -o "$tmp/cnn.kiln" --stats >"$tmp/stats" 2>"$tmp/err" || fail "compile --stats: $(cat "$tmp/err")"
head -2 "$tmp/stats" | tail -1 | grep -qE '^pass +ms +kernels +op calls +fused +constants +const-only$' ||
  fail "no statistics header: $(head -3 "$tmp/stats")"
for pass in InferType SimplifyInference FoldConstant FuseOps; do
  grep -qE "^$pass +[0-9.]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+$" "$tmp/stats" || fail "no row for $pass"
done
before=$(sed -n 's/^kernels: \([0-9]*\) before fusion, \([0-9]*\) after$/\1/p' "$tmp/stats")
after=$(sed -n 's/^kernels: \([0-9]*\) before fusion, \([0-9]*\) after$/\2/p' "$tmp/stats")
[[ -n $before && -n $after ]] || fail "no before/after line: $(tail -1 "$tmp/stats")"
((after < before)) || fail "fusion did not cut the kernels: $before before, $after after"
[[ $(row FuseOps 5) == "$after" ]] || fail "FuseOps' row has $(row FuseOps 5) fused functions, expected $after"

# Without --stats no table.
"$kiln" compile "$model" -o "$tmp/plain.kiln" >"$tmp/plain" || fail "compile"
grep -q '^pass ' "$tmp/plain" && fail "a table without --stats"

# At -O 0 every op is a kernel of its own.
"$kiln" compile "$model" -o "$tmp/o0.kiln" -O 0 --stats >"$tmp/stats" || fail "compile -O 0 --stats"
before=$(sed -n 's/^kernels: \([0-9]*\) before fusion, \([0-9]*\) after$/\1/p' "$tmp/stats")
after=$(sed -n 's/^kernels: \([0-9]*\) before fusion, \([0-9]*\) after$/\2/p' "$tmp/stats")
[[ -n $before && $before == "$after" ]] || fail "-O 0: $before kernels before fusion, $after after"

echo "$failures failed"
exit $((failures > 0))

#!/usr/bin/env bash
# Compiles the real-model exports (tests/realmodels/export_models.py) with kiln and prints,
# side by side, kiln's and ONNX Runtime's median latency at 1 and 2 threads and kiln's
# compile time; writes the same table, with the machine and the commands, to
# bench/results.md.
#
# usage: bench/run.sh [KILN_BINARY]     (default: build/release/kiln)
# env:   WARMUP (default 5), REPEAT (default 20), MODELS (default: all five)
# Compile time is measured with an empty kernel cache (KILN_CACHE_DIR points at a fresh
# directory), so it includes the C compiler's work.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
kiln=$(realpath "${1:-$root/build/release/kiln}")
warmup=${WARMUP:-5} repeat=${REPEAT:-20}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck disable=SC2086
/usr/bin/python3 "$root/tests/realmodels/export_models.py" "$work" ${MODELS:-} 2>/dev/null

median() { sed -n 's/^median_ms=\([0-9.]*\).*/\1/p' | tail -n 1; }
ratio() { awk -v k="$1" -v o="$2" 'BEGIN { printf "%.2f", k / o }'; }

table="| model | compile s | kiln 1T ms | ORT 1T ms | kiln/ORT 1T | kiln 2T ms | ORT 2T ms | kiln/ORT 2T | on reference kernels |
|---|---:|---:|---:|---:|---:|---:|---:|---:|"
for dir in "$work"/*/; do
  dir=${dir%/}
  name=$(basename "$dir")
  export KILN_CACHE_DIR=$work/cache-$name
  start=$(date +%s.%N)
  summary=$("$kiln" compile "$dir/model.onnx" -o "$dir/model.kiln" | tail -n 1)
  compile_s=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.2f", e - s }')
  fallbacks=$(sed -n 's/.* \([0-9]*\) functions on reference kernels.*/\1/p' <<<"$summary")
  row="| $name | $compile_s"
  for threads in 1 2; do
    k=$("$kiln" bench "$dir/model.kiln" --inputs "$dir/inputs" --threads "$threads" --warmup "$warmup" \
      --repeat "$repeat" | median)
    o=$(node "$root/tools/ort/run.js" "$dir/model.onnx" --inputs "$dir/inputs" --bench --threads "$threads" \
      --warmup "$warmup" --repeat "$repeat" | median)
    row="$row | $k | $o | $(ratio "$k" "$o")"
  done
  table="$table
$row | ${fallbacks:-?} |"
  echo "$row | ${fallbacks:-?} |" >&2
done

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
results="# Benchmark results

Measured $(date -u +%Y-%m-%d) at commit \`$commit\` on $cpu ($(nproc) cores), by \`bench/run.sh\`.
Latency is the median of $repeat runs after $warmup warm-up runs, batch 1, random weights and inputs
from \`tests/realmodels/export_models.py\`; ONNX Runtime is onnxruntime-node (CPU, all graph
optimisations, sequential execution, intra-op threads as listed). Compile time is \`kiln compile\`
with an empty kernel cache. The last column counts fused functions that run on reference kernels.

$table

Commands: \`kiln compile model.onnx -o model.kiln\`, \`kiln bench model.kiln --inputs DIR --threads N
--warmup $warmup --repeat $repeat\`, \`node tools/ort/run.js model.onnx --inputs DIR --bench --threads N
--warmup $warmup --repeat $repeat\`."
echo "$table"
echo "$results" >"$root/bench/results.md"

#!/usr/bin/env bash
# Compiles the real-model exports (tests/realmodels/export_models.py) with kiln and prints,
# side by side, kiln's and ONNX Runtime's median latency at 1 and 2 threads and kiln's
# compile time; writes the same table, with the machine and the commands, to
# bench/results.md.
#
# usage: bench/run.sh [KILN_BINARY]     (default: build/release/kiln)
# env:   WARMUP (default 5), REPEAT (default 20), MODELS (default: all five),
#        REGRESSION_MODELS (models of tests/realmodels/regression_models.py to add; default
#        dynamic_quant_seg, the quantize_dynamic-form segmentation network; "none" for none)
# Compile time is measured with an empty kernel cache (KILN_CACHE_DIR points at a fresh
# directory per model), so it includes the C compiler's work.
# A model that fails to compile or run shows "fail" in its cells; the others still run, and
# the script exits 1 after writing the table.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
kiln=$(realpath "${1:-$root/build/release/kiln}")
warmup=${WARMUP:-5} repeat=${REPEAT:-20}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
# shellcheck disable=SC2086
regression_models=${REGRESSION_MODELS:-dynamic_quant_seg}
[[ $regression_models == none ]] && regression_models=""
# shellcheck disable=SC2086
if ! /usr/bin/python3 "$root/tests/realmodels/export_models.py" "$work" ${MODELS:-} 2>"$work/export.log" ||
  { [[ -n $regression_models ]] &&
    ! /usr/bin/python3 "$root/tests/realmodels/regression_models.py" "$work" $regression_models 2>>"$work/export.log"; }; then
  cat "$work/export.log" >&2
  exit 1
fi

median() { sed -n 's/^median_ms=\([0-9.]*\).*/\1/p' | tail -n 1; }
ratio() { awk -v k="$1" -v o="$2" 'BEGIN { if (k == "" || o == "" || o == 0) print "-"; else printf "%.2f", k / o }'; }

# Median latency of one engine, or nothing when it fails. usage: latency kiln|ort NAME DIR THREADS
latency() {
  local engine=$1 name=$2 dir=$3 threads=$4
  if [[ $engine == kiln ]]; then
    "$kiln" bench "$dir/model.kiln" --inputs "$dir/inputs" --threads "$threads" --warmup "$warmup" \
      --repeat "$repeat" | median || echo "$name: kiln bench --threads $threads failed" >&2
  else
    node "$root/tools/ort/run.js" "$dir/model.onnx" --inputs "$dir/inputs" --bench --threads "$threads" \
      --warmup "$warmup" --repeat "$repeat" | median ||
      echo "$name: ORT --threads $threads failed" >&2
  fi
}

table="| model | compile s | kiln 1T ms | ORT 1T ms | kiln/ORT 1T | kiln 2T ms | ORT 2T ms | kiln/ORT 2T | on reference kernels |
|---|---:|---:|---:|---:|---:|---:|---:|---:|"
fallback_lines="" failures=0
for dir in "$work"/*/; do
  dir=${dir%/}
  name=$(basename "$dir")
  start=$(date +%s.%N)
  if ! KILN_CACHE_DIR=$work/cache-$name "$kiln" compile "$dir/model.onnx" -o "$dir/model.kiln" --verbose \
    >"$dir/compile.out" 2>"$dir/compile.err"; then
    cat "$dir/compile.err" >&2
    failures=$((failures + 1))
    row="| $name | fail | - | - | - | - | - | - | - |"
    table="$table
$row"
    echo "$row" >&2
    continue
  fi
  compile_s=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.2f", e - s }')
  fallbacks=$(sed -n 's/.* \([0-9]*\) functions on reference kernels.*/\1/p' "$dir/compile.out")
  names=$(sed -n 's/^kiln: note: reference kernels for //p' "$dir/compile.err" | paste -sd, - | sed 's/,/, /g')
  [[ -n $names ]] && fallback_lines="$fallback_lines
- $name: $names"
  row="| $name | $compile_s"
  for threads in 1 2; do
    k=$(latency kiln "$name" "$dir" "$threads")
    o=$(latency ort "$name" "$dir" "$threads")
    row="$row | ${k:-fail} | ${o:-fail} | $(ratio "$k" "$o")"
  done
  [[ $row == *fail* ]] && failures=$((failures + 1))
  row="$row | ${fallbacks:-?} |"
  table="$table
$row"
  echo "$row" >&2
done

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=""
[[ -n $(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null) ]] && dirty=" (with uncommitted changes)"
results="# Benchmark results

Measured $(date -u '+%Y-%m-%d %H:%M UTC') at commit \`$commit\`$dirty on $cpu ($(nproc) cores), by
\`bench/run.sh\`. Load average before the run: $load_before; after: $(cut -d' ' -f1-3 /proc/loadavg)
(the machine may be shared, so read small differences as noise).
Latency is the median of $repeat runs after $warmup warm-up runs, batch 1, random weights and inputs
from \`tests/realmodels/export_models.py\` (and \`regression_models.py\` for: ${regression_models:-none}); ONNX Runtime is onnxruntime-node (CPU, all graph
optimisations, sequential execution, intra-op threads as listed). Compile time is the wall time of
\`kiln compile\` with an empty kernel cache. The last column counts fused functions that run on
reference kernels.

$table

Functions on reference kernels:${fallback_lines:- none}

Commands, per model (DIR is one export's folder):

\`\`\`
/usr/bin/python3 tests/realmodels/export_models.py OUT ${MODELS:-}
/usr/bin/python3 tests/realmodels/regression_models.py OUT $regression_models
KILN_CACHE_DIR=<empty dir> kiln compile DIR/model.onnx -o DIR/model.kiln --verbose
kiln bench DIR/model.kiln --inputs DIR/inputs --threads N --warmup $warmup --repeat $repeat
node tools/ort/run.js DIR/model.onnx --inputs DIR/inputs --bench --threads N --warmup $warmup --repeat $repeat
\`\`\`"
echo "$table"
echo "$results" >"$root/bench/results.md"
exit $((failures > 0))

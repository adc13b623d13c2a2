#!/usr/bin/env bash
# Benchmarks kiln against ONNX Runtime on the models of bench/models.py (see bench/README.md).
#
# usage: bench/run.sh [KILN_BINARY]     (default: build/release/kiln)
# env:   MODELS     space-separated names (default: all; `bench/models.py --list`)
#        ROUNDS     rounds of measurements (default 5); the table shows the median over rounds
#                   of the times and of each round's ORT/kiln ratio
#        BUDGET_S   wall-time budget of one measurement, which sets its repeat count (default 2)
#        REPEAT, WARMUP   fixed counts instead of the budget rule
#        RESULTS    where to write the results (default bench/results.md)
#        BENCH_CACHE     export cache (default ~/.cache/kiln/bench-models)
#
# Phase 1 exports (cached), compiles each model with an empty kernel cache (the compile time
# includes the C compiler), counts functions on reference kernels and checks kiln's outputs
# against ONNX Runtime's (tests/realmodels/compare.py: rtol 1e-3, atol 1e-4 times
# min(1, max |ORT's output|)). Phase 2 runs ROUNDS rounds; in each, for each
# model, kiln and ONNX Runtime alternate on the same inputs: kiln 1T, ORT 1T, kiln 2T, ORT 2T,
# with ORT first in odd rounds. One measurement is one process: the median of REPEAT timed runs
# after WARMUP. Repeat rule: a probe (one warm-up, one timed run, one thread) of each engine
# gives t ms; REPEAT = clamp(BUDGET_S*1000 / t, 5, 100) and WARMUP = max(1, REPEAT/10), per
# model and engine, used at both thread counts. Each round also times both engines on a
# one-element Add (their fixed cost per call). A model that fails shows "fail"; the script
# then exits 1 after writing the table.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
kiln=$(realpath "${1:-$root/build/release/kiln}")
rounds=${ROUNDS:-5} budget_s=${BUDGET_S:-2}
limit_s=900 # a hung measurement fails instead of stalling the run
results=${RESULTS:-$root/bench/results.md}
cache=${BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kiln/bench-models}
models=${MODELS:-$(/usr/bin/python3 "$root/bench/models.py" --list)}
overhead_model=trivial_add
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
started=$(date +%s)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

# shellcheck disable=SC2086
if ! /usr/bin/python3 "$root/bench/models.py" "$cache" $models $overhead_model 2>"$work/export.log"; then
  cat "$work/export.log" >&2
  exit 1
fi

median_ms() { sed -n 's/^median_ms=\([0-9.]*\).*/\1/p' | tail -n 1; }

# One measurement: prints the median ms, or nothing on failure.
# usage: measure kiln|ort MODEL THREADS WARMUP REPEAT
measure() {
  local engine=$1 name=$2 threads=$3 warm=$4 runs=$5 out ms
  if [[ $engine == kiln ]]; then
    out=$(timeout "$limit_s" "$kiln" bench "$work/$name/model.kiln" --inputs "$cache/$name/inputs" --threads "$threads" \
      --warmup "$warm" --repeat "$runs" 2>"$work/$name/err") || true
  else
    out=$(timeout "$limit_s" node "$root/tools/ort/run.js" "$cache/$name/model.onnx" --inputs "$cache/$name/inputs" --bench \
      --threads "$threads" --warmup "$warm" --repeat "$runs" 2>"$work/$name/err") || true
  fi
  ms=$(echo "$out" | median_ms)
  echo "$ms"
  [[ -n $ms ]] || echo "$name: $engine --threads $threads failed: $(head -c 300 "$work/$name/err")" >&2
}

# Sets warmup[$name.$engine] and repeat[$name.$engine] by the rule in the header.
declare -A warmup repeat
plan_counts() {
  local name=$1 engine=$2 probe n
  if [[ -n ${REPEAT:-} ]]; then
    repeat[$name.$engine]=$REPEAT warmup[$name.$engine]=${WARMUP:-5}
    return
  fi
  probe=$(measure "$engine" "$name" 1 1 1)
  n=$(awk -v b="$budget_s" -v t="${probe:-1000}" 'BEGIN { n = int(b * 1000 / (t > 0 ? t : 0.001)); print (n < 5 ? 5 : (n > 100 ? 100 : n)) }')
  repeat[$name.$engine]=$n warmup[$name.$engine]=${WARMUP:-$((n / 10 > 1 ? n / 10 : 1))}
}

# The work a model's matrix products and convolutions do (2 flops per multiply-add, counted
# as the direct algorithm), summed from the kernels' "flops" attributes of graph.json.
model_gflop() {
  /usr/bin/python3 -c 'import json, sys
nodes = json.load(open(sys.argv[1]))["nodes"]
print("%.3f" % (sum(float(n.get("attrs", {}).get("flops", 0)) for n in nodes) / 1e9))' "$1"
}

# Phase 1: compile, count reference kernels, check outputs, plan repeat counts.
declare -A compile_s fallbacks accuracy failed gflop
fallback_lines=""
for name in $models $overhead_model; do
  mkdir -p "$work/$name"
  start=$(date +%s.%N)
  if ! KILN_CACHE_DIR=$work/kernel-cache-$name timeout "$limit_s" "$kiln" compile "$cache/$name/model.onnx" -o "$work/$name/model.kiln" \
    --verbose >"$work/$name/compile.out" 2>"$work/$name/compile.err"; then
    echo "$name: kiln compile failed:" >&2
    tail -n 5 "$work/$name/compile.err" >&2
    failed[$name]=1
    continue
  fi
  compile_s[$name]=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
  gflop[$name]=$(model_gflop "$work/$name/model.kiln/graph.json")
  fallbacks[$name]=$(sed -n 's/.* \([0-9]*\) functions on reference kernels.*/\1/p' "$work/$name/compile.out")
  names=$(sed -n 's/^kiln: note: reference kernels for //p' "$work/$name/compile.err" | sort -u | paste -sd, - | sed 's/,/, /g')
  [[ -n $names ]] && fallback_lines="$fallback_lines
- $name: $names"
  if timeout "$limit_s" "$kiln" run "$work/$name/model.kiln" --inputs "$cache/$name/inputs" --outputs "$work/$name/kiln-out" >/dev/null 2>&1 &&
    timeout "$limit_s" node "$root/tools/ort/run.js" "$cache/$name/model.onnx" --inputs "$cache/$name/inputs" --outputs "$work/$name/ort-out" \
      >/dev/null 2>&1; then
    if diff=$(/usr/bin/python3 "$root/tests/realmodels/compare.py" "$work/$name/kiln-out" "$work/$name/ort-out" 2>&1); then
      accuracy[$name]=yes
    else
      accuracy[$name]="no ($(echo "$diff" | head -n 1 |
        sed 's/.*max abs error \([^ ]*\) = \([^ ]*\) of scale \([^ ]*\) .*/max err \1, \2 of scale \3/'))"
    fi
  else
    accuracy[$name]="run failed"
  fi
  if [[ $name != "$overhead_model" ]]; then
    plan_counts "$name" kiln
    plan_counts "$name" ort
  fi
  echo "$name: compiled in ${compile_s[$name]} s, ${fallbacks[$name]:-?} on reference kernels, matches ORT: ${accuracy[$name]};" \
    "repeat kiln ${repeat[$name.kiln]:-1000}, ORT ${repeat[$name.ort]:-1000}" >&2
done

# Phase 2: the rounds. times[$name.$engine.$threads] collects one median per round.
declare -A times
round_loads=""
peaks=""
for ((round = 0; round < rounds; ++round)); do
  round_loads="$round_loads${round_loads:+; }$(cut -d' ' -f1 /proc/loadavg)"
  peaks="$peaks $("$kiln" bench "$work/$overhead_model/model.kiln" --inputs "$cache/$overhead_model/inputs" --threads 1 \
    --warmup 1 --repeat 1 --profile 2>/dev/null | sed -n 's/^fp32 peak (measured, 1 thread): \([0-9.]*\).*/\1/p')"
  if ((round % 2)); then order="ort kiln"; else order="kiln ort"; fi
  for name in $models $overhead_model; do
    [[ -n ${failed[$name]:-} ]] && continue
    for threads in 1 2; do
      for engine in $order; do
        if [[ $name == "$overhead_model" ]]; then
          ms=$(measure "$engine" "$name" "$threads" 100 1000)
        else
          ms=$(measure "$engine" "$name" "$threads" "${warmup[$name.$engine]}" "${repeat[$name.$engine]}")
        fi
        times[$name.$engine.$threads]="${times[$name.$engine.$threads]:-} ${ms:-fail}"
      done
    done
  done
  echo "round $((round + 1)) of $rounds done ($(($(date +%s) - started)) s)" >&2
done

# usage: summary "MS MS ..." -> "median min max", or nothing if any round failed.
summary() {
  [[ $1 == *fail* || -z ${1// /} ]] && return
  echo "$1" | tr ' ' '\n' | sed '/^$/d' | sort -g |
    awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; print m, v[1], v[NR] }'
}
# A cell: the median with the min-max spread over rounds.
cell() {
  [[ -z $1 ]] && { echo fail; return; }
  read -r m lo hi <<<"$1"
  if ((rounds > 1)); then
    awk -v m="$m" -v l="$lo" -v h="$hi" 'BEGIN { printf "%.4g (%.4g-%.4g)", m, l, h }'
  else
    awk -v m="$m" 'BEGIN { printf "%.4g", m }'
  fi
}
# usage: round_ratios "ORT_MS ..." "KILN_MS ..." -> ORT/kiln of each round, or nothing if a
# round failed. The two engines ran back to back within a round, so a drift of the host's speed
# between rounds (2x within minutes on a shared machine) cancels in each round's ratio.
round_ratios() {
  [[ "$1 $2" == *fail* || -z ${1// /} ]] && return
  paste -d' ' <(echo "$1" | tr ' ' '\n' | sed '/^$/d') <(echo "$2" | tr ' ' '\n' | sed '/^$/d') |
    awk '$2 > 0 { printf "%s%g", (NR > 1 ? " " : ""), $1 / $2 }'
}
# A ratio cell: the median of the rounds' ratios (min-max in brackets); "-" on failure.
ratio_cell() {
  [[ -z $1 ]] && { echo -; return; }
  read -r m lo hi <<<"$1"
  if ((rounds > 1)); then
    awk -v m="$m" -v l="$lo" -v h="$hi" 'BEGIN { printf "%.2f (%.2f-%.2f)", m, l, h }'
  else
    awk -v m="$m" 'BEGIN { printf "%.2f", m }'
  fi
}

table="| model | compile s | kiln 1T ms | ORT 1T ms | ORT/kiln 1T | kiln 2T ms | ORT 2T ms | ORT/kiln 2T | on reference kernels | matches ORT |
|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"
counts_line="" failures=0 log_sum_1=0 log_sum_2=0 ratios_1=0 ratios_2=0
for name in $models; do
  if [[ -n ${failed[$name]:-} ]]; then
    table="$table
| $name | fail | - | - | - | - | - | - | - | - |"
    failures=$((failures + 1))
    continue
  fi
  row="| $name | ${compile_s[$name]}"
  for threads in 1 2; do
    k=$(summary "${times[$name.kiln.$threads]}") o=$(summary "${times[$name.ort.$threads]}")
    rs=$(summary "$(round_ratios "${times[$name.ort.$threads]}" "${times[$name.kiln.$threads]}")")
    r=${rs%% *} r=${r:--}
    row="$row | $(cell "$k") | $(cell "$o") | $(ratio_cell "$rs")"
    if [[ $r == - ]]; then
      failures=$((failures + 1))
    elif ((threads == 1)); then
      log_sum_1=$(awk -v s="$log_sum_1" -v r="$r" 'BEGIN { print s + log(r) }') ratios_1=$((ratios_1 + 1))
    else
      log_sum_2=$(awk -v s="$log_sum_2" -v r="$r" 'BEGIN { print s + log(r) }') ratios_2=$((ratios_2 + 1))
    fi
  done
  table="$table
$row | ${fallbacks[$name]:-?} | ${accuracy[$name]} |"
  counts_line="$counts_line${counts_line:+, }$name ${repeat[$name.kiln]}/${repeat[$name.ort]}"
done
geomean() { awk -v s="$1" -v n="$2" 'BEGIN { if (n == 0) print "-"; else printf "%.2f", exp(s / n) }'; }
table="$table
| geometric mean | | | | $(geomean "$log_sum_1" "$ratios_1") | | | $(geomean "$log_sum_2" "$ratios_2") | | |"

# Efficiency at one thread: each engine's rate on the model's counted work, against the
# best fp32 peak measured in the rounds; the ceiling is the ORT/kiln kiln would reach running
# that work at the peak (a model whose kiln kernels use Winograd can pass it).
peak=$(echo "$peaks" | tr ' ' '\n' | sed '/^$/d' | sort -g | tail -n 1)
rate() { awk -v f="$1" -v m="${2%% *}" -v p="$peak" 'BEGIN { if (m == "" || m == 0 || f == 0) print "-"; else { r = f / m * 1000; printf "%.1f (%.0f%%)", r, p ? 100 * r / p : 0 } }'; }
# usage: ceiling ORT_SUMMARY THREADS (the peak scaled by the threads)
ceiling() { awk -v f="${gflop[$name]}" -v o="${1%% *}" -v p="$peak" -v t="$2" 'BEGIN { if (o == "" || f == 0 || p == "") print "-"; else printf "%.2f", o / (f / (p * t) * 1000) }'; }
efficiency="| model | GFLOP | kiln 1T GFLOP/s (% of peak) | ORT 1T GFLOP/s (% of peak) | ceiling ORT/kiln 1T | ceiling 2T |
|---|---:|---:|---:|---:|---:|"
for name in $models; do
  [[ -n ${failed[$name]:-} ]] && continue
  k=$(summary "${times[$name.kiln.1]}") o=$(summary "${times[$name.ort.1]}") o2=$(summary "${times[$name.ort.2]}")
  efficiency="$efficiency
| $name | ${gflop[$name]} | $(rate "${gflop[$name]}" "$k") | $(rate "${gflop[$name]}" "$o") | $(ceiling "$o" 1) | $(ceiling "$o2" 2) |"
done

overhead_cell() {
  local s
  s=$(summary "${times[$overhead_model.$1.$2]:-fail}")
  if [[ -n $s ]]; then awk -v m="${s%% *}" 'BEGIN { if (m > 0) printf "%.1f µs", m * 1000; else print "< 0.1 µs" }'; else echo fail; fi
}
overhead="Fixed cost per call (one Add of two 1-element tensors, median of 1000 runs, median over rounds): ONNX Runtime through the Node binding $(overhead_cell ort 1) at 1 thread, $(overhead_cell ort 2) at 2; kiln bench $(overhead_cell kiln 1) at 1 thread, $(overhead_cell kiln 2) at 2."

cpu=$(lscpu | sed -n 's/^Model name:[[:space:]]*//p' | head -n 1)
flags=""
for flag in avx2 avx512f avx512_bf16 avx512_vnni; do
  grep -qw "$flag" /proc/cpuinfo && flags="$flags $flag" || flags="$flags no-$flag"
done
commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=""
# The results file itself (rewritten by every run) does not count as a change to what was measured.
results_in_tree=$(realpath -m --relative-to="$root" "$results")
[[ $results_in_tree == ../* ]] && results_in_tree=""
[[ -n $(git -C "$root" status --porcelain --untracked-files=no -- . ${results_in_tree:+":(exclude)$results_in_tree"} 2>/dev/null) ]] &&
  dirty=" (with uncommitted changes)"
minutes=$(awk -v s="$(($(date +%s) - started))" 'BEGIN { printf "%.1f", s / 60 }')
ort_version=$(sed -n 's/^ *"version": "\(.*\)",/\1/p' "$root/tools/ort/node_modules/onnxruntime-node/package.json" | head -n 1)
if [[ -n ${REPEAT:-} ]]; then
  counts="REPEAT=$REPEAT timed runs after WARMUP=${WARMUP:-5}"
else
  counts="REPEAT = clamp(${budget_s} s / probe time, 5, 100) timed runs after max(1, REPEAT/10)
warm-up runs, per model and engine, the probe being one run after one warm-up at 1 thread"
fi
report="# Benchmark results

Measured $(date -u '+%Y-%m-%d %H:%M UTC') at commit \`$commit\`$dirty by \`bench/run.sh\`
($rounds round(s), $minutes min in all) with \`${kiln#"$root"/}\`, built $(date -u -r "$kiln" '+%H:%M UTC'). Machine: $cpu (lscpu), $(nproc) cores, flags:$flags.
Load average (1 min) before the run: ${load_before%% *}; at the start of each round: $round_loads;
after: $(cut -d' ' -f1 /proc/loadavg). The machine may be shared: above about 1, other processes
held the cores and the 2-thread columns in particular are noise.

Each cell is the median over $rounds round(s) (min-max over rounds in brackets) of one
measurement's median: $counts
(timed runs kiln/ORT: $counts_line). In each round kiln and ONNX Runtime (onnxruntime-node
$ort_version, CPU, all graph optimisations, sequential execution, intra-op threads as listed)
alternate per model (kiln 1T, ORT 1T, kiln 2T, ORT 2T; ORT first in odd rounds) on the same
inputs. Batch 1 (MLP: 32), random weights and inputs from \`bench/models.py\`. **ORT/kiln** is the
median over rounds of each round's ratio ORT ms / kiln ms (min-max over rounds in brackets):
the two engines ran back to back in a round, so a change of the host's speed between rounds
cancels in it; it need not equal the ratio of the two medians beside it. Above 1 means kiln is
faster; the geometric mean is over these medians.

- **kiln** times \`GraphExecutor::run()\` in \`kiln bench\`: every step of the graph, thread-pool
  dispatch included, on inputs copied in once before the warm-up (\`set_input\`), outputs left in
  the executor's buffers; no input or output copies, no allocation.
- **ORT** times \`await session.run(feeds, fetches)\` in \`tools/ort/run.js --bench\`: input tensors
  created once before the warm-up, outputs preallocated (ORT writes into them), so it too copies no
  inputs or outputs; it includes the binding's fixed cost per call (tensor wrapping, one
  setImmediate, the promise), measured below.
- **compile s** is the wall time of \`kiln compile\` with an empty kernel cache (includes the C
  compiler). **on reference kernels** counts fused functions that run on reference kernels.
  **matches ORT**: kiln's compiled outputs within rtol 1e-3 / atol 1e-4 of ONNX Runtime's, atol
  relative to the output's scale below 1: |kiln - ORT| <= 1e-4 min(1, max |ORT|) + 1e-3 |ORT|.

$table

$overhead

Work and efficiency at one thread. **GFLOP** counts the matrix products and convolutions
(2 flops per multiply-add, as the direct algorithm; other ops count zero). The fp32 peak,
measured by \`kiln bench --profile\` (a register-resident FMA loop on one core) at the start of
each round, was ${peak:-?} GFLOP/s at best (all rounds:${peaks:- none}). **ceiling** is the ORT/kiln
ratio kiln would reach if it ran the counted work at that peak (times the threads) and
everything else in no time: a model cannot beat it with the direct algorithms (Winograd convolutions do fewer flops
than counted, so CNNs can).

$efficiency

Functions on reference kernels:${fallback_lines:- none}

Commands (DIR is one model's export folder, N the thread count):

\`\`\`
/usr/bin/python3 bench/models.py CACHE $models $overhead_model
KILN_CACHE_DIR=<empty dir> kiln compile DIR/model.onnx -o DIR/model.kiln --verbose
kiln run DIR/model.kiln --inputs DIR/inputs --outputs KILN_OUT
node tools/ort/run.js DIR/model.onnx --inputs DIR/inputs --outputs ORT_OUT
/usr/bin/python3 tests/realmodels/compare.py KILN_OUT ORT_OUT
kiln bench DIR/model.kiln --inputs DIR/inputs --threads N --warmup W --repeat R
node tools/ort/run.js DIR/model.onnx --inputs DIR/inputs --bench --threads N --warmup W --repeat R
\`\`\`"
echo "$table"
echo
echo "$overhead"
echo
echo "$efficiency"
echo "$report" >"$results"
echo "wrote $results (${minutes} min)" >&2
exit $((failures > 0))

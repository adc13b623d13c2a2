#!/usr/bin/env bash
# Two kiln builds on the same models, interleaved: is a change slower? (e.g. the last build
# before a feature against the current one).
#
# usage: bench/compare_builds.sh KILN_A KILN_B
# env:   MODELS   space-separated names of bench/models.py (default: the static models below)
#        ROUNDS   rounds (default 5); in each, A and B alternate per model, A first in even rounds
#        THREADS  executor threads (default 1)
#        REPEAT, WARMUP   timed and untimed runs per measurement (default 20 and 3)
#        BENCH_CACHE      export cache (default ~/.cache/kiln/bench-models)
#
# Each build compiles each model itself (its own passes and kernels; empty kernel caches), checks
# that it runs, then each measurement is one `kiln bench` process (median of REPEAT runs). Prints
# a table: per model the median over rounds of each build's ms and B/A (below 1: B is faster).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[[ $# -eq 2 ]] || { sed -n '4,5p' "$0" >&2; exit 2; }
kilns=("$(realpath "$1")" "$(realpath "$2")")
rounds=${ROUNDS:-5} threads=${THREADS:-1} repeat=${REPEAT:-20} warmup=${WARMUP:-3}
cache=${BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kiln/bench-models}
models=${MODELS:-"transformer_256 lstm_2layer gru_bidir mlp resnet18 mobilenet_v2 efficientnet_b0 regnet_y_400mf"}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# shellcheck disable=SC2086
/usr/bin/python3 "$root/bench/models.py" "$cache" $models >/dev/null

declare -A times
for name in $models; do
  for b in 0 1; do
    KILN_CACHE_DIR=$work/cache-$b-$name "${kilns[$b]}" compile "$cache/$name/model.onnx" -o "$work/$b-$name.kiln" \
      >/dev/null 2>"$work/err" || { echo "$name: build $b failed to compile: $(tail -n 2 "$work/err")" >&2; exit 1; }
  done
done
for ((round = 0; round < rounds; ++round)); do
  if ((round % 2)); then order="1 0"; else order="0 1"; fi
  for name in $models; do
    for b in $order; do
      ms=$("${kilns[$b]}" bench "$work/$b-$name.kiln" --inputs "$cache/$name/inputs" --threads "$threads" \
        --warmup "$warmup" --repeat "$repeat" | sed -n 's/^median_ms=\([0-9.]*\).*/\1/p')
      times[$name.$b]="${times[$name.$b]:-} $ms"
    done
  done
  echo "round $((round + 1)) of $rounds done (load $(cut -d' ' -f1 /proc/loadavg))" >&2
done

median() { tr ' ' '\n' | sed '/^$/d' | sort -g | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "A = ${kilns[0]}"
echo "B = ${kilns[1]}"
echo "$rounds rounds, $threads thread(s), median of $repeat runs per measurement, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| model | A ms | B ms | B/A |"
echo "|---|---:|---:|---:|"
for name in $models; do
  a=$(echo "${times[$name.0]}" | median) b=$(echo "${times[$name.1]}" | median)
  echo "| $name | $a | $b | $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", b / a }') |"
done

#!/usr/bin/env bash
# Runs kiln onnx-test over libonnx-testdata's node/, pytorch-converted/, pytorch-operator/ and
# simple/ suites and prints one line per case: "PASS|BAKED|FAIL|SKIP suite/test_name[: reason]".
# Inputs are given at run time; a case that fails so and passes with its input values baked
# into the model (onnx-test --bake-inputs) is BAKED, not PASS.
# The last line is the summary: "conformance ENGINE: P passed of N cases (X%), B more only
# with baked inputs, excluding T training/string cases".
# With CASE_LIST (a file of suite/case lines) only those cases run.
# usage: scripts/conformance.sh KILN_BINARY [interp|compiled] [CASE_LIST]
set -euo pipefail
kiln=$1
engine=${2:-interp}
case_list=${3:-}
data=${KILN_ONNX_TESTDATA:-/usr/share/libonnx-testdata/data}
passed=0 baked=0 total=0 excluded=0
for suite in node pytorch-converted pytorch-operator simple; do
  dirs=("$data/$suite")
  if [[ -n $case_list ]]; then
    mapfile -t dirs < <(sed -n "s|^$suite/|$data/$suite/|p" "$case_list")
    ((${#dirs[@]} > 0)) || continue
  fi
  log=$("$kiln" onnx-test --verbose --bake-inputs --engine "$engine" "${dirs[@]}" 2>&1) || true
  summary=$(tail -n 1 <<<"$log")
  if ! [[ $summary =~ ^[0-9]+\ passed,\ [0-9]+\ passed\ only\ with\ baked\ inputs,\ [0-9]+\ failed,\ [0-9]+\ skipped$ ]]; then
    echo "onnx-test on $suite did not finish; its last lines:" >&2
    tail -n 5 <<<"$log" >&2
    exit 1
  fi
  while IFS= read -r line; do
    [[ $line =~ ^(PASS|BAKED|FAIL|SKIP)\ (.*)$ ]] || continue
    status=${BASH_REMATCH[1]} rest=${BASH_REMATCH[2]}
    echo "$status $suite/$rest"
    if [[ $status == SKIP && $rest =~ :\ (training|string) ]]; then
      excluded=$((excluded + 1))
      continue
    fi
    total=$((total + 1))
    [[ $status == PASS ]] && passed=$((passed + 1))
    [[ $status == BAKED ]] && baked=$((baked + 1))
  done <<<"$log"
done
echo "conformance $engine: $passed passed of $total cases ($((100 * passed / total))%), $baked more only with baked inputs, excluding $excluded training/string cases"

#!/usr/bin/env bash
# Differential conformance: every ONNX backend case that passes through the interpreter
# (tests/conformance/interp_passing.txt) must also pass compiled (kiln onnx-test --engine
# compiled; with its inputs baked into the model where the executor cannot run the dynamic
# shapes of inputs at run time, counted apart), except the known gaps of the graph executor
# listed with their reason in
# tests/conformance/compiled_known_gaps.txt. A known gap that starts passing is reported so
# the list shrinks.
# In CI the cases are a sample in which every operator runs at least twice
# (tests/conformance/compiled_sample.py, about a quarter of them); KILN_FULL_CONFORMANCE=1 runs
# every case.
# usage: onnx_conformance_compiled.sh KILN_BINARY SOURCE_DIR
set -euo pipefail
kiln=$1 src=$2
passing=$src/tests/conformance/interp_passing.txt
gaps=$src/tests/conformance/compiled_known_gaps.txt
sample=()
if [[ ${KILN_FULL_CONFORMANCE:-0} != 1 ]]; then
  data=${KILN_ONNX_TESTDATA:-/usr/share/libonnx-testdata/data}
  sampled=$(mktemp)
  trap 'rm -f "$sampled"' EXIT
  /usr/bin/python3 "$src/tests/conformance/compiled_sample.py" "$data" "$passing" 2 >"$sampled"
  sample=("$sampled")
  passing=$sampled
fi
results=$("$src/scripts/conformance.sh" "$kiln" compiled "${sample[@]}")
tail -n 1 <<<"$results"
compiled_pass=$(sed -n -E 's/^(PASS|BAKED) ([^:]*).*/\2/p' <<<"$results" | sort)
known=$(sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^$/d' "$gaps" | sort)
missing=$(comm -23 <(sort "$passing") <(echo "$compiled_pass") | comm -23 - <(echo "$known"))
if [[ -n $missing ]]; then
  echo "cases that pass on the interpreter but not compiled:"
  while read -r name; do
    grep -m1 -E "^(FAIL|SKIP) ${name}(:|$)" <<<"$results" || echo "MISSING $name"
  done <<<"$missing"
  exit 1
fi
# A gap is closed when it passes with its inputs at run time (baked, compress or if are static).
closed=$(comm -12 <(echo "$known") <(sed -n 's/^PASS //p' <<<"$results" | sort))
[[ -n $closed ]] && echo "known gaps that pass now (remove them from $gaps):" && echo "$closed"
exit 0

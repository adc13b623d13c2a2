#!/usr/bin/env bash
# ONNX conformance through the interpreter: every case listed in
# tests/conformance/interp_passing.txt must still pass, so the pass count can only grow.
# After a change that makes more cases pass, refresh the list with
# scripts/update_conformance.sh.
# usage: onnx_conformance.sh KILN_BINARY SOURCE_DIR
set -euo pipefail
kiln=$1 src=$2
expected=$src/tests/conformance/interp_passing.txt
results=$("$src/scripts/conformance.sh" "$kiln" interp)
tail -n 1 <<<"$results"
lost=$(comm -23 <(sort "$expected") <(sed -n 's/^PASS //p' <<<"$results" | sort))
if [[ -n $lost ]]; then
  echo "cases that passed before and do not now:"
  while read -r name; do
    grep -m1 -E "^(FAIL|SKIP) ${name}(:|$)" <<<"$results" || echo "MISSING $name"
  done <<<"$lost"
  echo "$(wc -l <<<"$lost") of the $(wc -l <"$expected") committed passing cases regressed"
  exit 1
fi
gained=$(($(grep -c '^PASS ' <<<"$results") - $(wc -l <"$expected")))
((gained > 0)) && echo "$gained more cases pass than committed: run scripts/update_conformance.sh"
exit 0

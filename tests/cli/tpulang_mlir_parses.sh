#!/usr/bin/env bash
# Every Top MLIR file the TpuLang tests write parses with MLIR's own tools: the gtests of
# tests/tpulang/tpulang_emit_test.cc, tpulang_resnet_block_test.cc and
# tpulang_real_models_test.cc (torchvision models through Top MLIR) run with
# KILN_TPULANG_MLIR_DIR pointing at a scratch folder, then mlir-opt-16 (Debian's
# mlir-16-tools, installed by scripts/setup.sh) reads each NAME_origin.mlir and must print it
# back byte for byte (the emitter writes what MLIR's printer writes), and numpy loads each
# NAME_TOP_F32_all_weight.npz, whose keys must be the names of the file's top.Weight ops.
set -uo pipefail
kiln=$1
source "$(dirname "${BASH_SOURCE[0]}")/lib/expect.sh"

tests_binary="$(dirname "$kiln")/tests/kiln_tests"
[[ -x $tests_binary ]] || { echo "FAIL: $tests_binary not built (ninja kiln_tests)"; exit 1; }
mlir_opt=$(command -v mlir-opt-16 || true)
if [[ -z $mlir_opt ]]; then
  echo "FAIL: mlir-opt-16 not found (apt-get install mlir-16-tools; scripts/setup.sh)"
  exit 1
fi

writers='TpuLangEmit.*:TpuLangResNetBlock.*:TpuLangRealModels.*'
KILN_TPULANG_MLIR_DIR="$tmp/out" "$tests_binary" --gtest_filter="$writers" >"$tmp/gtest.log" 2>&1 ||
  { cat "$tmp/gtest.log"; fail "the TpuLang tests that write the files failed"; }

count=0
for mlir in "$tmp"/out/*_origin.mlir; do
  [[ -e $mlir ]] || continue
  count=$((count + 1))
  name=$(basename "$mlir" _origin.mlir)
  if ! "$mlir_opt" --allow-unregistered-dialect --mlir-print-debuginfo "$mlir" \
    >"$tmp/printed.mlir" 2>"$tmp/err"; then
    fail "$name: mlir-opt-16 rejects the file:"
    cat "$tmp/err"
    continue
  fi
  # mlir-opt ends its output with one empty line more than the printer writes.
  sed -i '${/^$/d}' "$tmp/printed.mlir"
  if ! diff -u "$mlir" "$tmp/printed.mlir" >"$tmp/diff"; then
    fail "$name: MLIR prints the file differently:"
    cat "$tmp/diff"
  fi
  npz="$tmp/out/${name}_TOP_F32_all_weight.npz"
  weights=$(grep -c '"top.Weight"()' "$mlir")
  # The weight names are the locations of the top.Weight ops (location aliases at the end).
  expected=$(/usr/bin/python3 - "$mlir" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
aliases = dict(re.findall(r'^(#loc\d+) = loc\("(.*)"\)$', text, re.M))
names = [aliases[a] for a in re.findall(r'"top.Weight"\(\).* loc\((#loc\d+)\)$', text, re.M)]
print(' '.join(sorted(names)))
PY
)
  keys='import numpy, sys; print(" ".join(sorted(numpy.load(sys.argv[1]).keys())))'
  found=$(/usr/bin/python3 -c "$keys" "$npz" 2>&1) ||
    { fail "$name: numpy cannot load $npz: $found"; continue; }
  [[ $found == "$expected" ]] || fail "$name: npz keys '$found', top.Weight names '$expected' ($weights weights)"
done
((count >= 12)) || fail "expected at least 12 emitted files, found $count"

((failures == 0)) && echo "tpulang_mlir_parses: $count files parse and print back unchanged"
exit $((failures > 0))

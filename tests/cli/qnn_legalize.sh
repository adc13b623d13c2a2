#!/usr/bin/env bash
# QnnLegalize end to end: quantized models built with python3-onnx (tests/realmodels/qnn_models.py:
# QDQ, QOperator with QLinearConv + QLinearMatMul, ConvInteger + MatMulInteger) import with qnn
# ops, compile with every function in generated code (`kiln compile --verbose` names no
# reference kernel, at -O 0 and -O 3), give the interpreter's values exactly, and match ONNX
# Runtime (within one or two steps of the output's scale where ORT rounds a float product).
set -uo pipefail
kiln=$1 root=$2
source "$(dirname "${BASH_SOURCE[0]}")/lib/expect.sh"

/usr/bin/python3 "$root/tests/realmodels/qnn_models.py" "$tmp" || fail "qnn_models.py"

for name in qdq qoperator integer; do
  dir=$tmp/$name
  "$kiln" print "$dir/model.onnx" >"$dir/ir.txt" || fail "$name: import"
  grep -q "qnn\." "$dir/ir.txt" || fail "$name: the import has no qnn op"
  # What build() compiles has no qnn op left.
  "$kiln" print "$dir/model.onnx" --pass QnnLegalize >"$dir/legal.txt" || fail "$name: QnnLegalize"
  if grep -q "qnn\." "$dir/legal.txt"; then
    fail "$name: qnn ops left after QnnLegalize"
    grep "qnn\." "$dir/legal.txt" | head -3
  fi
  node "$root/tools/ort/run.js" "$dir/model.onnx" --inputs "$dir/inputs" --outputs "$dir/ort" ||
    fail "$name: ONNX Runtime"
  "$kiln" run "$dir/model.onnx" --engine interp --inputs "$dir/inputs" --outputs "$dir/interp" >/dev/null ||
    fail "$name: interp run"
  read -r -a tolerance <"$dir/tolerance"
  for level in 0 3; do
    artifact=$dir/O$level.kiln
    if ! "$kiln" compile "$dir/model.onnx" -o "$artifact" -O "$level" --verbose >"$dir/compile.out" 2>"$dir/compile.err"; then
      fail "$name -O $level: compile"
      cat "$dir/compile.err"
      continue
    fi
    if grep -q "reference kernels for" "$dir/compile.err" || ! grep -q " 0 functions on reference kernels" "$dir/compile.out"; then
      fail "$name -O $level: functions fell back to reference kernels"
      cat "$dir/compile.err" "$dir/compile.out"
    fi
    "$kiln" run "$artifact" --inputs "$dir/inputs" --outputs "$dir/O$level" >/dev/null || fail "$name -O $level: run"
    /usr/bin/python3 "$root/tests/realmodels/compare.py" "$dir/O$level" "$dir/interp" 0 0 ||
      fail "$name -O $level: compiled outputs differ from the interpreter's"
    /usr/bin/python3 "$root/tests/realmodels/compare.py" "$dir/O$level" "$dir/ort" "${tolerance[@]}" ||
      fail "$name -O $level: outputs differ from ONNX Runtime"
  done
  /usr/bin/python3 "$root/tests/realmodels/compare.py" "$dir/interp" "$dir/ort" "${tolerance[@]}" ||
    fail "$name: interpreter outputs differ from ONNX Runtime"
done
exit $((failures > 0))

#!/usr/bin/env bash
# Real exports (torchvision ResNet-18, MobileNetV2, EfficientNet-B0, RegNetY-400MF and a
# TransformerEncoder with token embedding, random weights) import fully static, run through
# kiln's interpreter, compile to an artifact that runs with the compiled engine, and both
# match ONNX Runtime within rtol 1e-3 / atol 1e-4.
set -euo pipefail
kiln=$1 root=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
/usr/bin/python3 "$root/tests/realmodels/export_models.py" "$out" 2>/dev/null
failures=0
fail() {
  echo "FAIL $1"
  failures=$((failures + 1))
}

# Runs one engine and compares its outputs with ONNX Runtime's. usage: check NAME DIR ENGINE
check() {
  local name=$1 dir=$2 engine=$3 model=$2/model.onnx
  if [[ $engine == compiled ]]; then
    if ! "$kiln" compile "$model" -o "$dir/model.kiln" >/dev/null; then
      fail "$name ($engine): compile"
      return
    fi
    model=$dir/model.kiln
  fi
  if ! "$kiln" run "$model" --engine "$engine" --inputs "$dir/inputs" --outputs "$dir/$engine" >/dev/null; then
    fail "$name ($engine): run"
  elif /usr/bin/python3 "$root/tests/realmodels/compare.py" "$dir/$engine" "$dir/ort" 1e-3 1e-4; then
    echo "ok $name ($engine)"
  else
    fail "$name ($engine): outputs differ from ONNX Runtime"
  fi
}

for dir in "$out"/*/; do
  dir=${dir%/}
  name=$(basename "$dir")
  if ! "$kiln" print "$dir/model.onnx" >"$dir/ir.txt"; then
    fail "$name: import"
    continue
  fi
  if grep -q '?' "$dir/ir.txt"; then
    fail "$name: not fully static"
    continue
  fi
  if ! node "$root/tools/ort/run.js" "$dir/model.onnx" --inputs "$dir/inputs" --outputs "$dir/ort"; then
    fail "$name: ONNX Runtime"
    continue
  fi
  check "$name" "$dir" interp
  check "$name" "$dir" compiled
done
exit $((failures > 0))

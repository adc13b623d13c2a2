#!/usr/bin/env bash
# Real exports (torchvision ResNet-18, MobileNetV2, EfficientNet-B0, RegNetY-400MF and a
# TransformerEncoder with token embedding, random weights) import fully static, run
# through kiln's interpreter and match ONNX Runtime within rtol 1e-3 / atol 1e-4.
set -euo pipefail
kiln=$1 root=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
/usr/bin/python3 "$root/tests/realmodels/export_models.py" "$out" 2>/dev/null
failures=0
for dir in "$out"/*/; do
  name=$(basename "$dir")
  if ! "$kiln" print "$dir/model.onnx" >"$dir/ir.txt"; then
    echo "FAIL $name: import"; failures=$((failures + 1)); continue
  fi
  if grep -q '?' "$dir/ir.txt"; then
    echo "FAIL $name: not fully static"; failures=$((failures + 1)); continue
  fi
  node "$root/tools/ort/run.js" "$dir/model.onnx" --inputs "$dir/inputs" --outputs "$dir/ort"
  if ! "$kiln" run "$dir/model.onnx" --engine interp --inputs "$dir/inputs" --outputs "$dir/kiln" >/dev/null; then
    echo "FAIL $name: run"; failures=$((failures + 1)); continue
  fi
  if /usr/bin/python3 "$root/tests/realmodels/compare.py" "$dir/kiln" "$dir/ort" 1e-3 1e-4; then
    echo "ok $name"
  else
    echo "FAIL $name: outputs differ from ONNX Runtime"; failures=$((failures + 1))
  fi
done
exit $((failures > 0))

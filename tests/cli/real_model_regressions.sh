#!/usr/bin/env bash
# Failure classes real exports once hit (tests/realmodels/regression_models.py says which):
# DenseNet and PaddleOCR-style concatenations into batch norm, unsorted nodes, models
# quantized by onnxruntime's quantize_dynamic, an LSTM inside an If, float16 weights. Each
# runs through kiln's interpreter and compiled engine and matches ONNX Runtime; the float16
# weights are cast at build time (no float16 tensor and no cast left in the artifact).
set -euo pipefail
kiln=$1 root=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
/usr/bin/python3 "$root/tests/realmodels/regression_models.py" "$out" 2>/dev/null
source "$root/tests/realmodels/check_against_ort.sh"
check_models "$kiln" "$root" "$out"

graph=$out/fp16_weights/model.kiln/graph.json
if [[ ! -f $graph ]]; then
  fail "fp16_weights: no artifact"
elif grep -q -e '"float16"' -e 'cast' "$graph"; then
  fail "fp16_weights: the artifact still holds float16 tensors or casts"
else
  echo "ok fp16_weights: casts folded at build time"
fi
exit $((failures > 0))

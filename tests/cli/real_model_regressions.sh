#!/usr/bin/env bash
# Failure classes real exports once hit (tests/realmodels/regression_models.py says which):
# DenseNet and PaddleOCR-style concatenations into batch norm, unsorted nodes, models
# quantized by onnxruntime's quantize_dynamic, an LSTM inside an If, float16 weights. Each
# runs through kiln's interpreter and compiled engine and matches ONNX Runtime; the float16
# weights are cast at build time (no float16 tensor and no cast left in the artifact), and
# at -O 3 no batch_norm or dropout is left in the models that import with them.
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
# At -O 3 no inference-only op survives optimisation (SimplifyInference, then FoldScaleAxis and
# FoldConstant fold what it leaves into the weights), in the models whose imported IR has them.
with_norms=0
for dir in "$out"/*/; do
  name=$(basename "$dir")
  grep -qE 'nn\.(batch_norm|dropout)\(' "$dir/ir.txt" || continue
  with_norms=$((with_norms + 1))
  flags=()
  read_flags "$dir" import_flags
  optimized=$("$kiln" print "$dir/model.onnx" "${flags[@]}" -O 3 --print-after-all | awk '/^\/\/ after FuseOps/{p = 1} p')
  if [[ -z $optimized ]] || grep -qE 'nn\.(batch_norm|dropout)\(' <<<"$optimized"; then
    fail "$name: batch_norm or dropout left after -O 3"
  else
    echo "ok $name: no batch_norm or dropout after -O 3"
  fi
done
((with_norms >= 2)) || fail "only $with_norms regression models import with batch_norm or dropout"
exit $((failures > 0))

#!/usr/bin/env bash
# The measuring tools of bench/ run end to end on a one-layer model (conv 3x3 32->32 at 14x14,
# relu, 2x2 max pool) written with python3-onnx's helpers:
# - bench/layers.py matches the convolution and the pool across kiln's profile and ONNX
#   Runtime's by shape, so each appears as one row measured by both engines (a key that differs
#   between the engines would split it into two rows, each with a zero on one side);
# - bench/ab_artifacts.py runs two artifacts of the model in one process and prints min <= p10 <=
#   median for each (release builds only: a sanitized build has no Python package).
# No timing is compared with anything.
set -uo pipefail
kiln=$1 root=$2
source "$root/tests/cli/lib/expect.sh"

model=$tmp/model
/usr/bin/python3 - "$model" <<'EOF' || fail "could not write the model"
import os, sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

folder = sys.argv[1]
rng = np.random.default_rng(0)
weight = numpy_helper.from_array((rng.standard_normal((32, 32, 3, 3)) * 0.1).astype(np.float32), "W")
bias = numpy_helper.from_array(rng.standard_normal(32).astype(np.float32), "B")
nodes = [helper.make_node("Conv", ["x", "W", "B"], ["c"], pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c"], ["r"]),
         helper.make_node("MaxPool", ["r"], ["y"], kernel_shape=[2, 2], strides=[2, 2])]
graph = helper.make_graph(nodes, "one_layer", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 32, 14, 14])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 32, 7, 7])], [weight, bias])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(model)
os.makedirs(os.path.join(folder, "inputs"))
onnx.save(model, os.path.join(folder, "model.onnx"))
np.save(os.path.join(folder, "inputs", "x.npy"), rng.standard_normal((1, 32, 14, 14)).astype(np.float32))
EOF

# ---- bench/layers.py ----
/usr/bin/python3 "$root/bench/layers.py" "$model" --rounds 1 --repeat 3 --kiln "$kiln" >"$tmp/layers" 2>"$tmp/log" ||
  fail "bench/layers.py exited $?: $(tail -n 5 "$tmp/log")"
number='[0-9]+\.[0-9]{3}'
grep -qE "^\| conv 3x3 32->32 14->14 \| $number \| $number \| [-+]$number \|$" "$tmp/layers" ||
  fail "layers.py: no conv row: $(cat "$tmp/layers")"
conv_ms=$(awk -F'|' '$2 ~ /conv 3x3 32->32 14->14/ {print $3 * 1000, $4 * 1000}' "$tmp/layers")
read -r kiln_us ort_us <<<"$conv_ms"
[[ ${kiln_us:-0} -gt 0 && ${ort_us:-0} -gt 0 ]] ||
  fail "layers.py: the convolution was not measured by both engines (kiln ${kiln_us:-?} us, ORT ${ort_us:-?} us)"
grep -qE "^\| pool 32ch 14->7 \| $number \| $number \| [-+]$number \|$" "$tmp/layers" ||
  fail "layers.py: no pool row: $(cat "$tmp/layers")"
[[ $(grep -c '^| conv ' "$tmp/layers") -eq 1 ]] || fail "layers.py: the convolution is split over rows"
grep -qE "^\| total \| $number \| $number \| [-+]$number \|$" "$tmp/layers" || fail "layers.py: no total row"

# ---- bench/ab_artifacts.py ----
python_dir=$(dirname "$kiln")/python
if [[ -d $python_dir/kiln ]]; then
  for variant in a b; do
    KILN_CACHE_DIR=$tmp/cache_$variant "$kiln" compile "$model/model.onnx" -o "$tmp/$variant.kiln" >/dev/null ||
      fail "compile $variant failed"
  done
  KILN_PYTHONPATH=$python_dir /usr/bin/python3 "$root/bench/ab_artifacts.py" "$tmp/a.kiln" "$tmp/b.kiln" \
    --inputs "$model/inputs" --runs 3 >"$tmp/ab" 2>"$tmp/log" || fail "bench/ab_artifacts.py exited $?: $(tail -n 5 "$tmp/log")"
  for variant in a b; do
    line=$(grep -E "^$tmp/$variant\.kiln +min [0-9.]+ +p10 [0-9.]+ +median [0-9.]+ ms$" "$tmp/ab")
    [[ -n $line ]] || { fail "ab_artifacts.py: no line for $variant: $(cat "$tmp/ab")"; continue; }
    read -r _ _ min _ p10 _ median _ <<<"$line"
    awk -v a="$min" -v b="$p10" -v c="$median" 'BEGIN { exit !(a > 0 && a <= b && b <= c) }' ||
      fail "ab_artifacts.py: $variant: min $min, p10 $p10, median $median out of order"
  done
else
  echo "bench/ab_artifacts.py not run: $python_dir has no Python package (sanitized build)"
fi
exit $((failures > 0))

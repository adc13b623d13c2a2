#!/usr/bin/env bash
# Top MLIR read back: for the bundled CNN and ResNet-18 (random weights, 32x32 input, written by
# tests/realmodels/export_models.py's write_export), ONNX -> `kiln export-mlir` -> `kiln run
# NAME_origin.mlir` gives the outputs of `kiln run model.onnx`; the weights are found beside the
# .mlir or, moved to another folder, through --weights; print and compile read .mlir too.
set -uo pipefail
kiln=$1 root=$2
source "$(dirname "${BASH_SOURCE[0]}")/lib/expect.sh"

# same_outputs DIR_A DIR_B: each holds one .npy of the same name (the ONNX output's name
# survives the round trip), and they agree.
same_outputs() {
  /usr/bin/python3 - "$1" "$2" <<'PY'
import glob, os, sys
import numpy as np
a, b = (sorted(glob.glob(d + "/*.npy")) for d in sys.argv[1:3])
assert len(a) == 1 and len(b) == 1, (a, b)
assert os.path.basename(a[0]) == os.path.basename(b[0]), (a, b)
x, y = np.load(a[0]), np.load(b[0])
assert x.shape == y.shape, (x.shape, y.shape)
assert np.allclose(x, y, rtol=1e-4, atol=1e-5), f"max abs error {np.abs(x - y).max()}"
PY
}

/usr/bin/python3 - "$root/tests/realmodels" "$tmp/models/resnet18" <<'PY' >"$tmp/log" 2>&1 || fail "exporting resnet18: $(cat "$tmp/log")"
import sys
sys.path.insert(0, sys.argv[1])
import numpy as np
import torch
import torchvision
from export_models import write_export
torch.manual_seed(0)
inputs = {"input": np.random.default_rng(0).standard_normal((1, 3, 32, 32)).astype(np.float32)}
write_export(torchvision.models.resnet18(weights=None).eval(), inputs, sys.argv[2])
PY

round_trip() {
  local name=$1 onnx=$2 inputs=$3
  "$kiln" export-mlir "$onnx" -o "$tmp/top/$name" >"$tmp/log" 2>&1 || { fail "$name: export-mlir: $(cat "$tmp/log")"; return; }
  "$kiln" run "$onnx" --inputs "$inputs" --outputs "$tmp/$name/onnx" >"$tmp/log" 2>&1 ||
    { fail "$name: run model.onnx: $(cat "$tmp/log")"; return; }
  "$kiln" run "$tmp/top/${name}_origin.mlir" --inputs "$inputs" --outputs "$tmp/$name/mlir" >"$tmp/log" 2>&1 ||
    { fail "$name: run ${name}_origin.mlir: $(cat "$tmp/log")"; return; }
  same_outputs "$tmp/$name/onnx" "$tmp/$name/mlir" || fail "$name: the .mlir's outputs differ from the ONNX model's"
}

round_trip cnn "$root/examples/cnn/model.onnx" "$root/examples/cnn/inputs"
round_trip resnet18 "$tmp/models/resnet18/model.onnx" "$tmp/models/resnet18/inputs"

# The weights moved elsewhere: the .mlir alone names a file that is not there; --weights finds them.
mlir=$tmp/top/cnn_origin.mlir
mkdir -p "$tmp/elsewhere"
mv "$tmp/top/cnn_TOP_F32_all_weight.npz" "$tmp/elsewhere/cnn_weights.npz"
expect_error "weights not beside the .mlir" "cnn_origin\.mlir: the weight file .*cnn_TOP_F32_all_weight\.npz, does not exist" \
  "$kiln" run "$mlir" --inputs "$root/examples/cnn/inputs" --outputs "$tmp/cnn/none"
"$kiln" run "$mlir" --weights "$tmp/elsewhere/cnn_weights.npz" --engine interp --inputs "$root/examples/cnn/inputs" \
  --outputs "$tmp/cnn/moved" >"$tmp/log" 2>&1 || fail "run --weights: $(cat "$tmp/log")"
same_outputs "$tmp/cnn/onnx" "$tmp/cnn/moved" || fail "run --weights: the outputs differ from the ONNX model's"
"$kiln" print "$mlir" --weights "$tmp/elsewhere/cnn_weights.npz" >"$tmp/printed" 2>"$tmp/log" || fail "print: $(cat "$tmp/log")"
grep -q "nn.conv2d" "$tmp/printed" || fail "print: no nn.conv2d in $(head -c 300 "$tmp/printed")"
"$kiln" compile "$mlir" --weights "$tmp/elsewhere/cnn_weights.npz" -o "$tmp/cnn.kiln" >"$tmp/log" 2>&1 ||
  fail "compile: $(cat "$tmp/log")"

expect_error "--weights on ONNX" "--weights applies to Top MLIR \(\.mlir\) models only" \
  "$kiln" print "$root/examples/cnn/model.onnx" --weights "$tmp/elsewhere/cnn_weights.npz"
top() {  # the text of a module whose @main takes x: tensor<2xf32> and runs the lines given
  printf 'module {\n  func.func @main(%%arg0: tensor<2xf32>) -> tensor<2xf32> {\n'
  printf '    %%0 = "top.Input"(%%arg0) : (tensor<2xf32>) -> tensor<2xf32> loc("x")\n'
  printf '%s\n' "$@"
  printf '  }\n}\n'
}
top '    %1 = "top.Erf"(%0) : (tensor<2xf32>) -> tensor<2xf32>' '    return %1 : tensor<2xf32>' >"$tmp/erf.mlir"
expect_error "unknown Top op" "erf\.mlir: op 'top\.Erf': line 4:5: unknown Top op" "$kiln" compile "$tmp/erf.mlir" -o "$tmp/e.kiln"
top '    %1 = "top.Relu"(%0 : (tensor<2xf32>) -> tensor<2xf32>' >"$tmp/bad.mlir"
expect_error "malformed text" "bad\.mlir: line 4:24: expected '\)' closing the operands of top\.Relu" "$kiln" run "$tmp/bad.mlir"

echo "$failures failed"
exit $((failures > 0))

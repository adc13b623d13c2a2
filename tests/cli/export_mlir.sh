#!/usr/bin/env bash
# `kiln export-mlir MODEL -o DIR/NAME`: the bundled CNN written as tpu-mlir's Top dialect.
# mlir-opt-16 parses the text, the npz holds exactly the weights the text's top.Weight ops
# name, and what Top cannot hold (an int64 input, an op with no Top counterpart) is one error.
set -uo pipefail
kiln=$1 root=$2
source "$(dirname "${BASH_SOURCE[0]}")/lib/expect.sh"

"$kiln" export-mlir "$root/examples/cnn/model.onnx" -o "$tmp/top/cnn" >"$tmp/log" 2>&1 || fail "export-mlir: $(cat "$tmp/log")"
mlir=$tmp/top/cnn_origin.mlir npz=$tmp/top/cnn_TOP_F32_all_weight.npz
[[ -f $mlir && -f $npz ]] || fail "no cnn_origin.mlir / cnn_TOP_F32_all_weight.npz: $(ls "$tmp/top")"
grep -q '"top.Conv"' "$mlir" || fail "no top.Conv in the text"
grep -q 'module.weight_file = "cnn_TOP_F32_all_weight.npz"' "$mlir" || fail "the module does not name its weight file"
mlir-opt-16 --allow-unregistered-dialect "$mlir" >/dev/null 2>"$tmp/err" || fail "mlir-opt-16: $(cat "$tmp/err")"
/usr/bin/python3 - "$mlir" "$npz" <<'PY' || fail "the npz does not match the top.Weight ops"
import re, sys
import numpy as np
text = open(sys.argv[1]).read()
# Each top.Weight's location alias names it: %N = "top.Weight"() ... loc(#locK), #locK = loc("name").
aliases = dict(re.findall(r'^#(loc\d+) = loc\("([^"]*)"\)', text, re.M))
weights = re.findall(r'"top\.Weight"\(\) : \(\) -> tensor<([^>]*)> loc\(#(loc\d+)\)', text)
npz = np.load(sys.argv[2])
names = [aliases[loc] for _, loc in weights]
assert sorted(names) == sorted(npz.files), (names, npz.files)
for shape, loc in weights:
    dims = tuple(int(d) for d in shape.split("x")[:-1])
    assert npz[aliases[loc]].shape == dims, (aliases[loc], npz[aliases[loc]].shape, dims)
PY

printf 'def @main(%%x: Tensor[(2), int64]) { add(%%x, %%x) }\n' >"$tmp/int64.relay"
expect_error "int64 input" "int64\.relay: .*'x' is int64" "$kiln" export-mlir "$tmp/int64.relay" -o "$tmp/top/i"
printf 'def @main(%%x: Tensor[(2), float32]) { erf(%%x) }\n' >"$tmp/erf.relay"
expect_error "op without Top" "erf\.relay: .*no TpuLang op for erf" "$kiln" export-mlir "$tmp/erf.relay" -o "$tmp/top/e"
expect_error "no -o" "needs the output name" "$kiln" export-mlir "$tmp/erf.relay"

echo "$failures failed"
exit $((failures > 0))

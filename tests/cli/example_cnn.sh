#!/usr/bin/env bash
# The README's main example: the bundled ONNX classifier runs and matches PyTorch's output.
set -euo pipefail
kiln=$1 root=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
example=$root/examples/cnn
"$kiln" print "$example/model.onnx" | grep 'nn.softmax(%[0-9]*, axis=1) /\* ty=Tensor\[(1, 10), float32\] \*/' >/dev/null
"$kiln" run "$example/model.onnx" --engine interp --inputs "$example/inputs" --outputs "$out" >/dev/null
/usr/bin/python3 - "$out/probs.npy" "$example/expected/probs.npy" <<'PY'
import sys, numpy as np
got, want = np.load(sys.argv[1]), np.load(sys.argv[2])
assert got.shape == want.shape == (1, 10), (got.shape, want.shape)
assert np.allclose(got, want, rtol=1e-4, atol=1e-6), np.abs(got - want).max()
PY
# The compiled artifact gives the same answer.
"$kiln" compile "$example/model.onnx" -o "$out/model.kiln" >/dev/null
test -f "$out/model.kiln/graph.json" && test -f "$out/model.kiln/params.bin"
"$kiln" run "$out/model.kiln" --inputs "$example/inputs" --outputs "$out/compiled" >/dev/null
/usr/bin/python3 - "$out/compiled/probs.npy" "$example/expected/probs.npy" <<'PY'
import sys, numpy as np
got, want = np.load(sys.argv[1]), np.load(sys.argv[2])
assert got.shape == want.shape == (1, 10), (got.shape, want.shape)
assert np.allclose(got, want, rtol=1e-4, atol=1e-6), np.abs(got - want).max()
PY
"$kiln" bench "$out/model.kiln" --repeat 3 --warmup 1 | tail -n 1 | grep -E '^median_ms=[0-9.]+ min_ms=[0-9.]+$' >/dev/null

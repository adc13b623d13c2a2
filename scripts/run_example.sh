#!/usr/bin/env bash
# Sets up the machine, builds kiln and runs the bundled example model (examples/cnn, a small
# image classifier exported from PyTorch): prints its IR after import and type inference,
# compiles it to native code, runs the artifact on the bundled input, compares the result
# with PyTorch's, and times it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh" release
kiln="$root/build/release/kiln"
example="$root/examples/cnn"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "== kiln print examples/cnn/model.onnx   (weights elided)"
"$kiln" print "$example/model.onnx" | sed '/^#\[metadata\]/,$d'
echo "== kiln compile examples/cnn/model.onnx -o model.kiln"
"$kiln" compile "$example/model.onnx" -o "$out/model.kiln"
ls "$out/model.kiln"
echo "== kiln run model.kiln   (the compiled artifact)"
"$kiln" run "$out/model.kiln" --inputs "$example/inputs" --outputs "$out"
/usr/bin/python3 - "$out/probs.npy" "$example/expected/probs.npy" <<'PY'
import sys, numpy as np
got, want = np.load(sys.argv[1]), np.load(sys.argv[2])
np.set_printoptions(precision=5, suppress=True)
print("kiln:   ", got[0])
print("PyTorch:", want[0])
print("max abs difference:", float(np.abs(got - want).max()))
PY
echo "== kiln bench model.kiln"
"$kiln" bench "$out/model.kiln" --inputs "$example/inputs"

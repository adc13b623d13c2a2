#!/usr/bin/env bash
# The bundled example runs through the interpreter and matches numpy.
set -euo pipefail
kiln=$1 root=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$kiln" run "$root/examples/mlp/model.relay" --engine interp --inputs "$root/examples/mlp/inputs" \
  --outputs "$out/kiln" >/dev/null
mkdir -p "$out/numpy"
/usr/bin/python3 "$root/examples/mlp/make_inputs.py" --expected "$out/numpy"
/usr/bin/python3 - "$out" <<'PY'
import sys, numpy as np
d = sys.argv[1]
got, want = np.load(d + "/kiln/output_0.npy"), np.load(d + "/numpy/output_0.npy")
assert got.shape == want.shape, (got.shape, want.shape)
assert np.allclose(got, want, rtol=1e-5, atol=1e-6), (got, want)
PY

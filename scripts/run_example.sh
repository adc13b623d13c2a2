#!/usr/bin/env bash
# Sets up the machine, builds kiln and runs the bundled example model: prints its IR
# after type inference, runs it on the bundled input and shows the output.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh" release
kiln="$root/build/release/kiln"
example="$root/examples/mlp"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "== kiln print examples/mlp/model.relay"
"$kiln" print "$example/model.relay"
echo "== kiln run examples/mlp/model.relay --engine interp"
"$kiln" run "$example/model.relay" --engine interp --inputs "$example/inputs" --outputs "$out"
/usr/bin/python3 -c "import numpy as np, sys; print(np.load(sys.argv[1]))" "$out/output_0.npy"

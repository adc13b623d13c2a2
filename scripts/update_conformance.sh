#!/usr/bin/env bash
# Rewrites tests/conformance/interp_passing.txt from a conformance run of the release build
# (what tests/cli/onnx_conformance.sh holds the code to), and regenerates docs/onnx-support.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
kiln=${1:-$root/build/release/kiln}
"$root/scripts/conformance.sh" "$kiln" interp >"$root/build/conformance-interp.txt"
sed -n 's/^PASS //p' "$root/build/conformance-interp.txt" | sort >"$root/tests/conformance/interp_passing.txt"
tail -n 1 "$root/build/conformance-interp.txt"
/usr/bin/python3 "$root/scripts/gen_onnx_support.py" "$kiln" "$root/build/conformance-interp.txt" >"$root/docs/onnx-support.md"
echo "wrote tests/conformance/interp_passing.txt and docs/onnx-support.md"

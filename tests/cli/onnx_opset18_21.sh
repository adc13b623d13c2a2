#!/usr/bin/env bash
# The ONNX operators and operator changes of opsets 18 to 21 (tests/realmodels/opset_cases):
# each case model, built with python3-onnx's helpers, runs through kiln's interpreter and
# compiled engine and matches ONNX Runtime.
set -euo pipefail
kiln=$1 root=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
/usr/bin/python3 "$root/tests/realmodels/opset18_21_models.py" "$out"
source "$root/tests/realmodels/check_against_ort.sh"
check_models "$kiln" "$root" "$out"
exit $((failures > 0))

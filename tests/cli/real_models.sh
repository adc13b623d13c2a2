#!/usr/bin/env bash
# Real exports (torchvision ResNet-18, MobileNetV2, EfficientNet-B0, RegNetY-400MF and a
# TransformerEncoder with token embedding, random weights) import fully static, run through
# kiln's interpreter, compile to an artifact that runs with the compiled engine, and both
# match ONNX Runtime within rtol 1e-3 / atol 1e-4.
set -euo pipefail
kiln=$1 root=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
/usr/bin/python3 "$root/tests/realmodels/export_models.py" "$out" 2>/dev/null
check_static=1
source "$root/tests/realmodels/check_against_ort.sh"
check_models "$kiln" "$root" "$out"
exit $((failures > 0))

#!/usr/bin/env bash
# A detector head ending in NonMaxSuppression (tests/realmodels/nms_detector_model.py): the
# boxes NMS selects, and everything computed from them, have a run-time shape. It runs
# through kiln's interpreter and compiled engine (reference kernels with output functions
# size those results at run time) and matches ONNX Runtime.
set -euo pipefail
kiln=$1 root=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
/usr/bin/python3 "$root/tests/realmodels/nms_detector_model.py" "$out"
source "$root/tests/realmodels/check_against_ort.sh"
check_models "$kiln" "$root" "$out"
exit $((failures > 0))

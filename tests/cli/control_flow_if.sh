#!/usr/bin/env bash
# An If on a scalar input compiles into control flow: a voice-activity switch whose branches
# each run an LSTM (then: LSTM(hidden 32); else: another LSTM, its last state through a
# sigmoid) compiles to one artifact whose "kiln_if" node runs only the branch taken, and
# matches ONNX Runtime for both values of the switch; the artifact copied elsewhere still runs.
set -uo pipefail
kiln=$1 root=$2
source "$(dirname "${BASH_SOURCE[0]}")/lib/expect.sh"

/usr/bin/python3 - "$tmp" <<'PY'
import os, sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(7)
seq, batch, inp, hidden = 6, 1, 8, 32

def lstm_weights(prefix):
    shapes = {"W": (1, 4 * hidden, inp), "R": (1, 4 * hidden, hidden), "B": (1, 8 * hidden)}
    return [numpy_helper.from_array((rng.standard_normal(s) * 0.3).astype(np.float32), f"{prefix}_{k}")
            for k, s in shapes.items()]

def branch(prefix, squash):
    nodes = [helper.make_node("LSTM", ["x", f"{prefix}_W", f"{prefix}_R", f"{prefix}_B"],
                              ["", f"{prefix}_h", f"{prefix}_c"], hidden_size=hidden, name=f"{prefix}_lstm")]
    h = f"{prefix}_h"
    if squash:
        nodes.append(helper.make_node("Sigmoid", [h], [f"{prefix}_hs"], name=f"{prefix}_sigmoid"))
        h = f"{prefix}_hs"
    state = [1, batch, hidden]
    return helper.make_graph(nodes, prefix, [], [helper.make_tensor_value_info(h, TensorProto.FLOAT, state),
                                                 helper.make_tensor_value_info(f"{prefix}_c", TensorProto.FLOAT, state)])

graph = helper.make_graph(
    [helper.make_node("If", ["is_speech"], ["h", "c"], name="switch_detector",
                      then_branch=branch("speech", False), else_branch=branch("noise", True))],
    "vad_switch",
    [helper.make_tensor_value_info("is_speech", TensorProto.BOOL, []),
     helper.make_tensor_value_info("x", TensorProto.FLOAT, [seq, batch, inp])],
    [helper.make_tensor_value_info("h", TensorProto.FLOAT, [1, batch, hidden]),
     helper.make_tensor_value_info("c", TensorProto.FLOAT, [1, batch, hidden])],
    lstm_weights("speech") + lstm_weights("noise"))
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
onnx.checker.check_model(model)
onnx.save(model, os.path.join(out, "model.onnx"))
x = rng.standard_normal((seq, batch, inp)).astype(np.float32)
for flag in (True, False):
    folder = os.path.join(out, f"inputs_{str(flag).lower()}")
    os.makedirs(folder)
    np.save(os.path.join(folder, "x.npy"), x)
    np.save(os.path.join(folder, "is_speech.npy"), np.array(flag))
PY

model=$tmp/model.onnx
for cond in true false; do
  node "$root/tools/ort/run.js" "$model" --inputs "$tmp/inputs_$cond" --outputs "$tmp/want_$cond" >/dev/null ||
    fail "ONNX Runtime on is_speech=$cond"
done
# The branches differ: a model that ignored the switch would pass one of the two comparisons only.
/usr/bin/python3 "$root/tests/realmodels/compare.py" "$tmp/want_true" "$tmp/want_false" >/dev/null &&
  fail "the two branches give the same outputs; the test would not tell them apart"

if ! "$kiln" compile "$model" -o "$tmp/vad.kiln" >/dev/null 2>"$tmp/err"; then
  fail "compile: $(cat "$tmp/err")"
  exit 1
fi
grep -q '"kiln_if"' "$tmp/vad.kiln/graph.json" || fail "graph.json has no kiln_if node"
grep -q '"subgraphs"' "$tmp/vad.kiln/graph.json" || fail "graph.json has no sub-graphs"
[[ $(grep -c '"op": "kiln_if"' "$tmp/vad.kiln/graph.json") -eq 1 ]] ||
  fail "the If's two outputs did not become one kiln_if node"

# check DESCRIPTION MODEL [OPTION...]: runs it for both values of the switch against ONNX Runtime.
check() {
  local what=$1 artifact=$2 cond
  shift 2
  for cond in true false; do
    rm -rf "$tmp/got"
    if ! "$kiln" run "$artifact" "$@" --inputs "$tmp/inputs_$cond" --outputs "$tmp/got" >/dev/null 2>"$tmp/err"; then
      fail "$what, is_speech=$cond: $(cat "$tmp/err")"
    elif ! /usr/bin/python3 "$root/tests/realmodels/compare.py" "$tmp/got" "$tmp/want_$cond"; then
      fail "$what, is_speech=$cond: outputs differ from ONNX Runtime"
    fi
  done
}
check "compiled artifact" "$tmp/vad.kiln"
check "interpreter" "$model" --engine interp

mkdir -p "$tmp/elsewhere"
cp -r "$tmp/vad.kiln" "$tmp/elsewhere/moved.kiln"
rm -rf "$tmp/vad.kiln"
check "artifact copied elsewhere" "$tmp/elsewhere/moved.kiln"

exit $((failures > 0))

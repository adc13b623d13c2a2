#!/usr/bin/env bash
# A Loop whose trip count M is a model input compiles into control flow: an RNN-like
# recurrence h <- tanh(h @ W + x[i]) with every h as a scan output and a run-time condition
# (stop once sum(h) crosses a threshold) compiles once to an artifact whose "kiln_loop" node
# runs its body sub-graph, and matches ONNX Runtime for M = 0, 1, 5 and 40 (40 stops early on
# the condition); the artifact copied elsewhere still runs. A torch.jit.script'ed greedy
# decoding loop exported by torch.onnx.export (a Loop of run-time trip count) matches too.
set -uo pipefail
kiln=$1 root=$2
source "$(dirname "${BASH_SOURCE[0]}")/lib/expect.sh"

/usr/bin/python3 - "$tmp" <<'PY'
import os, sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(11)
steps, width = 64, 8
W = (rng.standard_normal((width, width)) * 0.3).astype(np.float32)
x = (np.arange(steps, dtype=np.float32)[:, None] * 0.04 - 1.2 + rng.standard_normal((steps, width)) * 0.05).astype(np.float32)
h0 = (rng.standard_normal((1, width)) * 0.1).astype(np.float32)

# The threshold the condition stops on: between the largest sum before some iteration k >= 10
# and the sum at k, so that M = 40 stops early (the sums grow with x).
h, sums = h0, []
for i in range(40):
    h = np.tanh(h @ W + x[i])
    sums.append(float(h.sum()))
k = next(k for k in range(10, 40) if sums[k] > max(sums[:k]) + 0.05)
limit = np.float32((max(sums[:k]) + sums[k]) / 2)

body = helper.make_graph(
    [helper.make_node("Gather", ["x", "i"], ["x_i"], axis=0),
     helper.make_node("MatMul", ["h", "W"], ["hw"]),
     helper.make_node("Add", ["hw", "x_i"], ["pre"]),
     helper.make_node("Tanh", ["pre"], ["h_next"]),
     helper.make_node("ReduceSum", ["h_next"], ["total"], keepdims=0),
     helper.make_node("Less", ["total", "limit"], ["go_on"]),
     helper.make_node("Identity", ["h_next"], ["h_scan"])],
    "body",
    [helper.make_tensor_value_info("i", TensorProto.INT64, []),
     helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
     helper.make_tensor_value_info("h", TensorProto.FLOAT, [1, width])],
    [helper.make_tensor_value_info("go_on", TensorProto.BOOL, []),
     helper.make_tensor_value_info("h_next", TensorProto.FLOAT, [1, width]),
     helper.make_tensor_value_info("h_scan", TensorProto.FLOAT, [1, width])])
graph = helper.make_graph(
    [helper.make_node("Loop", ["M", "keep_going", "h0"], ["h_final", "h_all"], name="recurrence", body=body)],
    "run_time_loop",
    [helper.make_tensor_value_info("M", TensorProto.INT64, []),
     helper.make_tensor_value_info("h0", TensorProto.FLOAT, [1, width])],
    [helper.make_tensor_value_info("h_final", TensorProto.FLOAT, [1, width]),
     helper.make_tensor_value_info("h_all", TensorProto.FLOAT, ["iterations", 1, width])],
    [numpy_helper.from_array(W, "W"), numpy_helper.from_array(x, "x"),
     numpy_helper.from_array(np.array(limit), "limit"), numpy_helper.from_array(np.array(True), "keep_going")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(model)
onnx.save(model, os.path.join(out, "loop.onnx"))
for m in (0, 1, 5, 40):
    folder = os.path.join(out, f"inputs_{m}")
    os.makedirs(folder)
    np.save(os.path.join(folder, "M.npy"), np.array(m, dtype=np.int64))
    np.save(os.path.join(folder, "h0.npy"), h0)
PY

model=$tmp/loop.onnx
for m in 0 1 5 40; do
  node "$root/tools/ort/run.js" "$model" --inputs "$tmp/inputs_$m" --outputs "$tmp/want_$m" >/dev/null ||
    fail "ONNX Runtime on M=$m"
done
# M = 40 stops on the condition: fewer than 40 rows of h.
/usr/bin/python3 -c "
import numpy as np, sys
rows = np.load('$tmp/want_40/h_all.npy').shape[0]
sys.exit(0 if 5 < rows < 40 else 1)" || fail "the condition does not stop the M=40 loop early; the test would not exercise it"

if ! "$kiln" compile "$model" -o "$tmp/loop.kiln" >/dev/null 2>"$tmp/err"; then
  fail "compile: $(cat "$tmp/err")"
  exit 1
fi
[[ $(grep -c '"op": "kiln_loop"' "$tmp/loop.kiln/graph.json") -eq 1 ]] || fail "graph.json has no kiln_loop node"
grep -q '"subgraphs"' "$tmp/loop.kiln/graph.json" || fail "graph.json has no sub-graphs"

# check DESCRIPTION MODEL [OPTION...]: runs it for every M against ONNX Runtime.
check() {
  local what=$1 artifact=$2 m
  shift 2
  for m in 0 1 5 40; do
    rm -rf "$tmp/got"
    if ! "$kiln" run "$artifact" "$@" --inputs "$tmp/inputs_$m" --outputs "$tmp/got" >/dev/null 2>"$tmp/err"; then
      fail "$what, M=$m: $(cat "$tmp/err")"
    elif ! /usr/bin/python3 "$root/tests/realmodels/compare.py" "$tmp/got" "$tmp/want_$m"; then
      fail "$what, M=$m: outputs differ from ONNX Runtime"
    fi
  done
}
check "compiled artifact" "$tmp/loop.kiln"
check "interpreter" "$model" --engine interp

mkdir -p "$tmp/elsewhere"
cp -r "$tmp/loop.kiln" "$tmp/elsewhere/moved.kiln"
rm -rf "$tmp/loop.kiln"
check "artifact copied elsewhere" "$tmp/elsewhere/moved.kiln"

# A greedy-decoding loop written in TorchScript: torch.onnx.export turns its run-time
# `range(steps)` into a Loop whose trip count is the input `steps`.
# (torch.jit.script reads the source, so the script is a file.)
mkdir -p "$tmp/torch"
cat >"$tmp/torch/greedy.py" <<'PY'
import os
import numpy as np
import onnx
import torch

torch.manual_seed(0)

class Greedy(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Parameter(torch.randn(10, 8) * 0.5)
        self.w = torch.nn.Parameter(torch.randn(8, 8) * 0.3)
        self.out = torch.nn.Parameter(torch.randn(8, 10) * 0.5)

    def forward(self, h, tok, steps):
        for _ in range(int(steps)):
            h = torch.tanh(h @ self.w + self.emb[tok])
            tok = torch.argmax(h @ self.out, dim=1)
        return h, tok

model = torch.jit.script(Greedy())
torch.onnx.export(model, (torch.zeros(1, 8), torch.zeros(1, dtype=torch.long), torch.tensor(6)), "greedy.onnx",
                  input_names=["h", "tok", "steps"], output_names=["h_out", "tok_out"], opset_version=13)
assert "Loop" in [n.op_type for n in onnx.load("greedy.onnx").graph.node]
for s in (0, 3, 6):
    os.makedirs(f"in_{s}")
    np.save(f"in_{s}/h.npy", np.random.default_rng(s).standard_normal((1, 8)).astype(np.float32))
    np.save(f"in_{s}/tok.npy", np.array([s % 10], dtype=np.int64))
    np.save(f"in_{s}/steps.npy", np.array(s, dtype=np.int64))
PY
if ! (cd "$tmp/torch" && /usr/bin/python3 greedy.py >"$tmp/torch_log" 2>&1); then
  fail "torch.onnx.export of the scripted loop: $(tail -n 3 "$tmp/torch_log")"
elif ! "$kiln" compile "$tmp/torch/greedy.onnx" -o "$tmp/greedy.kiln" >/dev/null 2>"$tmp/err"; then
  fail "compile the exported greedy loop: $(cat "$tmp/err")"
else
  grep -q '"op": "kiln_loop"' "$tmp/greedy.kiln/graph.json" || fail "the greedy loop did not become a kiln_loop node"
  for s in 0 3 6; do
    rm -rf "$tmp/got"
    node "$root/tools/ort/run.js" "$tmp/torch/greedy.onnx" --inputs "$tmp/torch/in_$s" --outputs "$tmp/torch/want_$s" \
      >/dev/null || fail "ONNX Runtime on the greedy loop, steps=$s"
    if ! "$kiln" run "$tmp/greedy.kiln" --inputs "$tmp/torch/in_$s" --outputs "$tmp/got" >/dev/null 2>"$tmp/err"; then
      fail "greedy loop, steps=$s: $(cat "$tmp/err")"
    elif ! /usr/bin/python3 "$root/tests/realmodels/compare.py" "$tmp/got" "$tmp/torch/want_$s"; then
      fail "greedy loop, steps=$s: outputs differ from ONNX Runtime"
    fi
  done
fi

exit $((failures > 0))

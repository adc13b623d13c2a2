#!/usr/bin/env bash
# LSTM / GRU / RNN with sequence_lens, given at run time or as a constant: batch entries shorter
# than X stop early (their Y rows are zeros past their length, Y_h / Y_c the state after their
# last step, in either direction). Forward, reverse and bidirectional layers compiled and
# interpreted match ONNX Runtime for two sets of lengths; lengths all equal to X's keep the
# one-kernel sequence op (nn.lstm) in the compiled graph.
set -uo pipefail
kiln=$1 root=$2
source "$(dirname "${BASH_SOURCE[0]}")/lib/expect.sh"

/usr/bin/python3 - "$tmp" <<'PY'
import os, sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(5)
seq, batch, features, hidden = 6, 3, 5, 4
gates = {"LSTM": 4, "GRU": 3, "RNN": 1}

def model(name, cell, direction, lens_constant=None, **attrs):
    dirs = 2 if direction == "bidirectional" else 1
    g = gates[cell]
    inits = [numpy_helper.from_array((rng.standard_normal((dirs, g * hidden, features)) * 0.4).astype(np.float32), "W"),
             numpy_helper.from_array((rng.standard_normal((dirs, g * hidden, hidden)) * 0.4).astype(np.float32), "R"),
             numpy_helper.from_array((rng.standard_normal((dirs, 2 * g * hidden)) * 0.2).astype(np.float32), "B")]
    inputs = [helper.make_tensor_value_info("X", TensorProto.FLOAT, [seq, batch, features])]
    if lens_constant is None:
        inputs.append(helper.make_tensor_value_info("lens", TensorProto.INT32, [batch]))
    else:
        inits.append(numpy_helper.from_array(np.array(lens_constant, dtype=np.int32), "lens"))
    outs = ["Y", "Y_h"] + (["Y_c"] if cell == "LSTM" else [])
    node = helper.make_node(cell, ["X", "W", "R", "B", "lens"], outs, hidden_size=hidden, direction=direction, **attrs)
    value_infos = [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [seq, dirs, batch, hidden])] + [
        helper.make_tensor_value_info(o, TensorProto.FLOAT, [dirs, batch, hidden]) for o in outs[1:]]
    m = helper.make_model(helper.make_graph([node], name, inputs, value_infos, inits),
                          opset_imports=[helper.make_opsetid("", 14)])
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(out, name + ".onnx"))

model("lstm_forward", "LSTM", "forward")
model("lstm_reverse", "LSTM", "reverse")
model("lstm_bidirectional", "LSTM", "bidirectional")
model("gru_bidirectional", "GRU", "bidirectional", linear_before_reset=1)
model("gru_reverse", "GRU", "reverse")
model("rnn_forward", "RNN", "forward")
model("lstm_constant_lens", "LSTM", "bidirectional", lens_constant=[4, 6, 2])
model("lstm_full_lens", "LSTM", "forward", lens_constant=[seq] * batch)
x = rng.standard_normal((seq, batch, features)).astype(np.float32)
for k, lens in enumerate(([6, 3, 1], [2, 6, 4])):
    folder = os.path.join(out, f"inputs_{k}")
    os.makedirs(folder)
    np.save(os.path.join(folder, "X.npy"), x)
    np.save(os.path.join(folder, "lens.npy"), np.array(lens, dtype=np.int32))
os.makedirs(os.path.join(out, "inputs_x"))
np.save(os.path.join(out, "inputs_x", "X.npy"), x)
PY

# check NAME INPUTS: NAME compiled and interpreted against ONNX Runtime on inputs_INPUTS.
check() {
  local name=$1 inputs=$tmp/inputs_$2 engine
  node "$root/tools/ort/run.js" "$tmp/$name.onnx" --inputs "$inputs" --outputs "$tmp/want" >/dev/null 2>"$tmp/err" ||
    { fail "ONNX Runtime on $name: $(tail -n 2 "$tmp/err")"; return; }
  for engine in compiled interp; do
    rm -rf "$tmp/got"
    if ! "$kiln" run "$tmp/$name.onnx" --engine "$engine" --inputs "$inputs" --outputs "$tmp/got" >/dev/null 2>"$tmp/err"; then
      fail "$name ($engine, inputs $2): $(cat "$tmp/err")"
    elif ! /usr/bin/python3 "$root/tests/realmodels/compare.py" "$tmp/got" "$tmp/want" >"$tmp/diff"; then
      fail "$name ($engine, inputs $2): outputs differ from ONNX Runtime: $(head -n 2 "$tmp/diff")"
    fi
  done
  rm -rf "$tmp/want"
}
for name in lstm_forward lstm_reverse lstm_bidirectional gru_bidirectional gru_reverse rnn_forward; do
  check "$name" 0
  check "$name" 1
done
check lstm_constant_lens x
check lstm_full_lens x

# Lengths equal to X's everywhere change nothing: the layer stays one sequence kernel.
"$kiln" compile "$tmp/lstm_full_lens.onnx" -o "$tmp/full.kiln" >/dev/null 2>"$tmp/err" || fail "compile: $(cat "$tmp/err")"
grep -q 'kiln_lstm_seq_f32' "$tmp/full.kiln/kernels.c" || fail "full-length sequence_lens did not keep the LSTM sequence kernel"
exit $((failures > 0))

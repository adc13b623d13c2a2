#!/usr/bin/env bash
# ONNX models on the command line: bad models and bad options end in one clear line on
# stderr and exit status 1; good ones print, run, and pass `kiln onnx-test`.
set -uo pipefail
kiln=$1
source "$(dirname "${BASH_SOURCE[0]}")/lib/expect.sh"
python=/usr/bin/python3

# Models made with ONNX's own Python helpers.
(cd "$tmp" && "$python" - <<'EOF') || { echo "FAIL: cannot make test models"; exit 1; }
import numpy as np, onnx, os
from onnx import helper, numpy_helper, TensorProto as T

def save(name, nodes, inputs, outputs, inits=(), opset=13):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), name + ".onnx")

x = helper.make_tensor_value_info("x", T.FLOAT, [1, 3, "H", "W"])
y = helper.make_tensor_value_info("y", T.FLOAT, [1, 3, "H", "W"])
save("relu", [helper.make_node("Relu", ["x"], ["y"], name="relu1")], [x], [y])
save("unsupported", [helper.make_node("Frobnicate", ["x"], ["t"], name="frob1"),
                     helper.make_node("Twiddle", ["t"], ["y"], name="twid1")], [x], [y])
save("bad_node", [helper.make_node("Relu", [""], ["y"], name="relu1")], [x], [y])

# A conformance case: y = x @ w + 1, with its data set.
w = np.arange(6, dtype=np.float32).reshape(3, 2)
case = "case_matmul"
os.makedirs(case + "/test_data_set_0")
xi = helper.make_tensor_value_info("x", T.FLOAT, [2, 3])
yo = helper.make_tensor_value_info("y", T.FLOAT, [2, 2])
save(case + "/model", [helper.make_node("MatMul", ["x", "w"], ["t"]), helper.make_node("Add", ["t", "one"], ["y"])],
     [xi], [yo], [numpy_helper.from_array(w, "w"), numpy_helper.from_array(np.ones(1, np.float32), "one")])
xv = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
def write(path, array):
    with open(path, "wb") as f: f.write(numpy_helper.from_array(array).SerializeToString())
write(case + "/test_data_set_0/input_0.pb", xv)
write(case + "/test_data_set_0/output_0.pb", xv @ w + 1)
os.makedirs("case_wrong/test_data_set_0")
os.system("cp %s/model.onnx case_wrong/" % case)
write("case_wrong/test_data_set_0/input_0.pb", xv)
write("case_wrong/test_data_set_0/output_0.pb", xv @ w + 2)
np.save("x.npy", np.array([[[[-1, 2]], [[3, -4]], [[0, 5]]]], np.float32))
EOF

head -c 20 "$tmp/relu.onnx" >"$tmp/truncated.onnx"
printf 'this is not a model\n' >"$tmp/text.onnx"
: >"$tmp/empty.onnx"

expect_error "truncated model" "truncated.onnx: not a valid ONNX model.*truncated, corrupt or not ONNX" \
  "$kiln" print "$tmp/truncated.onnx"
expect_error "text file" "text.onnx: not" "$kiln" print "$tmp/text.onnx"
expect_error "empty file" "empty.onnx: not an ONNX model: the file is empty" "$kiln" print "$tmp/empty.onnx"
expect_error "missing model" "no/such.onnx: cannot open" "$kiln" print "$tmp/no/such.onnx"
expect_error "unsupported ops" "2 unsupported ONNX ops: Frobnicate \(domain ai.onnx, opset 13: no converter; node 'frob1'\); Twiddle" \
  "$kiln" print "$tmp/unsupported.onnx"
expect_error "checker" "bad_node.onnx: the ONNX checker rejects the model: .*--no-check" "$kiln" print "$tmp/bad_node.onnx"
expect_error "checker skipped" "node 'relu1': op 'Relu': input 0 is required but empty" \
  "$kiln" print "$tmp/bad_node.onnx" --no-check
expect_error "wrong --shape rank" "--shape for input 'x' has the wrong rank \(expected rank 4 like \(1, 3, H, W\), found rank 2 \(1, 3\)\)" \
  "$kiln" print "$tmp/relu.onnx" --shape x=1,3
expect_error "unknown --shape name" "--shape names 'z', which is not an input of the model" \
  "$kiln" print "$tmp/relu.onnx" --shape z=1
expect_error "malformed --shape" "malformed --shape for 'x'" "$kiln" print "$tmp/relu.onnx" --shape x=1,three,4,4
expect_error "onnx-test without cases" "onnx-test takes one or more test case directories" "$kiln" onnx-test
expect_error "onnx-test on a missing dir" "'$tmp/nowhere' is not a directory" "$kiln" onnx-test "$tmp/nowhere"
expect_error "onnx-test engine" "unsupported engine" "$kiln" onnx-test "$tmp/case_matmul" --engine gpu

# Good models.
if ! "$kiln" print "$tmp/relu.onnx" --shape x=1,3,1,2 >"$tmp/out" 2>"$tmp/err" || ! grep -q "nn.relu" "$tmp/out" ||
  [[ -s "$tmp/err" ]]; then
  fail "print with --shape"
  cat "$tmp/err"
fi
"$kiln" print "$tmp/relu.onnx" >"$tmp/out" 2>"$tmp/err" || fail "print with unknown dims"
grep -q "warning: input 'x' has unknown dimensions (1, 3, H, W)" "$tmp/err" || fail "unknown dims warning: $(cat "$tmp/err")"
grep -q "Tensor\[(1, 3, ?, ?), float32\]" "$tmp/out" || fail "unknown dims kept as ?"

mkdir -p "$tmp/inputs" && cp "$tmp/x.npy" "$tmp/inputs/"
if "$kiln" run "$tmp/relu.onnx" --inputs "$tmp/inputs" --outputs "$tmp/outputs" >"$tmp/out" 2>"$tmp/err"; then
  "$python" -c "import numpy as np, sys; y = np.load(sys.argv[1]); assert y.shape == (1, 3, 1, 2) and y.min() == 0 and y.max() == 5, y" \
    "$tmp/outputs/y.npy" || fail "run output"
else
  fail "run: $(cat "$tmp/err")"
fi

"$kiln" onnx-test "$tmp/case_matmul" >"$tmp/out" 2>&1 || fail "onnx-test exit status"
[[ $(tail -n 1 "$tmp/out") == "1 passed, 0 failed, 0 skipped" ]] || fail "onnx-test passing case: $(cat "$tmp/out")"
"$kiln" onnx-test "$tmp/case_matmul" "$tmp/case_wrong" >"$tmp/out" 2>&1 || fail "onnx-test exits 0 with failures"
grep -q "^FAIL case_wrong: output 'y' (test_data_set_0): 4 of 4 elements differ" "$tmp/out" || fail "onnx-test failure line: $(cat "$tmp/out")"
[[ $(tail -n 1 "$tmp/out") == "1 passed, 1 failed, 0 skipped" ]] || fail "onnx-test summary: $(cat "$tmp/out")"
"$kiln" onnx-test "$tmp" >"$tmp/out" 2>&1 || fail "onnx-test on a directory of cases"
[[ $(tail -n 1 "$tmp/out") == "1 passed, 1 failed, 0 skipped" ]] || fail "onnx-test directory of cases: $(cat "$tmp/out")"

exit $((failures > 0))

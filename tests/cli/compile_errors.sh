#!/usr/bin/env bash
# Walks the error paths of `kiln compile`: each ends in one line on stderr and exit status 1,
# naming the file and, where one node is at fault, that node and its op; no artifact (or
# partial artifact) is left behind.
set -uo pipefail
kiln=$1
source "$(dirname "${BASH_SOURCE[0]}")/lib/expect.sh"

# expect_compile_error DESCRIPTION PATTERN MODEL [FLAGS...]: `kiln compile MODEL -o OUT FLAGS`
# exits 1 with one stderr line matching every |-separated part of PATTERN, and leaves no OUT.
expect_compile_error() {
  local what=$1 patterns=$2 model=$3 out=$tmp/out.kiln
  shift 3
  rm -rf "$out"
  "$kiln" compile "$model" -o "$out" "$@" >"$tmp/stdout" 2>"$tmp/err"
  local status=$? lines
  lines=$(wc -l <"$tmp/err")
  local ok=1 part
  IFS='|' read -r -a parts <<<"$patterns"
  for part in "${parts[@]}"; do grep -qF -- "$part" "$tmp/err" || ok=0; done
  if [[ $status -ne 1 || $lines -ne 1 || $ok -ne 1 ]]; then
    fail "$what: status $status, $lines stderr lines, expected to find '$patterns':"
    cat "$tmp/err"
  elif compgen -G "$tmp/*out.kiln*" >/dev/null; then
    fail "$what: left $(ls -d "$tmp"/*out.kiln*) behind"
  else
    echo "ok $what: $(cat "$tmp/err")"
  fi
}

(cd "$tmp" && /usr/bin/python3 - <<'EOF') || { echo "FAIL: cannot make test models"; exit 1; }
import numpy as np, onnx
from onnx import helper, numpy_helper, TensorProto as T

def save(name, nodes, inputs, outputs, inits=(), opset=13):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), name + ".onnx")

x = helper.make_tensor_value_info("x", T.FLOAT, [2, 3])
y = helper.make_tensor_value_info("y", T.FLOAT, [2, 3])
save("unsupported", [helper.make_node("Frobnicate", ["x"], ["y"], name="frob1")], [x], [y])
image = helper.make_tensor_value_info("image", T.FLOAT, [1, 2, 4, 4])
w = numpy_helper.from_array(np.ones((2, 2, 3, 3), np.float32), "w")
save("bad_attribute", [helper.make_node("Conv", ["image", "w"], ["y"], name="conv1", auto_pad="SIDEWAYS")],
     [image], [helper.make_tensor_value_info("y", T.FLOAT, None)], [w])
z = helper.make_tensor_value_info("z", T.FLOAT, [4, 3])
save("shape_mismatch", [helper.make_node("Add", ["x", "z"], ["y"], name="add1")], [x, z], [y])
save("cycle", [helper.make_node("Add", ["x", "b"], ["a"], name="first"),
               helper.make_node("Relu", ["a"], ["b"], name="second"),
               helper.make_node("Relu", ["a"], ["y"], name="third")], [x], [y])
flag = helper.make_tensor_value_info("flag", T.BOOL, [])
def branch(op):
    return helper.make_graph([helper.make_node(op, ["x"], ["r"])], op, [], [y_r := helper.make_tensor_value_info("r", T.FLOAT, [2, 3])])
save("control_flow", [helper.make_node("If", ["flag"], ["y"], name="switch", then_branch=branch("Relu"),
                                       else_branch=branch("Neg"))], [x, flag], [y])
save("relu", [helper.make_node("Relu", ["x"], ["y"], name="relu1")], [x], [y])
EOF

printf 'def @main(%%x: Tensor[(2, 3), float32], %%y: Tensor[(4, 3), float32]) {\n  add(%%x, %%y)\n}\n' \
  >"$tmp/mismatch.relay"
head -c 40 "$tmp/relu.onnx" >"$tmp/truncated.onnx"
mkdir -p "$tmp/not_an_artifact"
touch "$tmp/not_an_artifact/keep"

expect_compile_error "missing model" "$tmp/missing.onnx: cannot open" "$tmp/missing.onnx"
expect_compile_error "truncated model" "truncated.onnx: not a valid ONNX model" "$tmp/truncated.onnx"
expect_compile_error "unsupported op" "unsupported.onnx: |Frobnicate|'frob1'" "$tmp/unsupported.onnx"
expect_compile_error "attribute a converter rejects" "bad_attribute.onnx: node 'conv1': op 'Conv': |auto_pad" \
  "$tmp/bad_attribute.onnx" --no-check
expect_compile_error "shapes that do not broadcast" "shape_mismatch.onnx: node 'add1': op 'add': |(2, 3)|(4, 3)" \
  "$tmp/shape_mismatch.onnx"
expect_compile_error "cycle" "cycle.onnx: |has a cycle|'first'|'second'" "$tmp/cycle.onnx"
# An If on a run-time input compiles into control flow (tests/cli/control_flow_if.sh runs it).
"$kiln" compile "$tmp/control_flow.onnx" -o "$tmp/control_flow.kiln" >/dev/null 2>&1 ||
  fail "If on a run-time input does not compile"
expect_compile_error "IR text type error" "mismatch.relay: |node 'line 2:3': op 'add': |(4, 3)" "$tmp/mismatch.relay"
expect_compile_error "opt level" "relu.onnx: opt level must be 0 to 3" "$tmp/relu.onnx" -O 7
expect_compile_error "target" "relu.onnx: unsupported target" "$tmp/relu.onnx" --target cuda
expect_compile_error "unknown --shape input" "relu.onnx: --shape names 'q'" "$tmp/relu.onnx" --shape q=1,2

# The output folder: an existing folder that is not an artifact is never overwritten.
"$kiln" compile "$tmp/relu.onnx" -o "$tmp/not_an_artifact" >/dev/null 2>"$tmp/err"
if [[ $? -ne 1 || ! -f $tmp/not_an_artifact/keep ]] || ! grep -qF "not_an_artifact: the output folder exists" "$tmp/err"; then
  fail "existing folder: $(cat "$tmp/err")"
else
  echo "ok existing folder: $(cat "$tmp/err")"
fi

echo "$failures failed"
exit $((failures > 0))

#!/usr/bin/env bash
# Hostile inputs (docs/robustness.md): models and files that declare huge, overflowing or
# too deep tensors and graphs, reach outside their folder, or contradict themselves. Each
# ends in one clear line on stderr and exit status 1, never a crash or an out-of-memory kill;
# the limits (kiln/support/limits.h) can be changed by environment variables.
set -uo pipefail
kiln=$1 root=$2
source "$(dirname "${BASH_SOURCE[0]}")/lib/expect.sh"
python=/usr/bin/python3

(cd "$tmp" && "$python" - <<'PY') || { echo "FAIL: cannot make test models"; exit 1; }
import numpy as np, onnx, os, struct
from onnx import helper, numpy_helper, TensorProto as T

def save(name, nodes, inputs, outputs, inits=(), check=True):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    if check: onnx.checker.check_model(model)
    onnx.save(model, name + ".onnx")

def vi(name, dims, t=T.FLOAT): return helper.make_tensor_value_info(name, t, dims)

save("huge_input", [helper.make_node("Relu", ["x"], ["y"])], [vi("x", [1000000, 1000000])], [vi("y", [1000000, 1000000])])
save("overflow_input", [helper.make_node("Relu", ["x"], ["y"])], [vi("x", [2**40, 2**40])], [vi("y", [2**40, 2**40])])
save("deep_rank", [helper.make_node("Relu", ["x"], ["y"])], [vi("x", [1] * 100)], [vi("y", [1] * 100)])
shape = numpy_helper.from_array(np.array([1000000, 1000000], np.int64), "shape")
save("huge_constant_of_shape", [helper.make_node("ConstantOfShape", ["shape"], ["y"])], [], [vi("y", [1000000, 1000000])],
     [shape])
chain = [helper.make_node("Relu", ["x" if i == 0 else "t%d" % (i - 1)], ["y" if i == 19 else "t%d" % i]) for i in range(20)]
save("twenty_nodes", chain, [vi("x", [2])], [vi("y", [2])])
def nested_if(depth, name):
    out = vi(name + "_out", [2])
    if depth == 0: return helper.make_graph([helper.make_node("Identity", ["x"], [name + "_out"])], name, [], [out])
    node = helper.make_node("If", ["c"], [name + "_out"], then_branch=nested_if(depth - 1, name + "t"),
                            else_branch=nested_if(depth - 1, name + "e"))
    return helper.make_graph([node], name, [], [out])
save("nested_if", list(nested_if(3, "g").node), [vi("x", [2]), vi("c", [], T.BOOL)], [vi("g_out", [2])])
save("long_string", [helper.make_node("Pad", ["x", "pads"], ["y"], mode="a" * 100)], [vi("x", [2]), vi("pads", [2], T.INT64)],
     [vi("y", [2])])
# External data: outside the folder by name, by absolute path, and through a link; offsets past the end.
def external(name, location, offset=None, length=None):
    w = onnx.TensorProto(name="w", data_type=T.FLOAT, dims=[2], data_location=T.EXTERNAL)
    entries = [("location", location)] + ([("offset", str(offset))] if offset is not None else []) + \
              ([("length", str(length))] if length is not None else [])
    for k, v in entries:
        e = w.external_data.add(); e.key = k; e.value = v
    save(name, [helper.make_node("Add", ["x", "w"], ["y"])], [vi("x", [2])], [vi("y", [2])], [w], check=False)
os.makedirs("models", exist_ok=True)
os.chdir("models")
external("dotdot", "../secret.bin")
external("absolute", "/etc/passwd")
external("linked", "link.bin")
external("past_end", "data.bin", offset=4, length=2**62)
np.zeros(2, np.float32).tofile("data.bin")
os.chdir("..")
np.zeros(2, np.float32).tofile("secret.bin")
os.symlink(os.path.abspath("secret.bin"), "models/link.bin")
# Validation: dangling and duplicated names, a cycle, a type mismatch.
save("dangling", [helper.make_node("Relu", ["nowhere"], ["y"], name="relu1")], [vi("x", [2])], [vi("y", [2])], check=False)
save("written_twice", [helper.make_node("Relu", ["x"], ["y"], name="a"), helper.make_node("Neg", ["x"], ["y"], name="b")],
     [vi("x", [2])], [vi("y", [2])], check=False)
save("cycle", [helper.make_node("Relu", ["b"], ["a"], name="r"), helper.make_node("Neg", ["a"], ["b"], name="n"),
               helper.make_node("Identity", ["a"], ["y"])], [vi("x", [2])], [vi("y", [2])], check=False)
save("type_mismatch", [helper.make_node("Add", ["x", "i"], ["y"], name="add1")], [vi("x", [2]), vi("i", [2], T.INT64)],
     [vi("y", [2])], check=False)
# .npy headers declaring a huge array; params.bin claiming more tensors than it holds.
def npy(path, header):
    header = header.encode() + b" " * (117 - len(header)) + b"\n"
    open(path, "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header)
npy("huge.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000, 1000000), }")
npy("overflow.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 8), }")
open("lying.bin", "wb").write(b"KILNPRM1" + struct.pack("<Q", 10**12))
PY

onnx_limit() { expect_error "$1" "$2" "${@:3}"; }
onnx_limit "10^12-element input" "huge_input.onnx: input 'x' of shape \(1000000, 1000000\) has 1000000000000 elements, above the limit of 4294967296 \(KILN_MAX_TENSOR_ELEMENTS\)" \
  "$kiln" print "$tmp/huge_input.onnx"
onnx_limit "overflowing dimensions" "overflow_input.onnx: input 'x' of shape .* has more elements than int64 can count" \
  "$kiln" print "$tmp/overflow_input.onnx"
onnx_limit "rank 100" "deep_rank.onnx: input 'x' has rank 100, above the limit of 64 \(KILN_MAX_RANK\)" \
  "$kiln" print "$tmp/deep_rank.onnx"
# It compiles (nothing is allocated yet); running it is refused before allocating 4 TB.
"$kiln" compile "$tmp/huge_constant_of_shape.onnx" -o "$tmp/huge.kiln" >/dev/null 2>"$tmp/err" || fail "compile: $(cat "$tmp/err")"
onnx_limit "huge ConstantOfShape" "tensor of shape \(4000000000000\) has 4000000000000 elements, above the limit of 4294967296" \
  "$kiln" run "$tmp/huge.kiln" --outputs "$tmp/out"
onnx_limit "tensor bytes limit" "needs 8 bytes, above the limit of 4 bytes \(KILN_MAX_TENSOR_BYTES\)" \
  env KILN_MAX_TENSOR_BYTES=4 "$kiln" print "$tmp/twenty_nodes.onnx"
onnx_limit "node count" "twenty_nodes.onnx: graph 'twenty_nodes' has 20 nodes, above the limit of 10 \(KILN_MAX_NODES\)" \
  env KILN_MAX_NODES=10 "$kiln" print "$tmp/twenty_nodes.onnx"
onnx_limit "nesting depth" "nested_if.onnx: subgraphs \(bodies of If, Loop, Scan\) nest 3 deep, above the limit of 2 \(KILN_MAX_NESTING_DEPTH\)$" \
  env KILN_MAX_NESTING_DEPTH=2 "$kiln" print "$tmp/nested_if.onnx"
onnx_limit "string size" "long_string.onnx: .*attribute 'mode': its value is 100 bytes, above the limit of 16 bytes \(KILN_MAX_STRING_BYTES\)" \
  env KILN_MAX_STRING_BYTES=16 "$kiln" print "$tmp/long_string.onnx"
onnx_limit "bad limit value" "environment variable KILN_MAX_NODES='many' is not a positive integer" \
  env KILN_MAX_NODES=many "$kiln" print "$tmp/twenty_nodes.onnx"
"$kiln" print "$tmp/nested_if.onnx" >/dev/null 2>"$tmp/err" || fail "nested If within the default limits: $(cat "$tmp/err")"

expect_error "external data ../" "dotdot.onnx: .*names external file '../secret.bin' outside the model's directory" \
  "$kiln" print "$tmp/models/dotdot.onnx" --no-check
expect_error "external data absolute" "absolute.onnx: .*names external file '/etc/passwd' outside the model's directory" \
  "$kiln" print "$tmp/models/absolute.onnx" --no-check
expect_error "external data link" "linked.onnx: .*names external file 'link.bin', a link to a file outside the model's directory" \
  "$kiln" print "$tmp/models/linked.onnx" --no-check
expect_error "external data past the end" "past_end.onnx: .*reads 4611686018427387904 bytes at offset 4 of external file .*which has only 8 bytes" \
  "$kiln" print "$tmp/models/past_end.onnx" --no-check

expect_error "dangling name" "dangling.onnx: .*input 'nowhere' is not produced by any node, initializer or graph input" \
  "$kiln" print "$tmp/dangling.onnx" --no-check
expect_error "name written twice" "written_twice.onnx: .*tensor 'y' is written by two nodes, 'a' and 'b'" \
  "$kiln" print "$tmp/written_twice.onnx" --no-check
expect_error "cycle" "cycle.onnx: .*cycle" "$kiln" print "$tmp/cycle.onnx" --no-check
expect_error "type mismatch" "type_mismatch.onnx: .*(int64.*float32|float32.*int64)" \
  "$kiln" print "$tmp/type_mismatch.onnx" --no-check

mkdir -p "$tmp/inputs" && cp "$root"/examples/mlp/inputs/*.npy "$tmp/inputs/" && cp "$tmp/huge.npy" "$tmp/inputs/x.npy"
expect_error "huge .npy" "x.npy: .*\(1000000, 1000000\)" "$kiln" run "$root/examples/mlp/model.relay" --inputs "$tmp/inputs"
cp "$tmp/overflow.npy" "$tmp/inputs/x.npy"
expect_error "overflowing .npy" "x.npy: shape \(4611686018427387904, 8\) is too large" \
  "$kiln" run "$root/examples/mlp/model.relay" --inputs "$tmp/inputs"
"$kiln" compile "$root/examples/mlp/model.relay" -o "$tmp/mlp.kiln" >/dev/null 2>&1 || fail "compile mlp"
cp "$tmp/lying.bin" "$tmp/mlp.kiln/params.bin"
expect_error "lying params.bin" "params.bin: params file claims 1000000000000 tensors in 0 bytes" \
  "$kiln" run "$tmp/mlp.kiln" --random-inputs 1

exit $((failures > 0))

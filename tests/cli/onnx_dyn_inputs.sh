#!/usr/bin/env bash
# Shape-like inputs at run time: ONNX backend cases whose Reshape shape, Slice bounds, Expand
# shape, Tile repeats, ConstantOfShape shape, Range bounds, Pad pads, TopK K, Unsqueeze /
# Squeeze / ReduceSum axes, CumSum axis or Trilu k are graph inputs import as the dyn.* ops and pass with their inputs
# given at run time (no --bake-inputs), through the interpreter and compiled (the graph
# executor runs the dyn kernels, which size their results). Ops after them run as reference
# kernels that size their outputs by output functions; an op without one is refused at
# compile time with a clear error.
set -uo pipefail
kiln=$1
source "$(dirname "${BASH_SOURCE[0]}")/lib/expect.sh"
data=${KILN_ONNX_TESTDATA:-/usr/share/libonnx-testdata/data}/node
[[ -d $data ]] || { echo "SKIP: no libonnx-testdata at $data"; exit 0; }
cases=(test_reshape_negative_dim test_reshape_zero_and_negative_dim test_reshape_allowzero_reordered
  test_slice test_slice_neg_steps test_slice_default_axes test_expand_dim_changed test_tile
  test_constantofshape_int_zeros test_range_float_type_positive_delta test_reflect_pad test_top_k
  test_unsqueeze_unsorted_axes test_squeeze_negative_axes test_reduce_sum_keepdims_random
  test_reduce_sum_empty_axes_input_noop_example test_cumsum_1d_reverse_exclusive test_triu_neg test_tril_zero)
for engine in interp compiled; do
  out=$("$kiln" onnx-test --engine "$engine" "${cases[@]/#/$data/}" 2>/dev/null | tail -n 1)
  [[ $out == "${#cases[@]} passed, 0 failed, 0 skipped" ]] || fail "$engine with run-time inputs: $out"
done
# Run-time-shaped tensors feeding ordinary ops: Range's result through multiply and cos (the
# window functions' expansions), Compress's through squeeze, NonZero's through transpose;
# their reference kernels size their outputs at run time (output functions).
past_dyn=(test_hannwindow_expanded test_blackmanwindow_symmetric_expanded test_compress_0 test_nonzero_example)
out=$("$kiln" onnx-test --engine compiled "${past_dyn[@]/#/$data/}" 2>/dev/null | tail -n 1)
[[ $out == "${#past_dyn[@]} passed, 0 failed, 0 skipped" ]] || fail "compiled past a dyn op: $out"
# An op whose kernel has no output function (softmax) on such a tensor is refused at compile
# time, naming the node.
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
/usr/bin/python3 - "$dir/softmax_range.onnx" <<'PY'
import sys
import onnx
from onnx import TensorProto, helper
nodes = [helper.make_node("Range", ["start", "limit", "delta"], ["r"]),
         helper.make_node("Softmax", ["r"], ["y"], axis=0)]
graph = helper.make_graph(nodes, "softmax_range", [
    helper.make_tensor_value_info(n, TensorProto.FLOAT, []) for n in ("start", "limit", "delta")],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n"])])
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), sys.argv[1])
PY
out=$("$kiln" compile "$dir/softmax_range.onnx" -o "$dir/m.kiln" 2>&1) && fail "softmax of a run-time shape compiled"
grep -q "dynamic shapes are not compiled yet: node .*Softmax.* computes Tensor\[(?), float32\]" <<<"$out" ||
  fail "compiling a dynamic shape past a dyn op without output function: $out"
exit $((failures > 0))

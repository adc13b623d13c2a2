#!/usr/bin/env bash
# Shape-like inputs at run time: ONNX backend cases whose Reshape shape, Slice bounds, Expand
# shape, Tile repeats, ConstantOfShape shape, Range bounds, Pad pads, TopK K, Unsqueeze /
# Squeeze / ReduceSum axes, CumSum axis or Trilu k are graph inputs import as the dyn.* ops and pass with their inputs
# given at run time (no --bake-inputs), through the interpreter and compiled (the graph
# executor runs the dyn kernels, which size their results). A model whose run-time-shaped
# tensor feeds another op is refused at compile time with a clear error.
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
# Range with a run-time limit feeds a multiply: the executor would need run-time shape functions.
out=$("$kiln" onnx-test --engine compiled "$data/test_hannwindow_expanded" 2>/dev/null)
grep -q "dynamic shapes are not compiled yet: node .*Mul.* computes Tensor\[(?), float32\]" <<<"$out" ||
  fail "compiling a dynamic shape past a dyn op: $out"
out=$("$kiln" onnx-test --engine compiled --bake-inputs "$data/test_hannwindow_expanded" 2>/dev/null | tail -n 1)
[[ $out == "0 passed, 1 passed only with baked inputs, 0 failed, 0 skipped" ]] || fail "--bake-inputs: $out"
exit $((failures > 0))

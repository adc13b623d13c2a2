#!/usr/bin/env bash
# `kiln print FILE --pass CombineParallel* --pass-option PASS.KEY=VALUE` on the seed notes'
# examples (min_num_branches=2 as there): two convolutions of %x become one on the joined
# weights, each the slice of its channels, the max_pool2d stays; two denses become one
# batch_matmul of the stacked inputs and weights (to_batch=false: one dense on the weights
# joined along the units); three batch_matmuls become one. Without the option (Relay's default
# of 3 branches) the two-branch examples print unchanged; malformed options are errors. In
# build()'s pipeline at -O 3 they combine three branches, and the compiled artifact (also with
# `compile --pass-option`) gives the interpreter's results.
set -uo pipefail
kiln=$1 root=$2
source "$(dirname "${BASH_SOURCE[0]}")/lib/expect.sh"

# expect_print NAME FILE WANT ARGS...: kiln print FILE ARGS... prints exactly WANT.
expect_print() {
  local name=$1 file=$2 want=$3
  shift 3
  "$kiln" print "$file" "$@" >"$tmp/got" 2>"$tmp/err" || {
    fail "$name: $(cat "$tmp/err")"
    return
  }
  diff -u "$want" "$tmp/got" >"$tmp/diff" || {
    fail "$name printed other IR"
    cat "$tmp/diff"
  }
}

cat >"$tmp/conv.relay" <<'IR'
def @main(%x: Tensor[(1, 4, 16, 16), float32], %w1: Tensor[(4, 4, 1, 1), float32], %w2: Tensor[(4, 4, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w1, padding=[0, 0, 0, 0]);
  %1 = nn.conv2d(%x, %w2, padding=[0, 0, 0, 0]);
  %2 = nn.max_pool2d(%x, pool_size=[1, 1], padding=[0, 0, 0, 0]);
  (%0, %1, %2)
}
IR
cat >"$tmp/conv.want" <<'IR'
def @main(%x: Tensor[(1, 4, 16, 16), float32], %w1: Tensor[(4, 4, 1, 1), float32], %w2: Tensor[(4, 4, 1, 1), float32]) -> (Tensor[(1, 4, 16, 16), float32], Tensor[(1, 4, 16, 16), float32], Tensor[(1, 4, 16, 16), float32]) {
  %0 = (%w1, %w2);
  %1 = concatenate(%0) /* ty=Tensor[(8, 4, 1, 1), float32] */;
  %2 = nn.conv2d(%x, %1, padding=[0, 0, 0, 0], channels=8) /* ty=Tensor[(1, 8, 16, 16), float32] */;
  %3 = strided_slice(%2, begin=[0, 0], end=[-1, 4], strides=[1, 1], slice_mode="size") /* ty=Tensor[(1, 4, 16, 16), float32] */;
  %4 = strided_slice(%2, begin=[0, 4], end=[-1, 4], strides=[1, 1], slice_mode="size") /* ty=Tensor[(1, 4, 16, 16), float32] */;
  %5 = nn.max_pool2d(%x, pool_size=[1, 1], padding=[0, 0, 0, 0]) /* ty=Tensor[(1, 4, 16, 16), float32] */;
  (%3, %4, %5)
}
IR
expect_print "conv2d" "$tmp/conv.relay" "$tmp/conv.want" \
  --pass CombineParallelConv2D --pass-option CombineParallelConv2D.min_num_branches=2
expect_print "conv2d, option as --pass-option=..." "$tmp/conv.relay" "$tmp/conv.want" \
  --pass CombineParallelConv2D --pass-option=CombineParallelConv2D.min_num_branches=2
"$kiln" print "$tmp/conv.relay" >"$tmp/conv.plain" || fail "print conv.relay"
expect_print "conv2d, default min_num_branches" "$tmp/conv.relay" "$tmp/conv.plain" --pass CombineParallelConv2D

cat >"$tmp/dense.relay" <<'IR'
fn (%x: Tensor[(3, 4), float32], %w1: Tensor[(5, 4), float32], %w2: Tensor[(5, 4), float32]) {
  %0 = nn.dense(%x, %w1, units=None);
  %1 = nn.dense(%x, %w2, units=None);
  (%0, %1)
}
IR
cat >"$tmp/dense.want" <<'IR'
def @main(%x: Tensor[(3, 4), float32], %w1: Tensor[(5, 4), float32], %w2: Tensor[(5, 4), float32]) -> (Tensor[(3, 5), float32], Tensor[(3, 5), float32]) {
  %0 = (%x, %x);
  %1 = (%w1, %w2);
  %2 = stack(%0) /* ty=Tensor[(2, 3, 4), float32] */;
  %3 = stack(%1) /* ty=Tensor[(2, 5, 4), float32] */;
  %4 = nn.batch_matmul(%2, %3, transpose_b=True) /* ty=Tensor[(2, 3, 5), float32] */;
  %5 = split(%4, indices_or_sections=2) /* ty=(Tensor[(1, 3, 5), float32], Tensor[(1, 3, 5), float32]) */;
  %6 = %5.0;
  %7 = %5.1;
  %8 = squeeze(%6, axis=[0]) /* ty=Tensor[(3, 5), float32] */;
  %9 = squeeze(%7, axis=[0]) /* ty=Tensor[(3, 5), float32] */;
  (%8, %9)
}
IR
expect_print "dense" "$tmp/dense.relay" "$tmp/dense.want" \
  --pass CombineParallelDense --pass-option CombineParallelDense.min_num_branches=2
expect_print "dense, to_batch=true" "$tmp/dense.relay" "$tmp/dense.want" --pass CombineParallelDense \
  --pass-option CombineParallelDense.min_num_branches=2 --pass-option CombineParallelDense.to_batch=true

cat >"$tmp/dense_joined.want" <<'IR'
def @main(%x: Tensor[(3, 4), float32], %w1: Tensor[(5, 4), float32], %w2: Tensor[(5, 4), float32]) -> (Tensor[(3, 5), float32], Tensor[(3, 5), float32]) {
  %0 = (%w1, %w2);
  %1 = concatenate(%0) /* ty=Tensor[(10, 4), float32] */;
  %2 = nn.dense(%x, %1, units=10) /* ty=Tensor[(3, 10), float32] */;
  %3 = strided_slice(%2, begin=[0, 0], end=[-1, 5], strides=[1, 1], slice_mode="size") /* ty=Tensor[(3, 5), float32] */;
  %4 = strided_slice(%2, begin=[0, 5], end=[-1, 5], strides=[1, 1], slice_mode="size") /* ty=Tensor[(3, 5), float32] */;
  (%3, %4)
}
IR
expect_print "dense, to_batch=false" "$tmp/dense.relay" "$tmp/dense_joined.want" --pass CombineParallelDense \
  --pass-option CombineParallelDense.min_num_branches=2 --pass-option CombineParallelDense.to_batch=false

# Three branches: Relay's default min_num_branches joins them without an option.
cat >"$tmp/bmm.relay" <<'IR'
fn (%x: Tensor[(2, 3, 4), float32], %y1: Tensor[(2, 5, 4), float32], %y2: Tensor[(2, 6, 4), float32], %y3: Tensor[(2, 7, 4), float32]) {
  %0 = nn.batch_matmul(%x, %y1);
  %1 = nn.batch_matmul(%x, %y2);
  %2 = nn.batch_matmul(%x, %y3);
  (%0, %1, %2)
}
IR
cat >"$tmp/bmm.want" <<'IR'
def @main(%x: Tensor[(2, 3, 4), float32], %y1: Tensor[(2, 5, 4), float32], %y2: Tensor[(2, 6, 4), float32], %y3: Tensor[(2, 7, 4), float32]) -> (Tensor[(2, 3, 5), float32], Tensor[(2, 3, 6), float32], Tensor[(2, 3, 7), float32]) {
  %0 = (%y1, %y2, %y3);
  %1 = concatenate(%0, axis=1) /* ty=Tensor[(2, 18, 4), float32] */;
  %2 = nn.batch_matmul(%x, %1) /* ty=Tensor[(2, 3, 18), float32] */;
  %3 = strided_slice(%2, begin=[0, 0, 0], end=[-1, -1, 5], strides=[1, 1, 1], slice_mode="size") /* ty=Tensor[(2, 3, 5), float32] */;
  %4 = strided_slice(%2, begin=[0, 0, 5], end=[-1, -1, 6], strides=[1, 1, 1], slice_mode="size") /* ty=Tensor[(2, 3, 6), float32] */;
  %5 = strided_slice(%2, begin=[0, 0, 11], end=[-1, -1, 7], strides=[1, 1, 1], slice_mode="size") /* ty=Tensor[(2, 3, 7), float32] */;
  (%3, %4, %5)
}
IR
expect_print "batch_matmul" "$tmp/bmm.relay" "$tmp/bmm.want" --pass CombineParallelBatchMatmul
"$kiln" print "$tmp/bmm.relay" >"$tmp/bmm.plain" || fail "print bmm.relay"
expect_print "batch_matmul, min_num_branches=4" "$tmp/bmm.relay" "$tmp/bmm.plain" \
  --pass CombineParallelBatchMatmul --pass-option CombineParallelBatchMatmul.min_num_branches=4

# The printed results parse and print back the same.
"$kiln" print "$tmp/conv.want" >"$tmp/again" 2>"$tmp/err" || fail "the printed conv2d result does not parse: $(cat "$tmp/err")"
cmp -s "$tmp/conv.want" "$tmp/again" || fail "the printed conv2d result prints back differently"

expect_error "option without PASS." "needs PASS\.KEY=VALUE.*'min_num_branches=2'" \
  "$kiln" print "$tmp/conv.relay" --pass CombineParallelConv2D --pass-option min_num_branches=2
expect_error "option without =VALUE" "needs PASS\.KEY=VALUE" \
  "$kiln" print "$tmp/conv.relay" --pass CombineParallelConv2D --pass-option CombineParallelConv2D.min_num_branches
expect_error "option of an unknown pass" "unknown pass.*found 'CombineParallelConv'" \
  "$kiln" print "$tmp/conv.relay" --pass-option CombineParallelConv.min_num_branches=2
expect_error "unknown option name" "unknown option of pass CombineParallelConv2D.*found min_branches" \
  "$kiln" print "$tmp/conv.relay" --pass CombineParallelConv2D --pass-option CombineParallelConv2D.min_branches=2
expect_error "min_num_branches=0" "min_num_branches.*at least 1, found 0" \
  "$kiln" print "$tmp/conv.relay" --pass CombineParallelConv2D --pass-option CombineParallelConv2D.min_num_branches=0

# Three convolutions with bias and relu, three denses: one convolution and one batch_matmul at
# -O 3, none joined at -O 2.
cat >"$tmp/three.relay" <<'IR'
def @main(%x: Tensor[(1, 4, 8, 8), float32], %w1: Tensor[(4, 4, 3, 3), float32], %w2: Tensor[(8, 4, 3, 3), float32], %w3: Tensor[(2, 4, 3, 3), float32], %b1: Tensor[(4), float32], %b2: Tensor[(8), float32], %b3: Tensor[(2), float32], %d: Tensor[(3, 6), float32], %v1: Tensor[(5, 6), float32], %v2: Tensor[(5, 6), float32], %v3: Tensor[(5, 6), float32]) {
  %0 = nn.conv2d(%x, %w1, padding=[1, 1, 1, 1]); %1 = nn.relu(nn.bias_add(%0, %b1));
  %2 = nn.conv2d(%x, %w2, padding=[1, 1, 1, 1]); %3 = nn.relu(nn.bias_add(%2, %b2));
  %4 = nn.conv2d(%x, %w3, padding=[1, 1, 1, 1]); %5 = nn.relu(nn.bias_add(%4, %b3));
  %6 = nn.dense(%d, %v1); %7 = nn.dense(%d, %v2); %8 = nn.dense(%d, %v3);
  (%1, %3, %5, tanh(%6), %7, %8)
}
IR
count_calls() {  # count_calls OP FLAGS...: calls of OP in the module kiln print FLAGS... prints
  local op=$1
  shift
  "$kiln" print "$tmp/three.relay" "$@" | grep -o "$op(" | wc -l
}
[[ $(count_calls nn.conv2d -O 3) == 1 ]] || fail "-O 3 left other than one conv2d"
[[ $(count_calls nn.batch_matmul -O 3) == 1 && $(count_calls nn.dense -O 3) == 0 ]] ||
  fail "-O 3 did not turn the denses into one batch_matmul"
[[ $(count_calls nn.conv2d -O 2) == 3 && $(count_calls nn.dense -O 2) == 3 ]] || fail "-O 2 combined branches"
[[ $(count_calls nn.conv2d -O 3 --disable-pass CombineParallelConv2D) == 3 ]] ||
  fail "--disable-pass CombineParallelConv2D combined the convolutions"

"$kiln" run "$tmp/three.relay" --engine interp --random-inputs 3 --outputs "$tmp/want" >/dev/null 2>"$tmp/err" ||
  fail "run --engine interp: $(cat "$tmp/err")"
for options in "" "--pass-option CombineParallelDense.to_batch=false"; do
  rm -rf "$tmp/three.kiln" "$tmp/got"
  # shellcheck disable=SC2086
  if ! "$kiln" compile "$tmp/three.relay" -o "$tmp/three.kiln" $options >/dev/null 2>"$tmp/err"; then
    fail "compile $options: $(cat "$tmp/err")"
  elif ! "$kiln" run "$tmp/three.kiln" --random-inputs 3 --outputs "$tmp/got" >/dev/null 2>"$tmp/err"; then
    fail "run the artifact compiled with '$options': $(cat "$tmp/err")"
  else
    /usr/bin/python3 "$root/tests/realmodels/compare.py" "$tmp/got" "$tmp/want" 1e-4 1e-5 ||
      fail "compiled with '$options', the results differ from the interpreter's"
  fi
done
grep -q '"fused_nn_dense' "$tmp/three.kiln/graph.json" || fail "compile --pass-option to_batch=false made no dense"
grep -q 'batch_matmul' "$tmp/three.kiln/graph.json" && fail "compile --pass-option to_batch=false made a batch_matmul"

echo "$failures failed"
exit $((failures > 0))

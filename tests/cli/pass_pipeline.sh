#!/usr/bin/env bash
# The pass pipeline from the command line: `kiln print -O N --print-after-all` shows each pass
# that runs at that level with its time and the module after it; --disable-pass drops one;
# `compile --verbose` reports the time of each pass; an unknown pass name is an error.
set -uo pipefail
kiln=$1
source "$(dirname "${BASH_SOURCE[0]}")/lib/expect.sh"

printf 'def @main(%%x: Tensor[(1, 4), float32]) {\n  %%0 = cast(ones(shape=[1, 4], dtype="float16"), dtype="float32");\n  nn.relu(add(%%x, %%0))\n}\n' \
  >"$tmp/model.relay"

passes_after() {  # passes_after FLAGS...: the pass names printed by --print-after-all
  "$kiln" print "$tmp/model.relay" --print-after-all "$@" | sed -n 's|^// after \([A-Za-z0-9]*\) ([0-9.e+-]* ms)$|\1|p' |
    paste -sd' ' -
}

got=$(passes_after -O 3)
# Inline, DeadCodeElimination and EliminateCommonSubexpr leave types stale.
want="InferType Inline InferType RemoveUnusedFunctions QnnLegalize SimplifyInference DeadCodeElimination InferType"
want+=" EliminateCommonSubexpr InferType CombineParallelConv2D CombineParallelDense CombineParallelBatchMatmul"
want+=" DynamicToStatic FoldConstant FoldScaleAxis SimplifyExpr FuseLayerNorm FuseAttention AlterOpLayout WinogradConv2D FusePointwiseDepthwise PackDenseWeights MoveElementwiseBeforeReshape"
want+=" PrecomputePrune"
want+=" RewriteAnnotatedOps FuseOps"
[[ $got == "$want" ]] || fail "-O 3 ran '$got', expected '$want'"
got=$(passes_after -O 0)
want="InferType QnnLegalize SimplifyInference RewriteAnnotatedOps FuseOps"
[[ $got == "$want" ]] || fail "-O 0 ran '$got', expected '$want'"
got=$(passes_after -O 3 --disable-pass FoldConstant --disable-pass Inline)
want="InferType RemoveUnusedFunctions QnnLegalize SimplifyInference DeadCodeElimination InferType"
want+=" EliminateCommonSubexpr"
want+=" InferType CombineParallelConv2D CombineParallelDense CombineParallelBatchMatmul DynamicToStatic FoldScaleAxis SimplifyExpr FuseLayerNorm FuseAttention"
want+=" AlterOpLayout WinogradConv2D FusePointwiseDepthwise"
want+=" PackDenseWeights MoveElementwiseBeforeReshape PrecomputePrune RewriteAnnotatedOps FuseOps"
[[ $got == "$want" ]] || fail "--disable-pass ran '$got', expected '$want'"

# The module after FoldConstant no longer casts; before it, it does.
out=$("$kiln" print "$tmp/model.relay" -O 3 --print-after-all)
after_fold=$(sed -n '/^\/\/ after FoldConstant/,/^\/\/ after FuseOps/p' <<<"$out")
grep -q 'cast(' <<<"$out" || fail "no pass output shows the cast before folding"
grep -q 'cast(' <<<"$after_fold" && fail "the module after FoldConstant still casts"
grep -q 'Primitive=1' <<<"$(sed -n '/^\/\/ after FuseOps/,$p' <<<"$out")" || fail "FuseOps' output has no fused function"

"$kiln" compile "$tmp/model.relay" -o "$tmp/model.kiln" --verbose 2>"$tmp/notes" >/dev/null || fail "compile --verbose"
grep -qE '^kiln: note: pass FoldConstant took [0-9.e+-]+ ms$' "$tmp/notes" || fail "compile --verbose shows no pass times"

expect_error "unknown pass" "unknown pass \(expected one of .*FoldConstant.*, found 'Frobnicate'\)" \
  "$kiln" print "$tmp/model.relay" --disable-pass Frobnicate

echo "$failures failed"
exit $((failures > 0))

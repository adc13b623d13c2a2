#!/usr/bin/env bash
# `kiln print FILE --pass NAME` reproduces the seed notes' before/after examples of Relay's
# passes from the command line: the module the pass makes of the seed's "before" prints as the
# seed's "after" does (both printed by kiln, so the comparison is of structure, not layout).
# Two things differ from the seed's text and are written kiln's way: the order of functions
# (Relay printed them from a hash map) and which fused function's parameter is %p0 and which
# %p01 (Relay numbered them by a global counter as it fused, kiln in printing order).
# FoldScaleAxis, the CombineParallel passes and RewriteAnnotatedOps have scripts of their own.
set -uo pipefail
kiln=$1
source "$(dirname "${BASH_SOURCE[0]}")/lib/expect.sh"

# check NAME PASS...: $tmp/NAME.before through the passes prints as $tmp/NAME.after.
check() {
  local name=$1
  shift
  local flags=()
  for pass in "$@"; do flags+=(--pass "$pass"); done
  "$kiln" print "$tmp/$name.before" "${flags[@]}" >"$tmp/$name.got" 2>"$tmp/err" || {
    fail "$name: $(cat "$tmp/err")"
    return
  }
  "$kiln" print "$tmp/$name.after" >"$tmp/$name.want" 2>"$tmp/err" || {
    fail "$name: the seed's after does not parse: $(cat "$tmp/err")"
    return
  }
  if diff -u "$tmp/$name.want" "$tmp/$name.got" >"$tmp/diff"; then
    echo "ok $name"
  else
    fail "$name: the pass printed other IR"
    cat "$tmp/diff"
  fi
}

cat >"$tmp/remove_unused.before" <<'IR'
def @fn1(%x: Tensor[(1, 1000), float32]) { %x }
def @fn2(%y: Tensor[(1, 1000), float32]) { %y }
def @main(%z: Tensor[(1, 1000), float32]) { %0 = @fn1(%z); add(%z, %0) }
IR
cat >"$tmp/remove_unused.after" <<'IR'
def @fn1(%x: Tensor[(1, 1000), float32]) { %x }
def @main(%z: Tensor[(1, 1000), float32]) { %0 = @fn1(%z); add(%z, %0) }
IR
check remove_unused RemoveUnusedFunctions

cat >"$tmp/simplify_inference.before" <<'IR'
def @main(%x: Tensor[(1, 10), float32], %x1: Tensor[(10), float32], %y: Tensor[(10), float32], %a: Tensor[(10), float32], %b: Tensor[(10), float32]) { %0 = nn.batch_norm(%x, %x1, %y, %a, %b); %1 = %0.0; %2 = nn.dropout(%1); %2.0 }
IR
cat >"$tmp/simplify_inference.after" <<'IR'
def @main(%x: Tensor[(1, 10), float32], %x1: Tensor[(10), float32], %y: Tensor[(10), float32], %a: Tensor[(10), float32], %b: Tensor[(10), float32]) -> Tensor[(1, 10), float32] { %0 = add(%b, 1e-05f /* ty=float32 */) /* ty=Tensor[(10), float32] */; %1 = sqrt(%0) /* ty=Tensor[(10), float32] */; %2 = divide(1f /* ty=float32 */, %1) /* ty=Tensor[(10), float32] */; %3 = multiply(%2, %x1) /* ty=Tensor[(10), float32] */; %4 = negative(%a) /* ty=Tensor[(10), float32] */; %5 = multiply(%4, %3) /* ty=Tensor[(10), float32] */; %6 = multiply(%x, %3) /* ty=Tensor[(1, 10), float32] */; %7 = add(%5, %y) /* ty=Tensor[(10), float32] */; add(%6, %7) /* ty=Tensor[(1, 10), float32] */ }
IR
check simplify_inference SimplifyInference

cat >"$tmp/inline.before" <<'IR'
def @g1(%x1: Tensor[(1, 10), float32], Inline=1) { %x1 }
def @g2(%x2: Tensor[(1, 10), float32]) { %x2 }
def @main(%p0: Tensor[(1, 10), float32]) { %0 = @g1(%p0); %1 = @g2(%p0); add(%0, %1) }
IR
cat >"$tmp/inline.after" <<'IR'
def @g2(%x2: Tensor[(1, 10), float32]) { %x2 }
def @main(%p0: Tensor[(1, 10), float32]) { %0 = @g2(%p0); add(%p0, %0) }
IR
check inline Inline

cat >"$tmp/fuse_simple.before" <<'IR'
fn (%x: Tensor[(10, 20), float32]) { %0 = add(%x, %x); %1 = add(%0, %0); %2 = add(%1, %1); %3 = add(%2, %2); %4 = add(%3, %3); exp(%4) }
IR
cat >"$tmp/fuse_simple.after" <<'IR'
fn (%x: Tensor[(10, 20), float32]) -> Tensor[(10, 20), float32] { %5 = fn (%p0: Tensor[(10, 20), float32], Primitive=1) -> Tensor[(10, 20), float32] { %0 = add(%p0, %p0) /* ty=Tensor[(10, 20), float32] */; %1 = add(%0, %0) /* ty=Tensor[(10, 20), float32] */; %2 = add(%1, %1) /* ty=Tensor[(10, 20), float32] */; %3 = add(%2, %2) /* ty=Tensor[(10, 20), float32] */; %4 = add(%3, %3) /* ty=Tensor[(10, 20), float32] */; exp(%4) /* ty=Tensor[(10, 20), float32] */ }; %5(%x) /* ty=Tensor[(10, 20), float32] */ }
IR
check fuse_simple FuseOps

cat >"$tmp/fuse_reduce.before" <<'IR'
fn (%x: Tensor[(20, 20), float32]) { %0 = add(%x, %x); %1 = add(%0, %0); %2 = sum(%1, axis=[-1]); add(%2, %2) }
IR
cat >"$tmp/fuse_reduce.after" <<'IR'
fn (%x: Tensor[(20, 20), float32]) -> Tensor[(20), float32] { %2 = fn (%p0: Tensor[(20, 20), float32], Primitive=1) -> Tensor[(20), float32] { %0 = add(%p0, %p0) /* ty=Tensor[(20, 20), float32] */; %1 = add(%0, %0) /* ty=Tensor[(20, 20), float32] */; sum(%1, axis=[-1]) /* ty=Tensor[(20), float32] */ }; %3 = %2(%x) /* ty=Tensor[(20), float32] */; %4 = fn (%p01: Tensor[(20), float32], Primitive=1) -> Tensor[(20), float32] { add(%p01, %p01) /* ty=Tensor[(20), float32] */ }; %4(%3) /* ty=Tensor[(20), float32] */ }
IR
check fuse_reduce FuseOps

echo "$failures failed"
exit $((failures > 0))

#!/usr/bin/env bash
# `kiln print FILE --pass SimplifyExpr` runs the pass on IR text: cancelling transposes,
# a multiplication by one, a reshape chain and a float32 -> float64 -> float32 cast go;
# x + 0.0 stays (not exact for -0.0).
set -uo pipefail
kiln=$1
source "$(dirname "${BASH_SOURCE[0]}")/lib/expect.sh"

cat >"$tmp/model.relay" <<'RELAY'
def @main(%x: Tensor[(2, 3), float32]) {
  %0 = transpose(%x); %1 = transpose(%0); %2 = multiply(%1, 1f);
  %3 = reshape(%2, newshape=[3, 2]); %4 = reshape(%3, newshape=[6]);
  %5 = add(%4, 0f); cast(cast(%5, dtype="float64"), dtype="float32")
}
RELAY
cat >"$tmp/want" <<'RELAY'
def @main(%x: Tensor[(2, 3), float32]) -> Tensor[(6), float32] {
  %0 = reshape(%x, newshape=[6], allowzero=0) /* ty=Tensor[(6), float32] */;
  add(%0, 0f /* ty=float32 */) /* ty=Tensor[(6), float32] */
}
RELAY
"$kiln" print "$tmp/model.relay" --pass SimplifyExpr >"$tmp/got" || fail "kiln print --pass SimplifyExpr"
diff -u "$tmp/want" "$tmp/got" || fail "SimplifyExpr printed other IR"

echo "$failures failed"
exit $((failures > 0))

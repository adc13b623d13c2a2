#!/usr/bin/env bash
# `kiln print FILE --pass FuseAttention` on torch's multi-head attention as exported (heads split
# off the key projection by transpose(axes=[1, 2, 0]), query scaled beforehand): one nn.attention
# reading the keys as rows, whose transpose is the projection's folded one; and -O 3 keeps it for
# the build pipeline.
set -uo pipefail
kiln=$1
source "$(dirname "${BASH_SOURCE[0]}")/lib/expect.sh"

cat >"$tmp/model.relay" <<'IR'
def @main(%q: Tensor[(4, 19, 32), float32], %x: Tensor[(23, 4, 32), float32], %v: Tensor[(4, 23, 16), float32]) {
  %0 = divide(%q, 8f);
  %1 = transpose(%x, axes=[1, 2, 0]);
  %2 = nn.matmul(%0, %1);
  %3 = nn.softmax(%2, axis=2);
  nn.matmul(%3, %v)
}
IR

out=$("$kiln" print "$tmp/model.relay" --pass FuseAttention) || fail "print --pass FuseAttention failed"
grep -q 'transpose(%x, axes=\[1, 0, 2\])' <<<"$out" || fail "the keys are not transposed to rows: $out"
grep -q 'nn.attention(%0, %1, %v, scale=1f, rows_outer=False)' <<<"$out" || fail "no nn.attention: $out"
grep -qE 'nn.softmax|nn.matmul' <<<"$out" && fail "the chain is still there: $out"
out=$("$kiln" print "$tmp/model.relay" -O 3 --disable-pass FuseOps) || fail "print -O 3 failed"
grep -q 'nn.attention(' <<<"$out" || fail "the build pipeline does not fuse attention: $out"
out=$("$kiln" print "$tmp/model.relay" -O 1 --disable-pass FuseOps) || fail "print -O 1 failed"
grep -q 'nn.attention(' <<<"$out" && fail "-O 1 fuses attention (FuseAttention is level 2): $out"
echo "$failures failed"
exit $((failures > 0))

#!/usr/bin/env bash
# `kiln print FILE --pass RewriteAnnotatedOps` on the seed notes' device example: with
# fallback_device=1 (the CPU, as RewriteAnnotatedOps(1)) the on_device calls become three
# device_copy calls, as the seed prints them (attributes inline rather than as meta[...]).
# A fallback on cuda needs no copy; a module without annotations prints as without the pass.
set -uo pipefail
kiln=$1
source "$(dirname "${BASH_SOURCE[0]}")/lib/expect.sh"

cat >"$tmp/seed.relay" <<'IR'
def @main(%x: Tensor[(1, 10), float32], %y: Tensor[(1, 10), float32]) {
  %0 = add(%x, %y); %1 = sqrt(%0); %2 = on_device(%1, virtual_device="cuda"); %3 = log(%0);
  %4 = subtract(%2, %3); %5 = exp(%4); on_device(%5, virtual_device="cuda")
}
IR

cat >"$tmp/want" <<'IR'
def @main(%x: Tensor[(1, 10), float32], %y: Tensor[(1, 10), float32]) -> Tensor[(1, 10), float32] {
  %0 = add(%x, %y) /* ty=Tensor[(1, 10), float32] */;
  %1 = device_copy(%0, src_device="cpu", dst_device="cuda") /* ty=Tensor[(1, 10), float32] */;
  %2 = sqrt(%1) /* ty=Tensor[(1, 10), float32] */;
  %3 = device_copy(%2, src_device="cuda", dst_device="cpu") /* ty=Tensor[(1, 10), float32] */;
  %4 = log(%0) /* ty=Tensor[(1, 10), float32] */;
  %5 = subtract(%3, %4) /* ty=Tensor[(1, 10), float32] */;
  %6 = device_copy(%5, src_device="cpu", dst_device="cuda") /* ty=Tensor[(1, 10), float32] */;
  exp(%6) /* ty=Tensor[(1, 10), float32] */
}
IR

for option in "--pass-option RewriteAnnotatedOps.fallback_device=1" "--pass-option RewriteAnnotatedOps.fallback_device=cpu" ""; do
  # shellcheck disable=SC2086
  "$kiln" print "$tmp/seed.relay" --pass RewriteAnnotatedOps $option >"$tmp/got" 2>"$tmp/err" ||
    fail "print ${option:-(default fallback)}: $(cat "$tmp/err")"
  diff -u "$tmp/want" "$tmp/got" >"$tmp/diff" || {
    fail "print ${option:-(default fallback)} printed other IR"
    cat "$tmp/diff"
  }
done

# Everything on cuda: no copy is needed, and the annotations go.
"$kiln" print "$tmp/seed.relay" --pass RewriteAnnotatedOps --pass-option RewriteAnnotatedOps.fallback_device=cuda \
  >"$tmp/cuda" 2>"$tmp/err" || fail "print with fallback cuda: $(cat "$tmp/err")"
grep -qE 'device_copy|on_device' "$tmp/cuda" && fail "fallback cuda left a copy or an annotation: $(cat "$tmp/cuda")"

# No annotations: the module prints as it does without the pass.
cat >"$tmp/plain.relay" <<'IR'
def @main(%x: Tensor[(2, 3), float32]) { %0 = exp(%x); add(%0, %x) }
IR
"$kiln" print "$tmp/plain.relay" >"$tmp/plain_want" || fail "print without --pass"
"$kiln" print "$tmp/plain.relay" --pass RewriteAnnotatedOps >"$tmp/plain_got" || fail "print --pass RewriteAnnotatedOps"
diff -u "$tmp/plain_want" "$tmp/plain_got" || fail "the pass changed a module without annotations"

expect_error "an unknown device" "unknown device" \
  "$kiln" print "$tmp/seed.relay" --pass RewriteAnnotatedOps --pass-option RewriteAnnotatedOps.fallback_device=tpu

exit $((failures > 0))

#!/usr/bin/env bash
# tests/realmodels/compare.py holds an output of any scale to its own scale: a fixed atol of
# 1e-4 would accept anything for float32 logits of scale ~1e-11 (EfficientNet-B0's, with
# random weights, are ~3e-14). The same product summed in another order passes; all zeros, the
# sign flipped, an error of 1e-3 of the scale, a NaN, a missing output and a wrong shape fail,
# the failure naming the error relative to the scale. At scale 1 and above atol stays absolute;
# integer outputs keep atol as given; RTOL ATOL still come positionally.
kiln=$1 root=$2
source "$root/tests/cli/lib/expect.sh"

# compare EXPECTED_STATUS DESCRIPTION GOT WANT [RTOL ATOL]: GOT and WANT are numpy
# expressions over `want` (float32 logits of scale ~1e-11) and `right` (the same in another order).
compare() {
  local status=$1 what=$2 got=$3 want=$4
  shift 4
  rm -rf "$tmp/got" "$tmp/want"
  /usr/bin/python3 - "$tmp" "$got" "$want" <<'EOF' || { fail "$what: could not write the outputs"; return; }
import os, sys
import numpy as np
tmp, got_expr, want_expr = sys.argv[1:]
rng = np.random.default_rng(0)
x = rng.standard_normal(1280).astype(np.float32) * np.float32(1e-11)
w = rng.standard_normal((1280, 1000)).astype(np.float32) * np.float32(0.01)
want = x @ w
right = np.zeros(1000, np.float32)
for i in range(1279, -1, -1):  # float32, the other way round
    right += x[i] * w[i]
env = {"np": np, "want": want, "right": right}
for folder, expr in (("got", got_expr), ("want", want_expr)):
    if expr != "none":
        os.makedirs(os.path.join(tmp, folder), exist_ok=True)
        np.save(os.path.join(tmp, folder, "output.npy"), eval(expr, env))
EOF
  /usr/bin/python3 "$root/tests/realmodels/compare.py" "$tmp/got" "$tmp/want" "$@" >"$tmp/out" 2>&1
  local got_status=$?
  [[ $got_status -eq $status ]] || fail "$what: exit $got_status, expected $status: $(cat "$tmp/out")"
  [[ $status -eq 0 && -s $tmp/out ]] && fail "$what: passed with output: $(cat "$tmp/out")"
  cp "$tmp/out" "$tmp/last"
}

compare 0 "the same logits" want want
compare 0 "summed in another order" right want
compare 1 "all zeros" "np.zeros_like(want)" want
grep -qE "max abs error [0-9.e+-]+ = 1 of scale [0-9.]+e-1[0-9] \(max \|want\|\)" "$tmp/last" ||
  fail "all zeros: the message does not give the error relative to the scale: $(cat "$tmp/last")"
compare 1 "sign flipped" "-want" want
compare 1 "an error of 1e-3 of the scale on the smallest logit" \
  "want + np.float32(1e-3) * np.abs(want).max() * (np.arange(1000) == np.abs(want).argmin())" want
compare 1 "a NaN" "np.where(np.arange(1000) == 7, np.float32('nan'), want)" want
compare 1 "a NaN in both" "np.where(np.arange(1000) == 7, np.float32('nan'), want)" \
  "np.where(np.arange(1000) == 7, np.float32('nan'), want)"
compare 1 "missing" none want
compare 1 "wrong shape" "want[:999]" want
compare 1 "all zero wanted, not got" "want" "np.zeros_like(want)"
compare 0 "all zero wanted and got" "np.zeros_like(want)" "np.zeros_like(want)"
compare 0 "matching infinities" "np.float32([np.inf, -np.inf, 1])" "np.float32([np.inf, -np.inf, 1])"
compare 1 "an infinity of the wrong sign" "np.float32([-np.inf, 1])" "np.float32([np.inf, 1])"

# Scale 1 and above: atol absolute as np.allclose's, so no stricter than before.
compare 0 "scale 100, error 9e-5 on a zero" "np.float32([100, 9e-5])" "np.float32([100, 0])"
compare 1 "scale 100, error 2e-4 on a zero" "np.float32([100, 2e-4])" "np.float32([100, 0])"
# Scale 0.01: atol 1e-4 becomes 1e-6.
compare 0 "scale 0.01, error 9e-7 on a zero" "np.float32([0.01, 9e-7])" "np.float32([0.01, 0])"
compare 1 "scale 0.01, error 2e-6 on a zero" "np.float32([0.01, 2e-6])" "np.float32([0.01, 0])"
# RTOL ATOL positionally: exact, then loose.
compare 1 "RTOL 0 ATOL 0, summed in another order" right want 0 0
compare 0 "RTOL 0 ATOL 0, the same" want want 0 0
compare 0 "ATOL 0.1 at scale 1e-11: an error of 5% of the scale" "want * np.float32(1.05)" want 0 0.1
# Integers: one step is one step at any scale.
compare 0 "integers, ATOL 1, off by one" "np.int32([0, 1])" "np.int32([0, 0])" 0 1
compare 1 "integers, ATOL 0, off by one" "np.int32([0, 1])" "np.int32([0, 0])" 0 0
exit $((failures > 0))

#!/usr/bin/env bash
# `kiln print FILE --pass FoldScaleAxis` on the seed notes' example: the per-channel multiply
# after the convolution moves into its weight, which FoldConstant (run inside the pass)
# evaluates: one conv2d with the scaled weight is left. A second --pass runs after it.
set -uo pipefail
kiln=$1
source "$(dirname "${BASH_SOURCE[0]}")/lib/expect.sh"

# Weight (2, 1, 3, 3) = arange(18) * 0.25 - 2, scale (2, 1, 1) = [0.5, -1.5].
cat >"$tmp/model.relay" <<'IR'
fn (%x: Tensor[(1, 1, 10, 10), float32]) -> Tensor[(1, 2, 10, 10), float32] {
  %0 = nn.conv2d(%x, meta[relay.Constant][0], padding=[1, 1, 1, 1], channels=2, kernel_size=[3, 3]);
  multiply(%0, meta[relay.Constant][1])
}
#[metadata]
{"relay.Constant": [
{"dtype":"float32","shape":[2,1,3,3],"data":"AAAAwAAA4L8AAMC/AACgvwAAgL8AAEC/AAAAvwAAgL4AAAAAAACAPgAAAD8AAEA/AACAPwAAoD8AAMA/AADgPwAAAEAAABBA"},
{"dtype":"float32","shape":[2,1,1],"data":"AAAAPwAAwL8="}
]}
IR

# The weight times the scale per output channel.
cat >"$tmp/want" <<'IR'
def @main(%x: Tensor[(1, 1, 10, 10), float32]) -> Tensor[(1, 2, 10, 10), float32] {
  nn.conv2d(%x, meta[relay.Constant][0] /* ty=Tensor[(2, 1, 3, 3), float32] */, padding=[1, 1, 1, 1], channels=2, kernel_size=[3, 3]) /* ty=Tensor[(1, 2, 10, 10), float32] */
}

#[metadata]
{"relay.Constant": [
  {"dtype":"float32","shape":[2,1,3,3],"data":"AACAvwAAYL8AAEC/AAAgvwAAAL8AAMC+AACAvgAAAL4AAAAAAADAvgAAQL8AAJC/AADAvwAA8L8AABDAAAAowAAAQMAAAFjA"}
]}
IR

for passes in "--pass FoldScaleAxis" "--pass FoldScaleAxis --pass FoldConstant"; do
  # shellcheck disable=SC2086
  "$kiln" print "$tmp/model.relay" $passes >"$tmp/got" 2>"$tmp/err" || fail "print $passes: $(cat "$tmp/err")"
  diff -u "$tmp/want" "$tmp/got" >"$tmp/diff" || {
    fail "print $passes printed other IR"
    cat "$tmp/diff"
  }
done

# Without the pass the multiply stays.
"$kiln" print "$tmp/model.relay" | grep -q 'multiply(' || fail "print without --pass lost the multiply"

# A scale along the width (which here has as many elements as there are channels) is not
# per channel: the module prints as it does without the pass.
cat >"$tmp/width.relay" <<'IR'
fn (%x: Tensor[(1, 1, 4, 4), float32]) {
  %0 = nn.conv2d(%x, meta[relay.Constant][0], padding=[0, 0, 0, 0], channels=2, kernel_size=[3, 3]);
  multiply(%0, meta[relay.Constant][1])
}
#[metadata]
{"relay.Constant": [
{"dtype":"float32","shape":[2,1,3,3],"data":"AAAAwAAA4L8AAMC/AACgvwAAgL8AAEC/AAAAvwAAgL4AAAAAAACAPgAAAD8AAEA/AACAPwAAoD8AAMA/AADgPwAAAEAAABBA"},
{"dtype":"float32","shape":[2],"data":"AAAAPwAAwL8="}
]}
IR
"$kiln" print "$tmp/width.relay" >"$tmp/want_width" || fail "print width.relay"
"$kiln" print "$tmp/width.relay" --pass FoldScaleAxis >"$tmp/got_width" || fail "print width.relay --pass FoldScaleAxis"
cmp -s "$tmp/want_width" "$tmp/got_width" || fail "a scale along the width was folded: $(cat "$tmp/got_width")"

echo "$failures failed"
exit $((failures > 0))

#!/usr/bin/env bash
# kiln bench --profile's flop columns: the compiler writes each fused function's floating-point
# operations into graph.json ("flops": a dense (1, 64) x (32, 64)^T is 2 * 32 * 64 = 4096; a
# 3x3 conv of 3 into 4 channels on 8x8 with padding 1 is 2 * (4 * 8 * 8) * (3 * 3 * 3) = 13824,
# also in the blocked layout; an LSTM of hidden 32 over 5 steps counts its recurrent products,
# 2 * 5 * (4 * 32) * 32 = 40960), and the profile prints GFLOP/s and the share of the measured
# peak for them, "-" for functions without products.
set -uo pipefail
kiln=$1
source "$(dirname "${BASH_SOURCE[0]}")/lib/expect.sh"

cat >"$tmp/model.relay" <<'IR'
def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32], %d: Tensor[(1, 64), float32], %v: Tensor[(32, 64), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1]);
  %1 = nn.relu(%0);
  %2 = nn.dense(%d, %v);
  %3 = exp(%x);
  (%1, %2, %3)
}
IR
for level in 0 3; do
  "$kiln" compile "$tmp/model.relay" -O "$level" -o "$tmp/m$level.kiln" >/dev/null 2>"$tmp/err" ||
    fail "compile -O $level: $(cat "$tmp/err")"
  flops=$(grep -o '"flops": *"[0-9]*"' "$tmp/m$level.kiln/graph.json" | grep -o '[0-9]*' | sort -n | tr '\n' ' ')
  [[ $flops == "4096 13824 " ]] || fail "-O $level: flops in graph.json: '$flops'"
done
# nn.lstm's operands: the projection of every step, R^T in panels of 32 columns, h0, c0, peepholes.
cat >"$tmp/lstm.relay" <<'IR'
def @main(%p: Tensor[(5, 1, 128), float32], %r: Tensor[(4, 32, 32), float32], %h: Tensor[(1, 32), float32], %c: Tensor[(1, 32), float32], %q: Tensor[(96), float32]) {
  nn.lstm(%p, %r, %h, %c, %q)
}
IR
"$kiln" compile "$tmp/lstm.relay" -o "$tmp/lstm.kiln" >/dev/null 2>"$tmp/err" || fail "compile lstm: $(cat "$tmp/err")"
grep -q '"flops": *"40960"' "$tmp/lstm.kiln/graph.json" || fail "lstm flops: $(grep -o '"flops": *"[0-9]*"' "$tmp/lstm.kiln/graph.json")"
"$kiln" bench "$tmp/m3.kiln" --profile --repeat 2 --warmup 1 >"$tmp/profile.txt" 2>&1 || fail "bench --profile"
grep -qE '^fp32 peak \(measured, 1 thread\): [0-9.]+ GFLOP/s$' "$tmp/profile.txt" || fail "no peak line: $(cat "$tmp/profile.txt")"
grep -qE '^ +[0-9.]+ +[0-9.]+% +1 +[0-9.]+ +[0-9.]+%  fused_nn_dense' "$tmp/profile.txt" ||
  fail "no GFLOP/s for the dense: $(cat "$tmp/profile.txt")"
grep -qE '^ +[0-9.]+ +[0-9.]+% +1 +- +-  fused_exp' "$tmp/profile.txt" ||
  fail "the exp has flop columns: $(cat "$tmp/profile.txt")"
exit $((failures > 0))

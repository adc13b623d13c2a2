#!/usr/bin/env bash
# Bad input ends in one clear line on stderr and exit status 1 — never a crash.
set -uo pipefail
kiln=$1 root=$2
source "$(dirname "${BASH_SOURCE[0]}")/lib/expect.sh"

printf 'def @main(%%x: Tensor[(2, 3), float32]) {\n  add(%%x, \n}\n' >"$tmp/malformed.relay"
expect_error "malformed IR" "malformed.relay:[0-9]+:[0-9]+:" "$kiln" print "$tmp/malformed.relay"

printf 'def @main(%%x: Tensor[(2, 3), float32]) {\n  nn.frobnicate(%%x)\n}\n' >"$tmp/unknown_op.relay"
expect_error "unknown op" "unknown op 'nn.frobnicate'" "$kiln" print "$tmp/unknown_op.relay"

printf 'def @main(%%x: Tensor[(1, 3, 8, 8), float32]) {\n  nn.max_pool2d(%%x, pool_sise=[2, 2])\n}\n' \
  >"$tmp/bad_attr.relay"
expect_error "unknown attribute" "unknown attribute 'pool_sise'" "$kiln" print "$tmp/bad_attr.relay"

printf 'def @main(%%x: Tensor[(1, 3, 8, 8), float32]) {\n  nn.max_pool2d(%%x, pool_size="big")\n}\n' \
  >"$tmp/bad_attr_kind.relay"
expect_error "attribute of wrong kind" "pool_size" "$kiln" print "$tmp/bad_attr_kind.relay"

printf 'def @main(%%x: Tensor[(2, 3), float32], %%y: Tensor[(4, 3), float32]) {\n  add(%%x, %%y)\n}\n' \
  >"$tmp/shapes.relay"
expect_error "shape mismatch" "add.*\(2, 3\).*\(4, 3\)|add.*\(4, 3\).*\(2, 3\)" "$kiln" print "$tmp/shapes.relay"

mkdir -p "$tmp/inputs"
expect_error "missing input file" "missing input tensors:.*w1.npy" \
  "$kiln" run "$root/examples/mlp/model.relay" --inputs "$tmp/inputs" --outputs "$tmp/out"

cp "$root"/examples/mlp/inputs/*.npy "$tmp/inputs/"
head -c 60 "$root/examples/mlp/inputs/w1.npy" >"$tmp/inputs/w1.npy"
expect_error "truncated input file" "w1.npy" \
  "$kiln" run "$root/examples/mlp/model.relay" --inputs "$tmp/inputs" --outputs "$tmp/out"

cp "$root/examples/mlp/inputs/b1.npy" "$tmp/inputs/w1.npy"
expect_error "wrong input shape" "w1.*\(8, 4\).*\(8\)|w1.*\(8\).*\(8, 4\)" \
  "$kiln" run "$root/examples/mlp/model.relay" --inputs "$tmp/inputs" --outputs "$tmp/out"

expect_error "missing model file" "no/such/model.relay" "$kiln" print "$tmp/no/such/model.relay"
expect_error "unknown pass" "unknown pass" "$kiln" print "$root/examples/mlp/model.relay" --pass NoSuchPass
expect_error "unknown option" "unknown option --frobnicate" "$kiln" print "$root/examples/mlp/model.relay" --frobnicate

exit $((failures > 0))

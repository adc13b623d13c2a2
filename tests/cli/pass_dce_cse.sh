#!/usr/bin/env bash
# DeadCodeElimination and EliminateCommonSubexpr from the command line: `kiln print FILE --pass
# NAME` prints the module after the pass, exactly as below. Equal calls and constants merge
# but the two random draws do not; the unused let, the branch not taken and the tuple built
# only to be projected go.
set -uo pipefail
kiln=$1
source "$(dirname "${BASH_SOURCE[0]}")/lib/expect.sh"

cat >"$tmp/model.relay" <<'EOF'
def @main(%x: Tensor[(1, 4), float32]) {
  let %unused = exp(%x);
  %0 = nn.relu(add(%x, 1f));
  %1 = nn.relu(add(%x, 1f));
  %2 = (%0, random.uniform(shape=[1, 4], seed=1), random.uniform(shape=[1, 4], seed=1));
  %3 = if (True) { multiply(%0, %1) } else { %x };
  (%3, %2.1, %2.2)
}
EOF

# expect_print DESCRIPTION EXPECTED PASS...: `kiln print` after the passes prints EXPECTED.
expect_print() {
  local what=$1 want=$2 args=()
  shift 2
  for pass in "$@"; do args+=(--pass "$pass"); done
  local got
  got=$("$kiln" print "$tmp/model.relay" "${args[@]}") || fail "$what: kiln print failed"
  [[ $got == "$want" ]] || fail "$what: got
$got
expected
$want"
}

ty='/* ty=Tensor[(1, 4), float32] */'
head='def @main(%x: Tensor[(1, 4), float32]) -> (Tensor[(1, 4), float32], Tensor[(1, 4), float32], Tensor[(1, 4), float32]) {'

expect_print "EliminateCommonSubexpr" "$head
  let %unused = exp(%x) $ty;
  %0 = add(%x, 1f /* ty=float32 */) $ty;
  %1 = nn.relu(%0) $ty;
  %2 = random.uniform(shape=[1, 4], seed=1) $ty;
  %3 = random.uniform(shape=[1, 4], seed=1) $ty;
  %4 = (%1, %2, %3);
  %5 = if (True /* ty=bool */) {
    multiply(%1, %1) $ty
  } else {
    %x
  };
  %6 = %4.1;
  %7 = %4.2;
  (%5, %6, %7)
}" EliminateCommonSubexpr

expect_print "DeadCodeElimination" "$head
  %0 = add(%x, 1f /* ty=float32 */) $ty;
  %1 = add(%x, 1f /* ty=float32 */) $ty;
  %2 = nn.relu(%0) $ty;
  %3 = nn.relu(%1) $ty;
  %4 = multiply(%2, %3) $ty;
  %5 = random.uniform(shape=[1, 4], seed=1) $ty;
  %6 = random.uniform(shape=[1, 4], seed=1) $ty;
  (%4, %5, %6)
}" DeadCodeElimination

expect_print "EliminateCommonSubexpr then DeadCodeElimination" "$head
  %0 = add(%x, 1f /* ty=float32 */) $ty;
  %1 = nn.relu(%0) $ty;
  %2 = multiply(%1, %1) $ty;
  %3 = random.uniform(shape=[1, 4], seed=1) $ty;
  %4 = random.uniform(shape=[1, 4], seed=1) $ty;
  (%2, %3, %4)
}" EliminateCommonSubexpr DeadCodeElimination

echo "$failures failed"
exit $((failures > 0))

#!/usr/bin/env bash
# The seed notes' device example end to end: `kiln compile` turns the on_device annotations
# into "__copy" nodes of graph.json with a device_index per entry (1: cpu, 2: cuda), and
# `kiln run` of the artifact (two CPU devices of separate memory) gives the interpreter's
# results. A model without annotations stays on device 1 with no copy.
set -uo pipefail
kiln=$1
source "$(dirname "${BASH_SOURCE[0]}")/lib/expect.sh"

cat >"$tmp/seed.relay" <<'IR'
def @main(%x: Tensor[(1, 10), float32], %y: Tensor[(1, 10), float32]) {
  %0 = add(%x, %y); %1 = sqrt(%0); %2 = on_device(%1, virtual_device="cuda"); %3 = log(%0);
  %4 = subtract(%2, %3); %5 = exp(%4); on_device(%5, virtual_device="cuda")
}
IR
mkdir -p "$tmp/in"
/usr/bin/python3 - "$tmp/in" <<'PY' || fail "writing the inputs"
import sys, numpy as np
rng = np.random.default_rng(4)
for name in ("x", "y"):
    np.save(f"{sys.argv[1]}/{name}.npy", rng.uniform(0.5, 3.0, (1, 10)).astype(np.float32))
PY

for level in 0 3; do
  "$kiln" compile "$tmp/seed.relay" -O "$level" -o "$tmp/seed$level.kiln" >/dev/null 2>"$tmp/err" ||
    fail "compile -O $level: $(cat "$tmp/err")"
  /usr/bin/python3 - "$tmp/seed$level.kiln/graph.json" <<'PY' || fail "graph.json of -O $level"
import json, sys
g = json.load(open(sys.argv[1]))
nodes, rows = g["nodes"], g["node_row_ptr"]
device = g["attrs"]["device_index"][1]
storage = g["attrs"]["storage_id"][1]
copies = [n["name"] for n in nodes if n.get("attrs", {}).get("func_name") == "__copy"]
assert copies == ["__copy", "__copy1", "__copy2"], copies
dev = {n["name"]: device[rows[i]] for i, n in enumerate(nodes)}
assert [dev[c] for c in copies] == [2, 1, 2], dev
assert dev["x"] == 1 and dev["y"] == 1, dev
assert device[rows[g["heads"][0][0]]] == 2, "the result is on cuda"
owner = {}
for s, d in zip(storage, device):
    assert owner.setdefault(s, d) == d, f"storage {s} on devices {owner[s]} and {d}"
PY
  "$kiln" run "$tmp/seed$level.kiln" --inputs "$tmp/in" --outputs "$tmp/compiled$level" >/dev/null 2>"$tmp/err" ||
    fail "run the artifact: $(cat "$tmp/err")"
done
"$kiln" run "$tmp/seed.relay" --engine interp --inputs "$tmp/in" --outputs "$tmp/interp" >/dev/null 2>"$tmp/err" ||
  fail "run the interpreter: $(cat "$tmp/err")"
for level in 0 3; do
  /usr/bin/python3 - "$tmp/interp/output_0.npy" "$tmp/compiled$level/output_0.npy" <<'PY' ||
import sys, numpy as np
want, got = np.load(sys.argv[1]), np.load(sys.argv[2])
assert want.shape == got.shape and np.allclose(want, got, rtol=1e-5, atol=1e-6), (want, got)
PY
    fail "compiled -O $level differs from the interpreter"
done

# Without annotations: every entry on device 1, no copy.
cat >"$tmp/plain.relay" <<'IR'
def @main(%x: Tensor[(2, 3), float32]) { %0 = exp(%x); add(%0, %x) }
IR
"$kiln" compile "$tmp/plain.relay" -o "$tmp/plain.kiln" >/dev/null 2>"$tmp/err" || fail "compile plain: $(cat "$tmp/err")"
/usr/bin/python3 - "$tmp/plain.kiln/graph.json" <<'PY' || fail "graph.json without annotations"
import json, sys
g = json.load(open(sys.argv[1]))
assert set(g["attrs"]["device_index"][1]) == {1}
assert not any(n.get("attrs", {}).get("func_name") == "__copy" for n in g["nodes"])
PY

exit $((failures > 0))

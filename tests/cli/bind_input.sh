#!/usr/bin/env bash
# --bind NAME=VALUE fixes an input at import: an If switching on it folds to the branch
# taken, so the model compiles and the artifact takes the remaining inputs. A bad binding
# ends in one line naming the input, and exit status 1. Unbound, a branch that does not
# convert becomes a run-time error, raised only if the model (or its artifact) takes it.
set -uo pipefail
kiln=$1 root=$2
source "$(dirname "${BASH_SOURCE[0]}")/lib/expect.sh"

# A sample-rate switch: y = x + 1 when sr == 16000; the else branch reshapes x [2] to [3],
# which only an x of three elements could take, so it converts only if sr is bound.
/usr/bin/python3 - "$tmp" <<'EOF'
import os, sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

tmp = sys.argv[1]
then_branch = helper.make_graph(
    [helper.make_node("Add", ["x", "one"], ["then_y"], name="add_one")], "rate16k", [],
    [helper.make_tensor_value_info("then_y", TensorProto.FLOAT, [2])])
else_branch = helper.make_graph(
    [helper.make_node("Reshape", ["x", "three"], ["else_y"], name="reshape_3")], "rate8k", [],
    [helper.make_tensor_value_info("else_y", TensorProto.FLOAT, None)])
graph = helper.make_graph(
    [helper.make_node("Equal", ["sr", "sr16k"], ["is16k"], name="is_16k"),
     helper.make_node("If", ["is16k"], ["y"], name="switch_rate", then_branch=then_branch, else_branch=else_branch)],
    "switch",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2]),
     helper.make_tensor_value_info("sr", TensorProto.INT64, [])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    [numpy_helper.from_array(np.array(16000, np.int64), "sr16k"),
     numpy_helper.from_array(np.array(1, np.float32), "one"),
     numpy_helper.from_array(np.array([3], np.int64), "three")])
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)]), f"{tmp}/model.onnx")
os.makedirs(f"{tmp}/inputs")
os.makedirs(f"{tmp}/want")
np.save(f"{tmp}/inputs/x.npy", np.array([1.5, -2], np.float32))
np.save(f"{tmp}/want/y.npy", np.array([2.5, -1], np.float32))
np.save(f"{tmp}/sr.npy", np.array(16000, np.int64))
for rate in (16000, 8000):
    os.makedirs(f"{tmp}/inputs_{rate}")
    np.save(f"{tmp}/inputs_{rate}/x.npy", np.array([1.5, -2], np.float32))
    np.save(f"{tmp}/inputs_{rate}/sr.npy", np.array(rate, np.int64))
np.save(f"{tmp}/sr_float.npy", np.array(16000, np.float32))
np.save(f"{tmp}/sr_vector.npy", np.array([16000], np.int64))
EOF
model=$tmp/model.onnx

# Unbound: the import warns (one line naming the If and the branch) and keeps the If.
warning="warning: node 'switch_rate' \(If\): else_branch does not convert for these input shapes.*reshape_3"
if ! "$kiln" print "$model" >"$tmp/ir.txt" 2>"$tmp/err"; then
  fail "print of the unbound switch: $(cat "$tmp/err")"
elif [[ $(wc -l <"$tmp/err") -ne 1 ]] || ! grep -qE -- "$warning" "$tmp/err"; then
  fail "print of the unbound switch does not warn once: $(cat "$tmp/err")"
elif ! grep -q 'unreachable(' "$tmp/ir.txt"; then
  fail "print of the unbound switch has no unreachable else branch"
fi
# unbound_fails DESCRIPTION PATTERN COMMAND...: exit 1, the warning, then one error line.
unbound_fails() {
  local what=$1 pattern=$2
  shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"
  local status=$?
  if [[ $status -ne 1 || $(wc -l <"$tmp/err") -ne 2 ]] || ! grep -qE -- "$warning" "$tmp/err" ||
    ! tail -n 1 "$tmp/err" | grep -qE -- "$pattern"; then
    fail "$what: status $status, stderr:"
    cat "$tmp/err"
  fi
}
unbound_fails "unbound switch taking the else branch" \
  "node 'switch_rate': else_branch was not converted: node 'reshape_3'.*cannot run with these input shapes" \
  "$kiln" run "$model" --engine interp --inputs "$tmp/inputs_8000" --outputs "$tmp/bad"
# Compiled unbound, the If stays control flow: the trap fires only when the artifact takes it.
if ! "$kiln" compile "$model" -o "$tmp/unbound.kiln" >/dev/null 2>"$tmp/err"; then
  fail "compile of the unbound switch: $(cat "$tmp/err")"
else
  expect_error "artifact of the unbound switch taking the else branch" \
    "else_branch was not converted: node 'reshape_3'.*cannot run with these input shapes" \
    "$kiln" run "$tmp/unbound.kiln" --inputs "$tmp/inputs_8000" --outputs "$tmp/bad"
  if ! "$kiln" run "$tmp/unbound.kiln" --inputs "$tmp/inputs_16000" --outputs "$tmp/unbound_compiled" >/dev/null; then
    fail "artifact of the unbound switch with sr=16000"
  elif ! /usr/bin/python3 "$root/tests/realmodels/compare.py" "$tmp/unbound_compiled" "$tmp/want"; then
    fail "artifact of the unbound switch with sr=16000: wrong output"
  fi
fi

if ! "$kiln" print "$model" --bind sr=16000 >"$tmp/ir.txt"; then
  fail "print --bind sr=16000"
elif grep -q 'if (' "$tmp/ir.txt"; then
  fail "print --bind sr=16000 keeps the If"
fi

# check DESCRIPTION OUT_DIR COMMAND...: the command succeeds and writes y = x + 1.
check() {
  local what=$1 out=$2
  shift 2
  if ! "$@" --inputs "$tmp/inputs" --outputs "$out" >/dev/null; then
    fail "$what"
  elif ! /usr/bin/python3 "$root/tests/realmodels/compare.py" "$out" "$tmp/want"; then
    fail "$what: wrong output"
  fi
}
if "$kiln" compile "$model" --bind sr=16000 -o "$tmp/model.kiln" >/dev/null; then
  check "run of the artifact compiled with --bind" "$tmp/compiled" "$kiln" run "$tmp/model.kiln"
else
  fail "compile --bind sr=16000"
fi
check "run --engine interp --bind" "$tmp/interp" "$kiln" run "$model" --engine interp --bind sr=16000
if ! "$kiln" run "$model" --engine interp --inputs "$tmp/inputs_16000" --outputs "$tmp/unbound" 2>/dev/null >&2; then
  fail "run --engine interp of the unbound switch with sr=16000"
elif ! /usr/bin/python3 "$root/tests/realmodels/compare.py" "$tmp/unbound" "$tmp/want"; then
  fail "run --engine interp of the unbound switch with sr=16000: wrong output"
fi
check "run --bind with a .npy value" "$tmp/npy" "$kiln" run "$model" --bind "sr=$tmp/sr.npy"
check_bench() {
  "$kiln" bench "$model" --bind sr=16000 --repeat 1 --warmup 0 --inputs "$tmp/inputs" >"$tmp/out" 2>"$tmp/err" ||
    fail "bench --bind: $(cat "$tmp/err")"
}
check_bench

expect_error "unknown input" "--bind names 'rate', which is not an input.*'x', 'sr'" \
  "$kiln" print "$model" --bind rate=16000
expect_error "malformed binding" "malformed --bind.*'sr'" "$kiln" print "$model" --bind sr
expect_error "not a number" "--bind for input 'sr': not a number.*int64.*'fast'" "$kiln" print "$model" --bind sr=fast
expect_error "fraction for an integer" "--bind for input 'sr': a value does not fit the input's dtype.*int64.*16000.5" \
  "$kiln" print "$model" --bind sr=16000.5
expect_error "too many values" \
  "--bind for input 'sr' has the wrong number of values for shape \(\).*expected 1, found 2" \
  "$kiln" print "$model" --bind sr=16000,8000
expect_error ".npy of the wrong dtype" \
  "--bind for input 'sr':.*sr_float.npy' has the wrong dtype.*expected int64, found float32" \
  "$kiln" compile "$model" --bind "sr=$tmp/sr_float.npy" -o "$tmp/bad.kiln"
expect_error ".npy of the wrong shape" \
  "--bind for input 'sr':.*sr_vector.npy' has the wrong shape.*expected \(\), found \(1\)" \
  "$kiln" run "$model" --bind "sr=$tmp/sr_vector.npy" --inputs "$tmp/inputs" --outputs "$tmp/bad"
expect_error "missing .npy" "--bind for input 'sr': no such file '.*no_such.npy'" \
  "$kiln" run "$model" --bind "sr=$tmp/no_such.npy" --inputs "$tmp/inputs" --outputs "$tmp/bad"
expect_error "bound twice" "--bind is given twice for input 'sr'" "$kiln" print "$model" --bind sr=1 --bind sr=2
expect_error "artifact" "--bind applies when compiling a model.*model.kiln" \
  "$kiln" run "$tmp/model.kiln" --bind sr=16000 --inputs "$tmp/inputs" --outputs "$tmp/bad"
[[ -e $tmp/bad.kiln ]] && fail "a failed compile left $tmp/bad.kiln behind"

exit $((failures > 0))

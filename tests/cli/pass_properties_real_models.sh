#!/usr/bin/env bash
# Every registered pass keeps the results of real exports: each model is printed after the
# pass alone (and after the whole -O 3 pipeline, fused functions and all), the printed IR is
# run by kiln's interpreter, and its outputs match those of the module printed with no pass
# (rtol 1e-3, atol 1e-4: passes may reassociate float arithmetic). At -O 3 no call computes
# from constants alone (kiln compile --stats' const-only column) and, in the models that
# import with them, no batch_norm or dropout is left.
set -uo pipefail
kiln=$1 root=$2
source "$(dirname "${BASH_SOURCE[0]}")/lib/expect.sh"
source "$root/tests/realmodels/check_against_ort.sh"  # read_flags
/usr/bin/python3 "$root/tests/realmodels/export_models.py" "$tmp" resnet18 transformer 2>/dev/null ||
  fail "export_models.py"
/usr/bin/python3 "$root/tests/realmodels/regression_models.py" "$tmp" concat_batchnorm unsorted dynamic_quant_seg 2>/dev/null ||
  fail "regression_models.py"

# The registered passes, as the error for an unknown one lists them.
passes=$("$kiln" print "$root/examples/mlp/model.relay" --pass NoSuchPass 2>&1 | sed -n 's/.*expected one of \(.*\), found.*/\1/p' | tr -d ',')
[[ $(wc -w <<<"$passes") -ge 11 ]] || fail "could not list the passes: '$passes'"

# run_printed DIR NAME FLAGS...: prints the model with FLAGS and runs the printed IR into DIR/NAME.
run_printed() {
  local dir=$1 name=$2
  shift 2
  local flags=()
  read_flags "$dir" import_flags
  "$kiln" print "$dir/model.onnx" "${flags[@]}" "$@" >"$dir/$name.relay" 2>"$tmp/err" || {
    fail "$(basename "$dir") $name: print: $(cat "$tmp/err")"
    return 1
  }
  "$kiln" run "$dir/$name.relay" --engine interp --inputs "$dir/inputs" --outputs "$dir/$name" >/dev/null 2>"$tmp/err" || {
    fail "$(basename "$dir") $name: run: $(cat "$tmp/err")"
    return 1
  }
}

models=0
for dir in "$tmp"/*/; do
  dir=${dir%/}
  name=$(basename "$dir")
  [[ -f $dir/model.onnx ]] || continue
  models=$((models + 1))
  failures_before=$failures
  run_printed "$dir" none || continue
  for pass in $passes -O3; do
    if [[ $pass == -O3 ]]; then run_printed "$dir" O3 -O 3 || continue; else run_printed "$dir" "$pass" --pass "$pass" || continue; fi
    /usr/bin/python3 "$root/tests/realmodels/compare.py" "$dir/${pass#-}" "$dir/none" 1e-3 1e-4 >"$tmp/diff" ||
      fail "$name: $pass changed the results: $(cat "$tmp/diff")"
    rm -rf "${dir:?}/${pass#-}" "$dir/${pass#-}.relay"
  done
  flags=()
  read_flags "$dir" import_flags
  "$kiln" compile "$dir/model.onnx" "${flags[@]}" -o "$dir/model.kiln" --stats >"$dir/stats" || fail "$name: compile --stats"
  left=$(awk '$1 == "FuseOps" { print $7 }' "$dir/stats")
  [[ $left == 0 ]] || fail "$name: $left calls compute from constants alone at -O 3"
  grep -qE 'nn\.(batch_norm|dropout)\(' "$dir/none.relay" && "$kiln" print "$dir/model.onnx" "${flags[@]}" -O 3 |
    grep -qE 'nn\.(batch_norm|dropout)\(' && fail "$name: batch_norm or dropout left at -O 3"
  ((failures == failures_before)) && echo "ok $name"
done
((models == 5)) || fail "exported $models models, expected 5"

echo "$failures failed"
exit $((failures > 0))

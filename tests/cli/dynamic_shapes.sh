#!/usr/bin/env bash
# Inputs with dimensions known only at run time: a CNN with a batch axis and an attention
# encoder with a sequence axis (tests/realmodels/dynamic_models.py; their flatten and head
# reshapes are computed from Shape, as exporters write them). `kiln compile` without --shape
# writes a folder of shape variants; --variant compiles one ahead, `kiln run` compiles each new
# shape on its first run and reuses it after; every shape matches ONNX Runtime, and the
# runtime alone (kiln-run-artifact) runs the variants compiled.
set -uo pipefail
kiln=$1 root=$2
source "$(dirname "${BASH_SOURCE[0]}")/lib/expect.sh"
run_artifact=$(dirname "$kiln")/kiln-run-artifact

/usr/bin/python3 "$root/tests/realmodels/dynamic_models.py" "$tmp" || fail "dynamic_models.py"

# run_shape NAME ARTIFACT CASE: runs one input folder, checks whether it compiled (EXPECT
# "compiles" or "reuses"), and compares with ONNX Runtime.
run_shape() {
  local name=$1 artifact=$2 case=$3 expect=$4 dir=$tmp/$1
  node "$root/tools/ort/run.js" "$dir/model.onnx" --inputs "$dir/$case" --outputs "$dir/ort_$case" >/dev/null ||
    fail "$name $case: ONNX Runtime"
  if ! "$kiln" run "$artifact" --inputs "$dir/$case" --outputs "$dir/kiln_$case" >/dev/null 2>"$dir/err_$case"; then
    fail "$name $case: kiln run"
    cat "$dir/err_$case"
    return
  fi
  if [[ $expect == compiles ]] && ! grep -q "compiling .* (the first run with them)" "$dir/err_$case"; then
    fail "$name $case: a new shape was not compiled"
  fi
  if [[ $expect == reuses && -s $dir/err_$case ]]; then
    fail "$name $case: a compiled shape was compiled again"
    cat "$dir/err_$case"
  fi
  /usr/bin/python3 "$root/tests/realmodels/compare.py" "$dir/kiln_$case" "$dir/ort_$case" ||
    fail "$name $case: outputs differ from ONNX Runtime"
}

# The CNN: batch 1 compiled ahead, 4 and 16 on their first run.
cnn=$tmp/cnn.kiln
"$kiln" compile "$tmp/cnn/model.onnx" -o "$cnn" --variant "x=1,3,16,16" >"$tmp/compile.out" 2>&1 ||
  { fail "cnn: compile"; cat "$tmp/compile.out"; }
grep -q "1 input shapes compiled" "$tmp/compile.out" || fail "cnn: compile did not report the variant"
[[ -f $cnn/variants.json && -f $cnn/model.txt && -f $cnn/shapes/1x3x16x16/lib.so ]] ||
  fail "cnn: the folder lacks variants.json, model.txt or the batch-1 variant"
run_shape cnn "$cnn" in_1 reuses
run_shape cnn "$cnn" in_4 compiles
run_shape cnn "$cnn" in_16 compiles
run_shape cnn "$cnn" in_4 reuses
[[ $(LC_ALL=C ls "$cnn/shapes") == $'16x3x16x16\n1x3x16x16\n4x3x16x16' ]] || fail "cnn: variants kept: $(ls "$cnn/shapes")"

if grep -l "kiln_ref\." "$cnn"/shapes/*/graph.json; then fail "cnn: a variant runs reference kernels"; fi
# A bad --variant is one error naming the flag (after the warning about the '?' input).
for bad in "1,three,16,16|malformed --variant for 'x'.*'1,three,16,16'" "?,3,16,16|--variant 'x=\?,3,16,16': a variant's dimensions are numbers"; do
  "$kiln" compile "$tmp/cnn/model.onnx" -o "$tmp/bad.kiln" --variant "x=${bad%%|*}" >/dev/null 2>"$tmp/err"
  status=$?
  [[ $status -eq 1 && $(grep -c "error" "$tmp/err") -eq 1 ]] && grep -qE -- "^kiln: error: ${bad#*|}" "$tmp/err" ||
    fail "--variant x=${bad%%|*}: status $status: $(cat "$tmp/err")"
done

# The runtime alone runs a compiled variant, and names what is compiled when asked for more.
"$run_artifact" "$cnn" "$tmp/cnn/in_4" "$tmp/cnn/alone_4" >/dev/null || fail "cnn: kiln-run-artifact"
/usr/bin/python3 "$root/tests/realmodels/compare.py" "$tmp/cnn/alone_4" "$tmp/cnn/ort_in_4" ||
  fail "cnn: kiln-run-artifact differs from ONNX Runtime"
mkdir -p "$tmp/cnn/in_2"
/usr/bin/python3 -c "import numpy as np; np.save('$tmp/cnn/in_2/x.npy', np.ones((2, 3, 16, 16), np.float32))"
expect_error "runtime alone, shape not compiled" "no variant compiled for input shapes 2x3x16x16 \(compiled: 16x3x16x16, 1x3x16x16, 4x3x16x16\)" \
  "$run_artifact" "$cnn" "$tmp/cnn/in_2" "$tmp/cnn/alone_2"
mkdir -p "$tmp/cnn/in_bad"
/usr/bin/python3 -c "import numpy as np; np.save('$tmp/cnn/in_bad/x.npy', np.ones((2, 1, 16, 16), np.float32))"
expect_error "a shape the model does not take" "input 'x' has a shape the model does not take.*\(\?, 3, 16, 16\).*\(2, 1, 16, 16\)" \
  "$kiln" run "$cnn" --inputs "$tmp/cnn/in_bad" --outputs "$tmp/cnn/out_bad"
expect_error "--variant on a static model" "--variant applies to models whose inputs have dimensions unknown" \
  "$kiln" compile "$tmp/cnn/model.onnx" --shape x=1,3,16,16 --variant "x=1,3,16,16" -o "$tmp/static.kiln"

# The encoder: nothing compiled ahead; sequence lengths 7, 64 and 128.
encoder=$tmp/encoder.kiln
"$kiln" compile "$tmp/encoder/model.onnx" -o "$encoder" >"$tmp/compile.out" 2>&1 ||
  { fail "encoder: compile"; cat "$tmp/compile.out"; }
grep -q "dyn.shape_of" "$encoder/model.txt" || fail "encoder: the kept model computes no shape at run time"
for case in in_7 in_64 in_128; do run_shape encoder "$encoder" "$case" compiles; done
run_shape encoder "$encoder" in_7 reuses
if grep -l "kiln_ref\." "$encoder"/shapes/*/graph.json; then fail "encoder: a variant runs reference kernels"; fi

exit $((failures > 0))

#!/usr/bin/env bash
# AlterOpLayout: `kiln print --pass AlterOpLayout` puts a small conv chain in the blocked
# layout (one layout_transform in, one out), and compiling real torchvision exports at -O3
# (where the pass runs) gives the outputs of -O0 (where it does not): ResNet-18, whose convs
# go blocked, and MobileNetV2, whose depthwise convs go blocked too (and, with depthwise=false,
# stay NCHW, so that the cost rule keeps the whole model NCHW). Both are also checked with every
# conv forced into 8-wide blocks.
set -uo pipefail
kiln=$1 root=$2
source "$(dirname "${BASH_SOURCE[0]}")/lib/expect.sh"

cat >"$tmp/chain.relay" <<'IR'
def @main(%x: Tensor[(1, 16, 8, 8), float32], %w1: Tensor[(32, 16, 3, 3), float32], %w2: Tensor[(32, 32, 3, 3), float32]) {
  %0 = nn.conv2d(%x, %w1, padding=[1, 1]);
  %1 = nn.relu(%0);
  %2 = nn.conv2d(%1, %w2, padding=[1, 1]);
  nn.relu(%2)
}
IR
if ! "$kiln" print "$tmp/chain.relay" --pass AlterOpLayout >"$tmp/chain.out"; then
  fail "kiln print --pass AlterOpLayout"
else
  grep -qE 'data_layout="NCHW(8|16)c", kernel_layout="OIHW(8|16)i(8|16)o"' "$tmp/chain.out" ||
    fail "no blocked conv2d in: $(cat "$tmp/chain.out")"
  # Activations: one transform in, one out; the two weights: one each.
  n=$(grep -c 'layout_transform(' "$tmp/chain.out")
  [[ $n -eq 4 ]] || fail "expected 4 layout_transforms, found $n: $(cat "$tmp/chain.out")"
fi
# The block follows the vector width asked for.
"$kiln" print "$tmp/chain.relay" --pass AlterOpLayout --pass-option AlterOpLayout.vector_lanes=8 >"$tmp/chain8.out"
grep -q 'data_layout="NCHW8c"' "$tmp/chain8.out" || fail "vector_lanes=8 does not give NCHW8c"

/usr/bin/python3 "$root/tests/realmodels/export_models.py" "$tmp/models" resnet18 mobilenet_v2 2>/dev/null ||
  fail "export"

# usage: same_outputs NAME DIR LABEL FLAGS...: -O3 with FLAGS gives -O0's outputs.
same_outputs() {
  local name=$1 dir=$2 label=$3
  shift 3
  "$kiln" compile "$dir/model.onnx" -O 3 -o "$dir/o3.kiln" "$@" >/dev/null || { fail "$name $label: compile"; return; }
  "$kiln" run "$dir/o3.kiln" --inputs "$dir/inputs" --outputs "$dir/o3" >/dev/null || { fail "$name $label: run"; return; }
  /usr/bin/python3 "$root/tests/realmodels/compare.py" "$dir/o3" "$dir/o0" 1e-4 1e-4 ||
    fail "$name $label: -O3 outputs differ from -O0"
}

for name in resnet18 mobilenet_v2; do
  dir=$tmp/models/$name
  "$kiln" compile "$dir/model.onnx" -O 0 -o "$dir/o0.kiln" >/dev/null || { fail "$name: compile -O0"; continue; }
  "$kiln" run "$dir/o0.kiln" --inputs "$dir/inputs" --outputs "$dir/o0" >/dev/null || { fail "$name: run -O0"; continue; }
  same_outputs "$name" "$dir" "(default)"
  same_outputs "$name" "$dir" "(depthwise=false)" --pass-option AlterOpLayout.depthwise=false
  same_outputs "$name" "$dir" "(forced)" --pass-option AlterOpLayout.force=true --pass-option AlterOpLayout.vector_lanes=8
done
for name in resnet18 mobilenet_v2; do
  "$kiln" print "$tmp/models/$name/model.onnx" -O 3 >"$tmp/$name.ir"
  grep -qE 'data_layout="NCHW(8|16)c"' "$tmp/$name.ir" || fail "$name at -O3 has no blocked conv2d"
done
grep -qE 'kernel_layout="OIHW1i(8|16)o"' "$tmp/mobilenet_v2.ir" || fail "mobilenet_v2 at -O3 has no blocked depthwise conv"

exit $((failures > 0))

#!/usr/bin/env bash
# `cmake --install` of this build into a temporary prefix; the out-of-tree examples
# (examples/cpp/run_artifact with kiln::runtime, examples/cpp/compile_model with
# kiln::compiler) configure and build against it with find_package(kiln); an artifact compiled
# by the installed kiln and run by the example gives `kiln run`'s outputs.
kiln=$1 root=$2
source "$root/tests/cli/lib/expect.sh"
build_dir=$(dirname "$kiln")
prefix=$tmp/prefix
example=$root/examples/cnn
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)

cmake --install "$build_dir" --prefix "$prefix" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; fail "install"; }
for f in bin/kiln bin/kiln-run-artifact lib/libkiln_runtime.a lib/cmake/kiln/kilnConfig.cmake \
  include/kiln/runtime/graph_executor.h include/kiln/runtime/kernel_abi.h; do
  [[ -e $prefix/$f ]] || fail "not installed: $f"
done

for name in run_artifact compile_model; do
  if ! { cmake -S "$root/examples/cpp/$name" -B "$tmp/$name" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$prefix" && cmake --build "$tmp/$name"; } >"$tmp/$name.log" 2>&1; then
    cat "$tmp/$name.log"
    fail "example $name does not build against the installed package"
  fi
done

# The installed kiln compiles; the example runs its artifact; `kiln run` runs it too.
"$prefix/bin/kiln" compile "$example/model.onnx" -o "$tmp/cnn.kiln" >/dev/null || fail "installed kiln compile"
"$tmp/run_artifact/run_artifact" "$tmp/cnn.kiln" "$example/inputs" "$tmp/out_example" >/dev/null ||
  fail "run_artifact failed"
"$kiln" run "$tmp/cnn.kiln" --inputs "$example/inputs" --outputs "$tmp/out_cli" >/dev/null || fail "kiln run failed"
# The compiler example's artifact, run by the example program.
"$tmp/compile_model/compile_model" "$example/model.onnx" "$tmp/cm.kiln" >/dev/null || fail "compile_model failed"
"$tmp/run_artifact/run_artifact" "$tmp/cm.kiln" "$example/inputs" "$tmp/out_cm" >/dev/null || fail "run_artifact on compile_model's artifact failed"

/usr/bin/python3 - "$tmp" "$example/expected/probs.npy" <<'PY' || fail "outputs differ"
import sys, numpy as np
tmp, expected = sys.argv[1], np.load(sys.argv[2])
cli = np.load(f"{tmp}/out_cli/probs.npy")
for run in ("out_example", "out_cm"):
    got = np.load(f"{tmp}/{run}/probs.npy")
    assert got.shape == cli.shape == (1, 10), (run, got.shape, cli.shape)
    assert np.allclose(got, cli, rtol=1e-5, atol=1e-7), (run, np.abs(got - cli).max())
assert np.allclose(cli, expected, rtol=1e-4, atol=1e-6), np.abs(cli - expected).max()
PY

[[ $failures -eq 0 ]] && echo "install_find_package: all passed"
exit $((failures > 0))

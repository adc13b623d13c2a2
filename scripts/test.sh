#!/usr/bin/env bash
# Sets up the machine, builds kiln twice (release with GCC, and clang-14 with ASan + UBSan, which
# sanitize the generated kernels too and also build the libFuzzer targets) and runs every test
# in both, then the runtime's tests under ThreadSanitizer, then each fuzz target briefly. This
# is what CI runs (.ci/run).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
for config in release asan; do
  echo "== $config build"
  "$root/scripts/build.sh" "$config"
  echo "== $config tests"
  # Two tests at once, one per core (the sanitized ones, generated kernels sanitized too, take
  # ~30 min one at a time); each test has its own scratch folders and cache writes are atomic.
  # Under ASan the two slowest real-model tests (every pass on real exports, the regression
  # models) are left to the release run unless KILN_FULL_ASAN=1: the sanitized generated kernels
  # of real models are still covered by cli_real_models and cli_alter_op_layout, and CI stays
  # within its hour.
  exclude='^$'
  if [[ $config == asan && ${KILN_FULL_ASAN:-0} != 1 ]]; then
    exclude='^cli_(pass_properties_real_models|real_model_regressions)$'
  fi
  (cd "$root/build/$config" && ctest --output-on-failure --timeout 1800 -j 2 -E "$exclude")
done
# The runtime under ThreadSanitizer: its tests, and eight threads running executors of one
# artifact the release kiln compiled.
echo "== tsan build and runtime tests"
"$root/scripts/build.sh" tsan
(cd "$root/build/tsan" && ctest --output-on-failure --timeout 1800)
# The libFuzzer targets (docs/robustness.md): 20 s each on their corpus (a smoke run; the long
# runs are `scripts/fuzz.sh TARGET SECONDS`), then every input that once crashed one, kept in
# fuzz/regressions/.
echo "== fuzz targets (built with asan): 20 s each and the regression inputs"
fuzz_start=$SECONDS
"$root/scripts/fuzz.sh" all 20
"$root/scripts/fuzz.sh" regressions
echo "== fuzz step took $((SECONDS - fuzz_start)) s"

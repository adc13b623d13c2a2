#!/usr/bin/env bash
# Sets up the machine, builds kiln twice (release, and RelWithDebInfo with ASan + UBSan, which
# sanitize the generated kernels too) and runs every test in both, then the runtime's tests
# under ThreadSanitizer, then builds the fuzz targets (clang) and runs each briefly. This is
# what CI runs (.ci/run).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
for config in release asan; do
  echo "== $config build"
  "$root/scripts/build.sh" "$config"
  echo "== $config tests"
  # The sanitized tests (generated kernels sanitized too) take ~30 min one at a time: run two
  # at once, one per core; each test has its own scratch folders and cache writes are atomic.
  jobs=1
  [[ $config == asan ]] && jobs=2
  (cd "$root/build/$config" && ctest --output-on-failure --timeout 1800 -j "$jobs")
done
# The runtime under ThreadSanitizer: its tests, and eight threads running executors of one
# artifact the release kiln compiled.
echo "== tsan build and runtime tests"
"$root/scripts/build.sh" tsan
(cd "$root/build/tsan" && ctest --output-on-failure --timeout 1800)
# The libFuzzer targets (docs/robustness.md): 30 s each on their corpus, then every input
# that once crashed one, kept in fuzz/regressions/.
echo "== fuzz build, 30 s per target and the regression inputs"
fuzz_start=$SECONDS
"$root/scripts/fuzz.sh" all 30
"$root/scripts/fuzz.sh" regressions
echo "== fuzz step took $((SECONDS - fuzz_start)) s"

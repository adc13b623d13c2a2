#!/usr/bin/env bash
# Sets up the machine, builds kiln twice (release, and debug with ASan + UBSan) and runs
# every test in both. This is what CI runs (.ci/run).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
for config in release asan; do
  echo "== $config build"
  "$root/scripts/build.sh" "$config"
  echo "== $config tests"
  (cd "$root/build/$config" && ctest --output-on-failure --timeout 1800)
done

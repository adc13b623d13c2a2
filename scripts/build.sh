#!/usr/bin/env bash
# Configures and builds one configuration: release (default) or asan (ASan + UBSan).
# usage: scripts/build.sh [release|asan]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
config=${1:-release}
case "$config" in
  release) flags=(-DCMAKE_BUILD_TYPE=Release) ;;
  asan) flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DKILN_SANITIZE=ON) ;;  # -O2: real models stay quick
  *) echo "usage: $0 [release|asan]" >&2; exit 2 ;;
esac
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S "$root" -B "$root/build/$config" "${generator[@]}" "${flags[@]}" >/dev/null
cmake --build "$root/build/$config" --parallel "$(nproc)"

#!/usr/bin/env bash
# Configures and builds one configuration: release (default), asan (ASan + UBSan) or fuzz
# (clang-14, the libFuzzer targets in fuzz/ and the libraries they link, nothing else).
# usage: scripts/build.sh [release|asan|fuzz|tsan]   (tsan: the runtime and its tests under
# ThreadSanitizer)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
config=${1:-release}
targets=()
case "$config" in
  release) flags=(-DCMAKE_BUILD_TYPE=Release) ;;
  # -O2: real models stay quick. -g1 (functions and line tables, enough for the sanitizers'
  # reports) compiles a third faster than -g, whose variable and type records nothing reads here.
  asan)
    debug="-O2 -g1 -DNDEBUG"
    flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DKILN_SANITIZE=ON "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=$debug"
      "-DCMAKE_C_FLAGS_RELWITHDEBINFO=$debug")
    ;;
  fuzz)
    flags=(-DCMAKE_BUILD_TYPE=Release -DKILN_FUZZ=ON)  # -O1, set by KILN_FUZZ
    export CC=clang-14 CXX=clang++-14
    targets=(--target kiln_fuzz_targets)
    ;;
  tsan)  # ThreadSanitizer: the runtime and its tests only (tests/CMakeLists.txt)
    flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DKILN_TSAN=ON)
    targets=(--target kiln_runtime_tests kiln-run-artifact)
    ;;
  *) echo "usage: $0 [release|asan|fuzz|tsan]" >&2; exit 2 ;;
esac
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S "$root" -B "$root/build/$config" "${generator[@]}" "${flags[@]}" >/dev/null
cmake --build "$root/build/$config" --parallel "$(nproc)" "${targets[@]}"

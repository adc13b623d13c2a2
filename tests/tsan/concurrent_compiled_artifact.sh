#!/usr/bin/env bash
# ThreadSanitizer build: compiles the bundled example CNN with a release kiln ($2), then runs the
# TSan-built concurrency test ($1) on it. usage: concurrent_compiled_artifact.sh TESTS KILN SRC
set -euo pipefail
tests=$1 kiln=$2 src=$3
[[ -x $kiln ]] || { echo "no release kiln at $kiln: build it first (scripts/build.sh release)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$kiln" compile "$src/examples/cnn/model.onnx" -o "$tmp/cnn.kiln" >/dev/null
KILN_CONCURRENT_ARTIFACT="$tmp/cnn.kiln" "$tests" --gtest_filter='ConcurrentArtifact.*'

#!/usr/bin/env bash
# Installs every Debian package kiln needs. Idempotent, non-interactive; run as root
# (or with sudo available) on Debian 12.
set -euo pipefail

packages=(
  build-essential cmake ninja-build clang-format
  clang-14 libclang-rt-14-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libprotobuf-dev protobuf-compiler libonnx-dev libonnx-testdata
  nlohmann-json3-dev zlib1g-dev
  python3-numpy python3-onnx python3-torch python3-torchvision
  python3-dev pybind11-dev python3-pytest
  nodejs
  mlir-16-tools
  chromium
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  sudo_cmd=()
  [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -q
  "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# ONNX Runtime's CPU engine, the peer kiln is compared with (tools/ort/run.js). Its install
# script would download GPU files, which this machine cannot reach; the CPU engine ships
# inside the package, so the script is skipped.
root=$(cd "$(dirname "$0")/.." && pwd)
if [[ ! -d "$root/tools/ort/node_modules/onnxruntime-node" ]]; then
  (cd "$root/tools/ort" && ONNXRUNTIME_NODE_INSTALL=skip npm install --ignore-scripts --no-audit --no-fund --loglevel=error)
fi

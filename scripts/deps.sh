#!/usr/bin/env bash
# Installs what kernrl needs on a Debian machine without a GPU (CPU build, tests, compile-only grading).
# The CUDA Toolkit (NVRTC, headers) is expected at /usr/local/cuda or $CUDA_HOME.
set -euo pipefail
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
pkgs=(cmake ninja-build g++ pkg-config libcli11-dev libyaml-cpp-dev nlohmann-json3-dev doctest-dev libssl-dev libmd4c-dev
      libseccomp-dev clang libclang-rt-dev libtorch-dev python3-torch python3-numpy
      libboost-dev python3-websockets gdb procps)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
CUDA="${CUDA_HOME:-/usr/local/cuda}"
if [ ! -e "$CUDA/include/nvrtc.h" ]; then
  echo "deps.sh: the CUDA Toolkit is not at $CUDA (set CUDA_HOME); kernrl needs NVRTC and the CUDA headers" >&2
  exit 1
fi

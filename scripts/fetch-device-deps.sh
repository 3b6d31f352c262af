#!/usr/bin/env bash
# Downloads the Debian packages of kernrl's header and library dependencies into .device/, for GPU
# hosts that cannot install packages themselves; scripts/gpu-test.sh unpacks them into a prefix.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .device
cd .device
apt-get download libcli11-dev libyaml-cpp-dev libyaml-cpp0.7 nlohmann-json3-dev doctest-dev libssl-dev libssl3 \
  libseccomp-dev libseccomp2 libmd4c-dev libmd4c0 libboost1.74-dev
ls -1

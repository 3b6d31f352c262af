#!/usr/bin/env bash
# Runs one GPU suite as a CTest test: tests/gpu/gpu_suite.sh BUILD_DIR COMMAND...
# Exits 77 (CTest's skip) when this build has no GPU worker or no GPU is visible.
set -uo pipefail
BUILD="$1"
shift
if [ ! -x "$BUILD/kernrl-worker" ]; then
  echo "skipped: this build has no GPU worker (libtorch without CUDA)"
  exit 77
fi
if ! ls /dev/nvidia[0-9]* >/dev/null 2>&1; then
  echo "skipped: no NVIDIA GPU is visible"
  exit 77
fi
exec "$@"

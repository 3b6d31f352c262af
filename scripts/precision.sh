#!/usr/bin/env bash
# scripts/precision.sh [precision.py options]: builds kernrl_refdump if needed and prints the
# precision-margin table of every fp32 problem (see scripts/precision.py). On a GPU host run it
# with the Python that has torch 2.x with CUDA (PYTHON=...); without a GPU it runs on CPU, e.g.
#   scripts/precision.sh --sizes test --filter 'L2_*'
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${BUILD_DIR:-build}"
PYTHON="${PYTHON:-python3}"
if [ ! -x "$BUILD/kernrl_refdump" ]; then
  [ -f "$BUILD/build.ninja" ] || cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$BUILD" -j "${JOBS:-2}" --target kernrl_refdump
fi
exec "$PYTHON" scripts/precision.py --refdump "$BUILD/kernrl_refdump" "$@"

#!/usr/bin/env bash
# KernelBench's own eval and kernrl side by side on a GPU host, everything at once: KernelBench's
# builds and evaluations (scripts/kb_side_by_side.py) start at once, while kernrl is built and the
# suite converted (only the problems of the generations) beside them. The run is detached from the
# command that starts it, so a caller with a time limit per command can start it, collect what it
# has so far, and collect the rest later:
#
#   scripts/kb-side-gpu.sh start --kernelbench KB_CHECKOUT [--work DIR] [--previous SIDE_JSON]
#   scripts/kb-side-gpu.sh wait --out OUT [--work DIR] [--for SECONDS]
#
# start: does nothing if a run in DIR (default /tmp/kbside) is under way or finished. KB_GENS: the
#   generations' folders (default: tests/import/generations tests/kernelbench/generations);
#   KB_SIDE_DEADLINE / KB_SIDE_HARD: seconds after the start when no evaluation starts / everything
#   stops (default 980 / 1060); KB_BUILD_JOBS (8), KB_MAX_EVAL (8): KernelBench builds and
#   evaluations at a time. With time left after the side by side (KB_TOTAL, default 1090 s after
#   the start), the level 1-3 problems no earlier measurement converted are converted into
#   DIR/suite-rest (KB_REST_ONLY: other problems; KB_REST=0: none). KB_SIDE_SUITE_ONLY: the
#   problems the suite is built with (default "gens": those of the generations; empty: all of
#   levels 1-3). KB_IDENTITY=1: after the side by side, every problem of the suite is checked
#   against KernelBench's own module (scripts/kb-gpu.sh identity; kb-identity.md). KB_BUILD_TARGETS:
#   kernrl's targets to build (default: those the run needs; add kernrl-triton to run
#   scripts/gpu-test.sh triton on the same build afterwards). KB_AGAIN: NAME@SET of files KernelBench
#   evaluates again despite --previous; KB_CUDNN_TF32=0|1: cuDNN's TF32 in KernelBench's evaluations
#   (default: PyTorch's, on).
# wait: waits until the run has finished or SECONDS have passed, then copies its results to OUT
#   (side.json, side_by_side.md and the logs, as kb-*).
set -uo pipefail
cmd="${1:-}"; shift || true
WORK=/tmp/kbside KB="" OUT="" FOR=0 PREV=""
while [ $# -gt 0 ]; do
  case "$1" in
    --kernelbench) KB="$(realpath "$2")"; shift 2 ;;
    --work) WORK="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    --for) FOR="$2"; shift 2 ;;
    --previous) PREV="$(realpath "$2")"; shift 2 ;;
    *) echo "kb-side-gpu.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
log() { echo "== $(date -u +%H:%M:%S) $*"; }
# A run is alive while its heartbeat is fresh (a process id would not do: a later command on the
# same host may see other process ids).
alive() {
  local hb
  hb=$(cat "$WORK/heartbeat" 2>/dev/null); [ -n "$hb" ] || hb=0
  [ $(( $(date +%s) - hb )) -lt 30 ]
}
beat() { date +%s >"$WORK/heartbeat.tmp" && mv "$WORK/heartbeat.tmp" "$WORK/heartbeat"; }

case "$cmd" in
start)
  [ -n "$KB" ] || { echo "kb-side-gpu.sh start: --kernelbench is required" >&2; exit 2; }
  if alive || [ -e "$WORK/done" ]; then log "a run in $WORK is under way or finished"; exit 0; fi
  mkdir -p "$WORK/tree"
  # The run works from its own copy of the tree: the caller's may be replaced while it runs.
  tar --exclude=./build --exclude='./build-*' --exclude=./gpu-results --exclude=./.git -cf - . | tar -xf - -C "$WORK/tree"
  date +%s >"$WORK/start"
  beat
  (cd "$WORK/tree" && setsid nohup bash scripts/kb-side-gpu.sh run --kernelbench "$KB" --work "$WORK" \
    ${PREV:+--previous "$PREV"} >"$WORK/driver.log" 2>&1 </dev/null &)
  log "started; log: $WORK/driver.log"
  ;;
run)
  cd "$(dirname "$0")/.." || exit 1
  t0=$(cat "$WORK/start")
  (while :; do beat; sleep 5; done) &
  beat=$!
  trap 'kill "$beat" 2>/dev/null' EXIT
  # As scripts/gpu-test.sh: the Debian packages of .device/ for kernrl's libraries, the CUDA Toolkit
  # for KernelBench's load_inline builds.
  if ls .device/*.deb >/dev/null 2>&1; then
    mkdir -p /tmp/kernrl-deps
    for d in .device/*.deb; do dpkg -x "$d" /tmp/kernrl-deps; done
    export LD_LIBRARY_PATH="/tmp/kernrl-deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  fi
  export CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
  gens="${KB_GENS:-tests/import/generations tests/kernelbench/generations}"
  # shellcheck disable=SC2086
  python3 scripts/kb_side_by_side.py --kernrl "$WORK/build-gpu/kernrl" --suite "$WORK/suite" --kernelbench "$KB" \
    --gens $gens --out "$WORK/side" --ready "$WORK/ready" --jobs "${KB_BUILD_JOBS:-8}" --max-eval "${KB_MAX_EVAL:-8}" \
    --deadline "${KB_SIDE_DEADLINE:-980}" --hard-deadline "${KB_SIDE_HARD:-1060}" ${PREV:+--previous "$PREV"} \
    ${KB_AGAIN:+--kb-again $KB_AGAIN} \
    >"$WORK/side-run.log" 2>&1 &
  side=$!
  log "kernrl build and the suite's conversion beside KernelBench's side (pid $side)"
  (OUT="$WORK/gpu" BUILD_DIR="$WORK/build-gpu" BUILD_TARGETS="${KB_BUILD_TARGETS:-kernrl kernrl-worker kernrl-nvrtc kernrl_suite_refdump}" \
    scripts/gpu-test.sh build >"$WORK/build.log" 2>&1; log "kernrl build: $(tail -1 "$WORK/build.log")") &
  build=$!
  KB_ONLY="${KB_SIDE_SUITE_ONLY-gens}" KB_GENS="$gens" KB_SUITE="$WORK/suite" KB_LEVELS=1,2,3 \
    scripts/kb-gpu.sh --kernrl none --kernelbench "$KB" --out "$WORK/suite-out" suite >"$WORK/suite.log" 2>&1
  log "suite: $(grep 'suite built' "$WORK/suite.log")"
  wait "$build"
  touch "$WORK/ready"
  log "ready after $(( $(date +%s) - t0 )) s"
  wait "$side"
  log "side by side finished after $(( $(date +%s) - t0 )) s"
  if [ "${KB_IDENTITY:-0}" = 1 ]; then
    log "identity: the suite's TorchScript references against KernelBench's modules"
    KB_SUITE="$WORK/suite" KB_SHARDS="${KB_SHARDS:-6}" scripts/kb-gpu.sh --kernrl "$WORK/build-gpu/kernrl" \
      --refdump "$WORK/build-gpu/kernrl_suite_refdump" --kernelbench "$KB" --out "$WORK/identity" identity \
      >"$WORK/identity.log" 2>&1
    log "$(grep 'identity:' "$WORK/identity.log" | tail -1)"
  fi
  left=$(( t0 + ${KB_TOTAL:-1090} - $(date +%s) ))
  if [ "${KB_REST:-1}" = 1 ] && [ "$left" -gt 120 ]; then
    # KB_REST_ONLY: the problems to convert (default: those no earlier measurement reached).
    rest="${KB_REST_ONLY:-$(for n in $(seq 36 50); do echo "L3_$n"; done; echo L2_39 L2_41 L2_52 L2_66
      for n in $(seq 67 100); do echo "L1_$n L2_$n"; done)}"
    log "the suite's other level 1-3 problems, for $(( left - 30 )) s"
    timeout $(( left - 30 )) python3 tools/suites/kernelbench_suite.py "$KB" "$WORK/suite-rest" --levels 1,2,3 \
      --only "$(echo "$rest" | tr -s ' \n' ',,')" --jobs "$(( $(nproc) - 2 ))" --timeout 240 >"$WORK/suite-rest.log" 2>&1
    log "rest: $(tail -1 "$WORK/suite-rest.log")"
  fi
  touch "$WORK/done"
  ;;
wait)
  [ -n "$OUT" ] || { echo "kb-side-gpu.sh wait: --out is required" >&2; exit 2; }
  end=$(( $(date +%s) + FOR ))
  while [ ! -e "$WORK/done" ] && [ "$(date +%s)" -lt "$end" ] && alive; do sleep 5; done
  mkdir -p "$OUT"
  # At most a few files come back from some hosts: the results apart, the logs in one archive.
  cp "$WORK/side/side.json" "$OUT/kb-side.json" 2>/dev/null
  cp "$WORK/side/side_by_side.md" "$OUT/kb-side_by_side.md" 2>/dev/null
  cp "$WORK/suite-out/kb-suite.json" "$OUT/kb-suite.json" 2>/dev/null
  cp "$WORK/suite-rest/suite.json" "$OUT/kb-suite-rest.json" 2>/dev/null
  cp "$WORK/identity/kb-identity.md" "$OUT/kb-identity.md" 2>/dev/null
  (cd "$WORK" && tar czf "$OUT/kb-logs.tgz" --ignore-failed-read side/side.log side/kb-eval suite-out/kb-suite-build.log \
    driver.log side-run.log suite.log build.log gpu/build.log suite-rest.log identity.log 2>/dev/null)
  log "$( [ -e "$WORK/done" ] && echo finished || echo 'still running' ) after $(( $(date +%s) - $(cat "$WORK/start" 2>/dev/null || date +%s) )) s"
  tail -15 "$WORK/driver.log" 2>/dev/null; tail -25 "$WORK/side/side.log" 2>/dev/null
  head -8 "$WORK/side/side_by_side.md" 2>/dev/null
  ;;
*)
  echo "usage: $0 start --kernelbench KB [--work DIR] [--previous SIDE_JSON] | wait --out OUT [--work DIR] [--for S]" >&2
  exit 2 ;;
esac

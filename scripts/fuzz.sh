#!/usr/bin/env bash
# Builds the parsers' libFuzzer targets (tests/fuzz, clang with ASan + UBSan, a build directory of
# their own) and runs each for a fixed time on a copy of its committed corpus. Prints one line per
# target (executions, result) and exits 1 if any target found a crash, a leak or a hang; the inputs
# that did are left under the output directory (crash-*, leak-*, timeout-*, oom-*); without --out, a
# temporary one, removed when nothing was found. With --runs N (and --seed S) a target runs exactly
# N inputs from seed S, so that a run is repeatable (the test suite's runs); --seconds still caps it.
#   scripts/fuzz.sh [--seconds N] [--runs N] [--seed S] [--target NAME]... [--build DIR] [--out DIR]
#                   [--build-only] [--no-build]
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$(pwd)"
SECS=60
RUNS=""
SEED=""
BUILD="$ROOT/build-fuzz"
OUTDIR=""
TARGETS=()
BUILD_STEP=1
RUN_STEP=1
ALL=(extract launch_block expr problem_yaml config trace import)
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) SECS="$2"; shift ;;
    --runs) RUNS="$2"; shift ;;
    --seed) SEED="$2"; shift ;;
    --target) TARGETS+=("$2"); shift ;;
    --build) BUILD="$2"; shift ;;
    --out) OUTDIR="$2"; shift ;;
    --build-only) RUN_STEP=0 ;;
    --no-build) BUILD_STEP=0 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=("${ALL[@]}")
for t in "${TARGETS[@]}"; do
  [[ " ${ALL[*]} " == *" $t "* ]] || { echo "fuzz.sh: unknown target $t (${ALL[*]})" >&2; exit 2; }
done

if [ "$BUILD_STEP" = 1 ]; then
  command -v clang++ >/dev/null || { echo "fuzz.sh: clang++ not found (scripts/deps.sh installs it)" >&2; exit 2; }
  if [ ! -f "$BUILD/build.ninja" ]; then
    (cd "$ROOT" && cmake --preset fuzz -B "$BUILD" >/dev/null)
  fi
  cmake --build "$BUILD" -j "${JOBS:-2}" --target $(printf 'fuzz_%s ' "${TARGETS[@]}") >/dev/null
fi
[ "$RUN_STEP" = 1 ] || exit 0

KEEP=1
if [ -z "$OUTDIR" ]; then OUTDIR="$(mktemp -d)"; KEEP=0; fi  # removed at the end unless something was found
mkdir -p "$OUTDIR"
status=0
total=0
printf '%-14s %8s %14s  %s\n' target seconds executions result
for t in "${TARGETS[@]}"; do
  work="$OUTDIR/$t"
  rm -rf "$work"
  mkdir -p "$work/corpus"
  log="$work/fuzz.log"
  # New inputs go to the work corpus; the committed seeds are read, never written.
  set +e
  extra=()
  [ -n "$RUNS" ] && extra+=(-runs="$RUNS")
  [ -n "$SEED" ] && extra+=(-seed="$SEED")
  # The importer's seeds are the KernelBench-style generations the tests already hold.
  seeds=("$ROOT/tests/fuzz/corpus/$t")
  [ "$t" = import ] && seeds+=("$ROOT/tests/import/generations" "$ROOT/tests/kernelbench/generations"
                               "$ROOT/tests/kernelbench/v2/generations"
                               "$ROOT/tests/kernelbench/v3/kb-prompt" "$ROOT/tests/kernelbench/v3/kernrl-prompt")
  "$BUILD/fuzz_$t" "$work/corpus" "${seeds[@]}" -max_total_time="$SECS" -timeout=10 \
    -rss_limit_mb=2048 -max_len=20000 -print_final_stats=1 -artifact_prefix="$work/" \
    ${extra[@]+"${extra[@]}"} >"$log" 2>&1
  rc=$?
  set -e
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  execs=${execs:-0}
  total=$((total + execs))
  if [ $rc = 0 ]; then result=ok; else
    result="FOUND (exit $rc): $(ls "$work" | grep -E '^(crash|leak|timeout|oom|slow-unit)-' | head -3 | tr '\n' ' ')"
    status=1
    grep -m 3 -E 'ERROR: |SUMMARY: ' "$log" | sed 's/^/    /' || true
  fi
  printf '%-14s %8s %14s  %s\n' "$t" "$SECS" "$execs" "$result"
done
if [ "$status" = 0 ] && [ "$KEEP" = 0 ]; then
  rm -rf "$OUTDIR"
  echo "total executions: $total"
else
  echo "total executions: $total; logs and any findings: $OUTDIR"
fi
exit $status

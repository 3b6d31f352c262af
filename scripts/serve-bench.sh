#!/usr/bin/env bash
# Measures `kernrl serve` on a GPU machine: step latency (p50/p99) with 1, 8 and 64 concurrent
# OpenEnv sessions on one queue, kernels per minute, the result cache under a GRPO-like group, and
# crashing and hanging kernels mixed into the stream (every step must come back). Then grades the
# same kind of kernels with `kernrl grade-dir` for comparison, and runs `kernrl report` over the
# service's trace. Without a GPU (or with --compile-only) it measures the compile-only service.
#   scripts/serve-bench.sh [--build DIR] [--out DIR] [--sessions 1,8,64] [--steps N] [--gpus 0]
#                          [--compile-only] [--phases load,cache,faults]
# Results in --out (default ./serve-bench-results): serve-bench.md and .json, the server's log,
# trace and metrics, grade-dir's trace. Exit 1 when a step was lost or the server did not stop
# cleanly on SIGTERM.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD="${BUILD_DIR:-build-gpu}"
[ -x "$BUILD/kernrl" ] || BUILD=build
OUT="${OUT:-$PWD/serve-bench-results}"
SESSIONS=1,8,64
STEPS=4
PHASES=load,cache,faults
EXTRA=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build) BUILD="$2"; shift ;;
    --out) OUT="$2"; shift ;;
    --sessions) SESSIONS="$2"; shift ;;
    --steps) STEPS="$2"; shift ;;
    --phases) PHASES="$2"; shift ;;
    --gpus) EXTRA+=(--gpus "$2"); shift ;;
    --compile-only) EXTRA+=(--compile-only) ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
K="$BUILD/kernrl"
WORK="$(mktemp -d)"
SERVER=""
cleanup() {
  [ -n "$SERVER" ] && kill -0 "$SERVER" 2>/dev/null && kill -KILL "$SERVER"
  rm -rf "$WORK"
}
trap cleanup EXIT
log() { echo "== $(date -u +%H:%M:%S) $*"; }

# A hanging kernel costs its run timeout: 10 s here keeps the fault phase short.
printf 'timeouts:\n  run_s: 10\n' >"$WORK/config.yaml"
rm -f "$OUT/serve-trace.jsonl"
log "starting kernrl serve ${EXTRA[*]:-}"
"$K" serve --port 0 --trace "$OUT/serve-trace.jsonl" --config "$WORK/config.yaml" \
  --max-sessions 256 --max-queue 1024 "${EXTRA[@]}" 2>"$OUT/serve.log" &
SERVER=$!
PORT=""
for _ in $(seq 600); do
  PORT="$(sed -n 's/.*listening on http:\/\/[^:]*:\([0-9]*\).*/\1/p' "$OUT/serve.log" | head -1)"
  [ -n "$PORT" ] && break
  kill -0 "$SERVER" 2>/dev/null || { cat "$OUT/serve.log"; exit 1; }
  sleep 0.5
done
[ -n "$PORT" ] || { echo "the server did not start"; cat "$OUT/serve.log"; exit 1; }
URL="http://127.0.0.1:$PORT"
log "serving at $URL: $(tail -1 "$OUT/serve.log")"

rc=0
python3 scripts/serve_bench.py --url "$URL" --sessions "$SESSIONS" --steps "$STEPS" --phases "$PHASES" \
  --out "$OUT" | tee "$OUT/serve-bench.md" || rc=1
curl -s "$URL/metrics" >"$OUT/metrics.txt" 2>/dev/null || python3 -c "import urllib.request,sys; sys.stdout.write(urllib.request.urlopen('$URL/metrics').read().decode())" >"$OUT/metrics.txt"
python3 - "$OUT/serve-bench.json" <<'PY' || rc=1
import json, sys
r = json.load(open(sys.argv[1]))
lost = sum(s.get("lost", 0) for s in r["phases"].get("load", {}).values())
lost += r["phases"].get("faults", {}).get("lost", 0)
print(f"steps lost: {lost}")
sys.exit(1 if lost else 0)
PY

log "SIGTERM"
kill -TERM "$SERVER"
wait "$SERVER"
src=$?
SERVER=""
echo "server exit code on SIGTERM: $src" | tee -a "$OUT/serve-bench.md"
[ "$src" = 0 ] || rc=1

log "kernrl report over the service's trace"
"$K" report "$OUT/serve-trace.jsonl" >"$OUT/serve-report.md" 2>&1 || true
head -30 "$OUT/serve-report.md"

log "grade-dir over 32 variants of the same kernel, for comparison"
mkdir -p "$WORK/gd/L1_23_Softmax"
for i in $(seq 0 31); do
  { echo "// grade-dir $i $RANDOM$RANDOM"; cat problems/L1/23_Softmax/solution.cu; } >"$WORK/gd/L1_23_Softmax/s$i.cu"
done
GD_EXTRA=()
for e in "${EXTRA[@]}"; do [ "$e" = --compile-only ] && GD_EXTRA+=(--compile-only); done
rm -f "$OUT/grade-dir.jsonl"
start=$(date +%s.%N)
"$K" grade-dir "$WORK/gd" --out "$OUT/grade-dir.jsonl" --quiet --no-resume --config "$WORK/config.yaml" "${GD_EXTRA[@]}" >/dev/null 2>&1
end=$(date +%s.%N)
python3 - "$OUT/grade-dir.jsonl" "$start" "$end" "$OUT/serve-bench.json" <<'PY' | tee -a "$OUT/serve-bench.md"
import json, statistics, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
wall = float(sys.argv[3]) - float(sys.argv[2])
ms = sorted(r["wall_ms"] for r in recs)
print(f"\ngrade-dir: {len(recs)} kernels in {wall:.1f} s = {len(recs) / wall * 60:.1f} kernels/min, "
      f"{wall / len(recs) * 1000:.0f} ms per kernel; record wall_ms p50 {statistics.median(ms):.0f} ms")
serve = json.load(open(sys.argv[4]))["phases"].get("load", {}).get("1")
if serve and serve["p50_s"] is not None:
    print(f"serve, 1 session: step p50 {serve['p50_s'] * 1000:.0f} ms "
          f"({serve['p50_s'] * 1000 - wall / len(recs) * 1000:+.0f} ms against grade-dir's per-kernel time)")
PY
log "results in $OUT"
exit $rc

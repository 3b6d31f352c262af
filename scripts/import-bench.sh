#!/usr/bin/env bash
# A KernelBench import corpus (default tests/import/generations): converts every generation with
# `kernrl import-kernelbench`, then grades the .py files with `kernrl grade-dir` (which converts
# them the same way and records the unconvertible ones as format_error with the reason), and prints
# the conversion rate and the counts by status, overall and for the converted files.
#   scripts/import-bench.sh [--compile-only] [--build DIR] [--out DIR] [--gpus 0,1]
#                           [--corpus DIR] [--suite SUITE_DIR]
# On a machine without a GPU use --compile-only (converted files then reach `compiled`).
# --suite grades against a suite built from KernelBench (`kernrl suite add kernelbench`), e.g.
# for tests/kernelbench/v3/kb-prompt, answers to KernelBench's own prompt for its problems.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=build
OUTDIR="${OUT:-$(mktemp -d)}"
EXTRA=()
CORPUS=tests/import/generations
SUITE=()
while [ $# -gt 0 ]; do
  case "$1" in
    --compile-only) EXTRA+=(--compile-only) ;;
    --out) OUTDIR="$2"; shift ;;
    --build) BUILD="$2"; shift ;;
    --gpus) EXTRA+=(--gpus "$2"); shift ;;
    --corpus) CORPUS="$2"; shift ;;
    --suite) SUITE=(--suite "$2"); shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
mkdir -p "$OUTDIR"

"$BUILD/kernrl" "${SUITE[@]}" import-kernelbench "$CORPUS" --out "$OUTDIR/converted" --quiet 2>"$OUTDIR/import.log"
rc=$?
if [ "$rc" -gt 1 ]; then cat "$OUTDIR/import.log"; exit 2; fi

TRACE="$OUTDIR/import-bench.jsonl"
rm -f "$TRACE"
"$BUILD/kernrl" "${SUITE[@]}" grade-dir "$CORPUS" --out "$TRACE" --run import-bench --no-resume --quiet "${EXTRA[@]}" >/dev/null
rc=$?
if [ "$rc" -gt 1 ]; then echo "grade-dir failed (exit $rc)" >&2; exit 2; fi

python3 - "$TRACE" "$OUTDIR/converted/import-report.jsonl" <<'PY'
import collections, json, sys
recs = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
rows = [json.loads(l) for l in open(sys.argv[2], encoding="utf-8")]
n = len(rows)
conv = sum(r["converted"] for r in rows)
print(f"generations: {n}; converted: {conv} ({100.0 * conv / max(n, 1):.1f}%)")
cats = collections.Counter(r["category"] for r in rows if not r["converted"])
for c, k in sorted(cats.items()):
    print(f"  not converted, {c}: {k}")
print(f"grade-dir records: {len(recs)}")
by_status = collections.Counter(r["status"] for r in recs)
print("status (all generations): " + ", ".join(f"{s} {k}" for s, k in sorted(by_status.items())))
converted = [r for r in recs if r.get("converted")]
by_status = collections.Counter(r["status"] for r in converted)
print(f"status (the {len(converted)} converted): " +
      ", ".join(f"{s} {k}" for s, k in sorted(by_status.items())))
for r in converted:
    if r["status"] not in ("correct", "compiled"):
        msg = ((r.get("error") or {}).get("message") or "").splitlines()[0][:120] if r.get("error") else ""
        print(f"  {r['status']}: {r['file'].split('/')[-1]}: {msg}")
PY
echo "trace: $TRACE"

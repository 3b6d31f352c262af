#!/usr/bin/env bash
# Every bundled solution graded on the GPU must be `correct`: tests/gpu/solutions.sh BUILD_DIR
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
BUILD="$1"
D="$(mktemp -d)"
trap 'rm -rf "$D"' EXIT
for d in "$ROOT"/problems/L*/*/; do
  id="$(basename "$(dirname "$d")")_$(basename "$d")"
  mkdir -p "$D/in/$id" && cp "$d/solution.cu" "$D/in/$id/solution.cu"
done
"$BUILD/kernrl" grade-dir "$D/in" --out "$D/t.jsonl" --run solutions --no-resume --quiet || exit 1
python3 - "$D/t.jsonl" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
bad = [r for r in recs if r["status"] != "correct"]
for r in bad:
    print(f"{r.get('problem')}: {r['status']}: {(r.get('error') or {}).get('message', '')[:300]}")
print(f"{len(recs) - len(bad)}/{len(recs)} bundled solutions correct")
sys.exit(1 if bad or not recs else 0)
PY

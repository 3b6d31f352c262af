#!/usr/bin/env bash
# The KernelBench import corpus (tests/import/generations, expectations in manifest.json):
#   1. `kernrl import-kernelbench` gives every file its expected outcome (converted, or the expected
#      category with a reason naming the obstacle);
#   2. every converted kernel file compiles (`kernrl eval --compile-only`);
#   3. `kernrl grade-dir --compile-only` on the .py files themselves records every one of them:
#      converted ones `compiled`, Triton ones `compiled` through their host wrapper's plan, the
#      others `format_error` with the reason, none skipped.
#   tests/import/import_test.sh KERNRL
set -u
KERNRL="$1"
HERE="$(cd "$(dirname "$0")" && pwd)"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
export KERNRL_CACHE="${KERNRL_CACHE:-$TMP/cache}"

"$KERNRL" import-kernelbench "$HERE/generations" --out "$TMP/out" --json >"$TMP/rows.jsonl" 2>"$TMP/err"
rc=$?
if [ "$rc" != 1 ]; then
  echo "FAIL import-kernelbench exit $rc (expected 1: some files are not convertible)"
  cat "$TMP/err"
  exit 1
fi

fail=0
python3 - "$HERE/manifest.json" "$TMP/rows.jsonl" <<'PY' || fail=1
import json, os, sys
manifest = json.load(open(sys.argv[1]))
rows = {os.path.basename(r["file"]): r for r in map(json.loads, open(sys.argv[2], encoding="utf-8"))}
bad = 0
for e in manifest:
    name = os.path.basename(e["file"])
    r = rows.pop(name, None)
    if r is None:
        print(f"FAIL {name}: no row"); bad += 1; continue
    if r["problem"] != e["problem"]:
        print(f"FAIL {name}: problem {r['problem']}, expected {e['problem']}"); bad += 1
    if e["expect"] == "converted":
        if not r["converted"]:
            print(f"FAIL {name}: not converted: {r['reason']}"); bad += 1
    elif r["converted"] or r["category"] != e["expect"] or e["reason"] not in r["reason"]:
        print(f"FAIL {name}: expected {e['expect']} ({e['reason']}), got "
              f"{'converted' if r['converted'] else r['category'] + ': ' + r['reason']}"); bad += 1
for name in rows:
    print(f"FAIL {name}: in the corpus but not in manifest.json"); bad += 1
n = len(manifest)
c = sum(e["expect"] == "converted" for e in manifest)
print(f"{'ok  ' if not bad else 'FAIL'} conversion outcomes: {n - bad}/{n} as expected; {c}/{n} converted")
sys.exit(1 if bad else 0)
PY

# Every converted file compiles.
compiled=0
for f in "$TMP"/out/*.cu; do
  if "$KERNRL" eval "$f" --compile-only --json >"$TMP/rec" 2>&1 && grep -q '"status":"compiled"' "$TMP/rec"; then
    compiled=$((compiled + 1))
  else
    echo "FAIL $(basename "$f") does not compile:"
    head -c 2000 "$TMP/rec" | sed 's/^/    /'
    fail=1
  fi
done
echo "ok   $compiled converted files compile"

# grade-dir grades the .py generations through the converter and records every one. A Triton
# generation is a Triton answer whose plan comes from its host wrapper: compiled with the stand-in
# Triton of tests/triton/stand_in.
cat >"$TMP/triton.yaml" <<EOF
triton: {python: /usr/bin/python3, path: "$HERE/../triton/stand_in", timeout_s: 20, pool: 1}
EOF
"$KERNRL" grade-dir "$HERE/generations" --compile-only --out "$TMP/trace.jsonl" --run import --quiet \
  --config "$TMP/triton.yaml" >/dev/null 2>"$TMP/grade-err"
rc=$?
if [ "$rc" != 0 ]; then
  echo "FAIL grade-dir exit $rc"; cat "$TMP/grade-err"; fail=1
fi
python3 - "$HERE/manifest.json" "$TMP/trace.jsonl" <<'PY' || fail=1
import json, os, sys
manifest = json.load(open(sys.argv[1]))
recs = {os.path.basename(r["file"]): r for r in map(json.loads, open(sys.argv[2], encoding="utf-8"))}
bad = 0
for e in manifest:
    name = os.path.basename(e["file"])
    r = recs.get(name)
    if r is None:
        print(f"FAIL grade-dir skipped {name}"); bad += 1; continue
    if r["problem"] != e["problem"]:
        print(f"FAIL grade-dir {name}: problem {r['problem']}"); bad += 1
    if e["expect"] == "converted":
        if r["status"] != "compiled" or r.get("converted", {}).get("from") != "kernelbench":
            print(f"FAIL grade-dir {name}: {r['status']} {r.get('error')}"); bad += 1
    elif e["reason"] == "Triton":
        # A Triton generation is graded as a Triton kernel file: without a launch block, its
        # launch plan is derived from its host wrapper (ModelNew.forward).
        msg = (r.get("error") or {}).get("message", "")
        if r["status"] != "compiled" or r.get("language") != "triton" or "wrapper_plan" not in r:
            print(f"FAIL grade-dir {name}: {r['status']} {msg}"); bad += 1
    else:
        msg = (r.get("error") or {}).get("message", "")
        if r["status"] != "format_error" or e["reason"] not in msg or "could not convert" not in msg:
            print(f"FAIL grade-dir {name}: {r['status']} {msg}"); bad += 1
print(f"{'ok  ' if not bad else 'FAIL'} grade-dir recorded {len(recs)}/{len(manifest)} generations with their outcome")
sys.exit(1 if bad else 0)
PY

# eval on a .py: converted and compiled (exit 0); an unconvertible one is a format_error (exit 1).
"$KERNRL" eval "$HERE/generations/level_1_problem_23_sample_0_kernel.py" --compile-only >/dev/null 2>&1
[ $? = 0 ] && echo "ok   eval .py converts and compiles" || { echo "FAIL eval .py"; fail=1; }
"$KERNRL" eval "$HERE/generations/level_2_problem_17_sample_0_kernel.py" --compile-only --json >"$TMP/rec" 2>/dev/null
rc=$?
if [ "$rc" = 1 ] && grep -q 'could not convert this KernelBench-style module into a kernel file: PyTorch op' "$TMP/rec"; then
  echo "ok   eval .py that cannot be converted says why"
else
  echo "FAIL eval unconvertible .py: exit $rc"; head -c 1000 "$TMP/rec"; fail=1
fi
exit $fail

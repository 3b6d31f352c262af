#!/usr/bin/env bash
# kernrl export end to end on CPU: a compile-only grade-dir trace joined with its sources; every
# row valid JSON on one line with the prompt `kernrl show --prompt` prints; files gone or changed
# since grading get answer null and a reason; errors exit 2.
set -u
KERNRL="$1"
source "$(dirname "$0")/lib.sh"
G="$TMP/gen"
mkdir -p "$G/L1_23_Softmax"
cp "$ROOT/problems/L1/23_Softmax/solution.cu" "$G/L1_23_Softmax/a.cu"
cp "$ROOT/problems/L1/23_Softmax/solution.cu" "$G/L1_23_Softmax/b.cu"
cp "$ROOT/problems/L1/23_Softmax/solution.cu" "$G/L1_23_Softmax/c.cu"
printf 'no problem named here\n' >"$G/stray.md"
"$KERNRL" grade-dir "$G" --compile-only --quiet --out "$TMP/t.jsonl" >/dev/null 2>&1
printf '// edited\n' >>"$G/L1_23_Softmax/b.cu"
rm "$G/L1_23_Softmax/c.cu"
"$KERNRL" show L1_23_Softmax --prompt >"$TMP/prompt.txt"
"$KERNRL" export "$TMP/t.jsonl" --out "$TMP/out/rows.jsonl" 2>"$TMP/err"
rc=$?
[ "$rc" = 0 ] && echo "ok   export exit 0" || { echo "FAIL export exit $rc"; cat "$TMP/err"; fail=1; }
grep -q "3 row(s), 1 with the answer; 2 without: 1 file not found; 1 the file changed" "$TMP/err" \
  && echo "ok   summary says what is missing" || { echo "FAIL summary"; cat "$TMP/err"; fail=1; }
grep -q "1 record(s) name no problem" "$TMP/err" && echo "ok   unattributed counted" || { echo "FAIL unattributed"; fail=1; }
python3 - "$TMP/out/rows.jsonl" "$TMP/prompt.txt" "$G/L1_23_Softmax/a.cu" <<'PY' || fail=1
import json, sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
assert lines[-1] == "", "rows end with a newline"
rows = [json.loads(l) for l in lines[:-1]]
prompt = open(sys.argv[2], encoding="utf-8").read()
answer = open(sys.argv[3], encoding="utf-8").read()
by = {r["file"].split("/")[-1]: r for r in rows}
ok = len(rows) == 3 and all(r["prompt"] == prompt for r in rows)
ok &= by["a.cu"]["answer"] == answer and by["a.cu"]["status"] == "compiled"
ok &= by["b.cu"]["answer"] is None and "changed" in by["b.cu"]["answer_missing"]
ok &= by["c.cu"]["answer"] is None and by["c.cu"]["answer_missing"].startswith("file not found")
ok &= all(set(r) >= {"problem", "prompt", "answer", "status", "speedup", "reward", "feedback"} for r in rows)
print(("ok   " if ok else "FAIL ") + "rows: one per sample, prompt as show --prompt, answers checked by SHA-256")
sys.exit(0 if ok else 1)
PY
"$KERNRL" export "$TMP/t.jsonl" --out /dev/full 2>"$TMP/err"
[ $? = 2 ] && grep -q "cannot write" "$TMP/err" && echo "ok   write failure: exit 2" || { echo "FAIL write failure"; fail=1; }
"$KERNRL" export "$TMP/missing.jsonl" --out "$TMP/x.jsonl" 2>/dev/null
[ $? = 2 ] && echo "ok   no readable trace: exit 2" || { echo "FAIL no trace"; fail=1; }
"$KERNRL" export "$TMP/t.jsonl" --out "$TMP/x.jsonl" --run nope 2>/dev/null
[ $? = 2 ] && echo "ok   unknown --run: exit 2" || { echo "FAIL --run"; fail=1; }
exit $fail

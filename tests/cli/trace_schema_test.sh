#!/usr/bin/env bash
# The records the CLI writes, without a GPU, against docs/trace-format.md: compile-only from eval
# (compiled, compile_error, launch_error, format_error, unattributed, a converted KernelBench
# module), grade-dir and serve --stdio; and eval's records of a kernel that ran, crashed and hung on
# the stand-in worker (tests/stand_in_worker.py). Every key of every record, and of its error, compile, work, grader,
# problem_unknown and converted objects, is a documented field; the fields every record has are
# there; every status is a documented one. Then `kernrl report` reads them all back.
set -u
KERNRL="$1"
source "$(dirname "$0")/lib.sh"
A="$ROOT/tests/adversarial"
OUT="$TMP/records.jsonl"
: >"$OUT"
for f in "$ROOT/problems/L1/23_Softmax/solution.cu" "$A/L1_23_Softmax/compile_error.cu" \
         "$A/L1_23_Softmax/too_many_threads.cu" "$A/L1_23_Softmax/unknown_tensor.cu" \
         "$A/L1_23_Softmax/compile_log_flood.cu" "$A/unattributed/no_problem_named.cu" \
         "$A/unattributed/unknown_problem.cu" "$TMP/missing.cu" \
         "$ROOT/tests/import/generations/level_1_problem_23_sample_0_kernel.py"; do
  "$KERNRL" eval "$f" --compile-only --json --seed 1 2>/dev/null >>"$OUT"
done
G="$TMP/gen"
mkdir -p "$G/L1_23_Softmax" "$G/L1_26_GELU_"
cp "$ROOT/problems/L1/23_Softmax/solution.cu" "$G/L1_23_Softmax/sample_0.cu"
cp "$A/L1_23_Softmax/compile_error.cu" "$G/L1_23_Softmax/sample_1.cu"
cp "$ROOT/problems/L1/26_GELU_/solution.cu" "$G/L1_26_GELU_/sample_0.cu"
printf 'no problem named here\n' >"$G/stray.md"
"$KERNRL" grade-dir "$G" --compile-only --quiet --out "$TMP/gen.jsonl" >/dev/null 2>&1
cat "$TMP/gen.jsonl" >>"$OUT"
python3 - "$ROOT/problems/L1/23_Softmax/solution.cu" >"$TMP/req.jsonl" <<'PY'
import json, sys
src = open(sys.argv[1]).read()
print(json.dumps({"id": 1, "problem": "L1_23_Softmax", "source": src, "sample": 2}))
print(json.dumps({"id": 2, "source": "no code here"}))
print(json.dumps({"id": 3, "problem": "L1_23_Softmax", "source": src, "sample": 2}))
PY
"$KERNRL" serve --stdio --compile-only <"$TMP/req.jsonl" 2>/dev/null >"$TMP/serve.jsonl"
python3 - "$TMP/serve.jsonl" >>"$OUT" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    j = json.loads(line)
    if "record" in j:
        print(json.dumps(j["record"]))
PY
# On the stand-in worker: records of kernels that ran (correct), crashed and hung.
K="$(stand_in_kernrl)"
printf 'timeouts:\n  run_s: 2\n' >"$TMP/config.yaml"
for f in "$ROOT/problems/L1/23_Softmax/solution.cu" "$TMP/crash.cu" "$TMP/hang.cu"; do
  "$K" eval "$f" --json --seed 1 --config "$TMP/config.yaml" 2>/dev/null >>"$OUT"
done

python3 - "$OUT" "$ROOT/docs/trace-format.md" <<'PY' || fail=1
import json, re, sys
doc = open(sys.argv[2], encoding="utf-8").read()
fields_part = doc[doc.index("## Fields"):doc.index("\n#", doc.index("## Fields") + 1)]
rows = dict(re.findall(r"^\| `([a-z_0-9]+)` \|(.*)$", fields_part, re.M))
status_part = doc[doc.index("## Statuses"):]
statuses = set(re.findall(r"^\| `([a-z_]+)` \|", status_part, re.M))
always = ["schema", "kernel_format", "run", "sample", "file", "problem", "level", "source_sha256",
          "status", "ran", "error", "compile", "correctness", "timing", "speedup", "reward",
          "reward_preset", "feedback", "versions", "seed", "timestamp", "wall_ms", "grader"]
records = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8") if l.strip()]
problems = []
seen = set()
for r in records:
    who = f"{r.get('file')} ({r.get('status')})"
    seen.add(r.get("status"))
    for k in r:
        if k not in rows:
            problems.append(f"{who}: field '{k}' is not in docs/trace-format.md")
    for k in always:
        if k not in r:
            problems.append(f"{who}: field '{k}' missing")
    if r.get("status") not in statuses:
        problems.append(f"{who}: status {r.get('status')!r} is not documented")
    if r.get("problem") is None and "problem_unknown" not in r:
        problems.append(f"{who}: problem null without problem_unknown")
    for obj in ["error", "compile", "work", "grader", "problem_unknown", "converted"]:
        if isinstance(r.get(obj), dict):
            for k in r[obj]:
                if not re.search(r"\b" + re.escape(k) + r"\b", rows[obj]):
                    problems.append(f"{who}: {obj}.{k} is not in the row of `{obj}`")
want = {"compiled", "compile_error", "launch_error", "format_error", "correct", "runtime_error",
        "timeout"}
if not want <= seen:
    problems.append(f"statuses seen {sorted(seen)}, expected at least {sorted(want)}")
if not any("converted" in r for r in records):
    problems.append("no record of a converted KernelBench module")
if len(records) < 15:
    problems.append(f"only {len(records)} records")
for p in problems:
    print("FAIL " + p)
print(f"ok   {len(records)} records, statuses {sorted(seen)}: every field documented"
      if not problems else f"FAIL {len(problems)} problem(s)")
sys.exit(1 if problems else 0)
PY

if "$KERNRL" report "$OUT" --format json >"$TMP/report.json" 2>"$TMP/report.err"; then
  echo "ok   kernrl report reads every record"
else
  echo "FAIL kernrl report"; cat "$TMP/report.err"; fail=1
fi
exit $fail

#!/usr/bin/env bash
# KernelBench outputs end to end on CPU: grade-dir --kernelbench-json / --kernelbench-dir and
# `report --format kernelbench --out DIR` write KernelBench's run folders (one level each, numeric
# key order, every sample present), and say so when they cannot.
set -u
KERNRL="$1"
source "$(dirname "$0")/lib.sh"

# Two levels, two samples of one problem, problems 10 and 9 (numeric order), a problem kernrl does
# not have (L1_999), a file naming no problem.
G="$TMP/gen"
mkdir -p "$G"
SOFTMAX="$ROOT/problems/L1/23_Softmax/solution.cu"
for s in 0 1; do cp "$SOFTMAX" "$G/level_1_problem_23_sample_${s}_kernel.cu"; done
cp "$ROOT/problems/L1/9_Tall_skinny_matrix_multiplication_/solution.cu" "$G/level_1_problem_9_sample_0_kernel.cu"
cp "$ROOT/problems/L2/40_Matmul_Scaling_ResidualAdd/solution.cu" "$G/level_2_problem_40_sample_0_kernel.cu"
printf 'no kernel here\n' >"$G/level_1_problem_999_sample_0_kernel.md"
printf 'no kernel, no problem\n' >"$G/notes.txt"

check "--kernelbench-json over two levels: exit 2" 2 "$KERNRL" grade-dir "$G" --compile-only --quiet \
  --out "$TMP/a.jsonl" --kernelbench-json "$TMP/a/eval_results.json"
has "says why and what to use" "span levels 1, 2.*--kernelbench-dir" "$TMP/err"
[ "$(wc -l <"$TMP/a.jsonl")" = 6 ] && echo "ok   the records are written all the same" || { echo "FAIL records"; fail=1; }

check "--kernelbench-json with --level 1" 0 "$KERNRL" grade-dir "$G" --compile-only --quiet --no-resume \
  --out "$TMP/b.jsonl" --level 1 --kernelbench-json "$TMP/b/eval_results.json"
has "unattributed counted" "1 record(s) name no problem.*unattributed.json" "$TMP/err"
[ -s "$TMP/b/pass_at_k_results.json" ] && echo "ok   pass_at_k_results.json beside it" || { echo "FAIL no pass@k file"; fail=1; }

check "--kernelbench-dir" 0 "$KERNRL" grade-dir "$G" --compile-only --quiet --no-resume --run run1 \
  --out "$TMP/c.jsonl" --kernelbench-dir "$TMP/c"
check "report --format kernelbench" 0 "$KERNRL" report "$TMP/c.jsonl" --format kernelbench --out "$TMP/d"
has "report names the folders" "run1_level_2/eval_results.json" "$TMP/out"
cmp -s "$TMP/c/run1_level_1/eval_results.json" "$TMP/d/run1_level_1/eval_results.json" \
  && echo "ok   report writes what grade-dir wrote" || { echo "FAIL report and grade-dir differ"; fail=1; }
check "report --format kernelbench needs --out" 2 "$KERNRL" report "$TMP/c.jsonl" --format kernelbench
check "report --out needs --format kernelbench" 2 "$KERNRL" report "$TMP/c.jsonl" --out "$TMP/e"
printf 'x' >"$TMP/file"
check "report: unwritable --out is exit 2" 2 "$KERNRL" report "$TMP/c.jsonl" --format kernelbench --out "$TMP/file/sub"
has "names the file" "cannot write .*eval_results.json" "$TMP/err"
check "report: unknown --run is exit 2" 2 "$KERNRL" report "$TMP/c.jsonl" --format kernelbench --out "$TMP/f" --run nope

python3 - "$TMP" <<'PY' || fail=1
import json, os, sys
tmp = sys.argv[1]
bad = 0
def expect(cond, what):
    global bad
    print(("ok   " if cond else "FAIL ") + what)
    bad += not cond
text = open(os.path.join(tmp, "b", "eval_results.json")).read()
d = json.loads(text)
expect(list(d) == sorted(d, key=int) == ["9", "23", "999"], "numeric key order: " + ",".join(d))
expect(text.startswith('{\n    "9": [\n        {\n            "sample_id": 0,'), "json.dump(indent=4) layout")
for k, samples in d.items():
    for s in samples:
        expect(list(s) == ["sample_id", "compiled", "correctness", "metadata", "runtime", "runtime_stats"],
               f"problem {k} sample {s['sample_id']}: KernelBench's keys in order")
expect([s["sample_id"] for s in d["23"]] == [0, 1], "every sample of problem 23")
expect(d["999"][0]["compiled"] is False and "compilation_error" in d["999"][0]["metadata"],
       "the unknown problem is present, not compiled, with its error")
expect(all(s["compiled"] for s in d["23"]), "compile-only samples are compiled")
pk = json.load(open(os.path.join(tmp, "b", "pass_at_k_results.json")))
expect(list(pk) == ["averages", "metadata", "problems"] and pk["problems"]["23"]["total_samples"] == 2,
       "pass_at_k_results.json shape")
un = json.load(open(os.path.join(tmp, "b", "unattributed.json")))
expect([os.path.basename(r["file"]) for r in un["gen"]] == ["notes.txt"], "unattributed.json lists notes.txt")
expect(sorted(os.listdir(os.path.join(tmp, "c"))) == ["run1_level_1", "run1_level_2", "unattributed.json"],
       "one folder per level")
sys.exit(1 if bad else 0)
PY
exit $fail

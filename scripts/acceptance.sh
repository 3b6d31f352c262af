#!/usr/bin/env bash
# The acceptance corpus (tests/acceptance): answers written from `kernrl show --prompt` alone, in the
# styles models produce, each with the status it must get (tests/acceptance/manifest.json). Grades
# them all with `kernrl grade-dir` and prints a table; exit 1 if any answer gets another status.
# A rejection by the grader (format_error, compile_error, launch_error) of an answer expected to be
# correct is counted as grader-caused: that number must be 0.
#   scripts/acceptance.sh [--compile-only] [--build DIR] [--out DIR] [--corpus DIR]
# --corpus names another corpus laid out the same way (default tests/acceptance; the Triton corpus
# is tests/triton/corpus).
# With --compile-only (no GPU), an answer expected `correct` must reach `compiled`.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=build
CORPUS=tests/acceptance
OUTDIR="${OUT:-$(mktemp -d)}"
EXTRA=()
while [ $# -gt 0 ]; do
  case "$1" in
    --compile-only) EXTRA+=(--compile-only) ;;
    --out) OUTDIR="$2"; shift ;;
    --build) BUILD="$2"; shift ;;
    --corpus) CORPUS="$2"; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
mkdir -p "$OUTDIR"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
# grade-dir takes the problem from each answer's folder name, as a benchmark run lays files out.
python3 - "$WORK" "$CORPUS" <<'PY'
import json, os, shutil, sys
work, corpus = sys.argv[1], sys.argv[2]
for e in json.load(open(os.path.join(corpus, "manifest.json"))):
    d = os.path.join(work, e["problem"])
    os.makedirs(d, exist_ok=True)
    shutil.copyfile(os.path.join(corpus, e["file"]), os.path.join(d, os.path.basename(e["file"])))
PY
TRACE="$OUTDIR/acceptance.jsonl"
rm -f "$TRACE"
"$BUILD/kernrl" grade-dir "$WORK" --out "$TRACE" --run acceptance --quiet --no-resume "${EXTRA[@]}"
rc=$?
python3 - "$TRACE" "$rc" "${EXTRA[*]:-}" "$CORPUS" <<'PY'
import json, os, sys
trace, rc, extra, corpus = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
compile_only = "--compile-only" in extra
manifest = json.load(open(os.path.join(corpus, "manifest.json")))
got = {}
for line in open(trace, encoding="utf-8"):
    r = json.loads(line)
    got[os.path.basename(r["file"])] = r
grader_caused = {"format_error", "compile_error", "launch_error"}
bad, rejected = 0, 0
print("| answer | problem | expected | got | detail |")
print("| --- | --- | --- | --- | --- |")
for e in manifest:
    name = os.path.basename(e["file"])
    want = e["expect"]
    if compile_only and want == "correct":
        want = "compiled"
    r = got.get(name)
    status = r["status"] if r else "MISSING"
    detail = ""
    if r and r.get("error"):
        detail = (r["error"].get("message") or "")[:140].replace("|", "/").replace("\n", " ")
    ok = status == want
    bad += not ok
    rejected += (e["expect"] == "correct" and status in grader_caused)
    print(f"| {name} | {e['problem']} | {want} | {status}{'' if ok else ' **'} | {detail} |")
print()
print(f"{len(manifest)} answers, {len(manifest) - bad} as expected, {bad} not; "
      f"rejected by the grader although expected correct: {rejected}")
sys.exit(1 if bad or rc not in (0, 1) else 0)
PY

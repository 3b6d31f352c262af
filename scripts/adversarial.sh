#!/usr/bin/env bash
# Runs the adversarial suite (tests/adversarial/<problem>/<attack>.cu, each naming its expected
# status in a `// expect: STATUS[|STATUS]` first line) through `kernrl grade-dir` and prints a table:
# attack, problem, expected, got, and whether the grader went on. Exit 1 if any attack got another
# status or a record is missing.
#   scripts/adversarial.sh [--compile-only] [--out DIR] [--build DIR]
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=build
OUTDIR="${OUT:-$(mktemp -d)}"
EXTRA=()
while [ $# -gt 0 ]; do
  case "$1" in
    --compile-only) EXTRA+=(--compile-only) ;;
    --out) OUTDIR="$2"; shift ;;
    --build) BUILD="$2"; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
mkdir -p "$OUTDIR"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
cp -r tests/adversarial/. "$WORK/"
# A 10 MB source file, generated rather than committed.
{ echo "// expect: format_error"; echo "// a 10 MB source file"; head -c 10485760 /dev/zero | tr '\0' ' '; } >"$WORK/L1_23_Softmax/ten_megabytes.cu"
cat >"$WORK/config.yaml" <<'YAML'
timeouts:
  compile_s: 20
  run_s: 30
YAML
TRACE="$OUTDIR/adversarial.jsonl"
rm -f "$TRACE"
"$BUILD/kernrl" grade-dir "$WORK" --out "$TRACE" --run adversarial --config "$WORK/config.yaml" --quiet --no-resume "${EXTRA[@]}"
rc=$?
python3 - "$WORK" "$TRACE" "$rc" "${EXTRA[*]:-}" <<'PY'
import json, os, sys
work, trace, rc, extra = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
compile_only = "--compile-only" in extra
expected = {}
for root, _, files in os.walk(work):
    for f in files:
        if f.endswith(".cu"):
            p = os.path.join(root, f)
            with open(p, errors="replace") as fh:
                first = fh.readline()
            if first.startswith("// expect:"):
                expected[p] = first.split(":", 1)[1].strip().split("|")
records = {}
for line in open(trace):
    try:
        r = json.loads(line)
        records[r["file"]] = r
    except Exception:
        pass
bad = 0
rows = []
for p, want in sorted(expected.items()):
    r = records.get(p)
    got = r["status"] if r else "MISSING"
    ok_want = want
    if compile_only and not set(want) & {"format_error", "compile_error"}:
        ok_want = ["compiled"]  # nothing runs: only the CPU stages can be judged
        if "launch_error" in want:
            ok_want.append("launch_error")  # a configuration that cannot run is caught before the GPU
    ok = got in ok_want
    bad += not ok
    rows.append((os.path.basename(p)[:-3], os.path.basename(os.path.dirname(p)), "|".join(ok_want), got, "yes" if r else "NO", "ok" if ok else "FAIL"))
w = [max(len(x[i]) for x in rows + [("attack", "problem", "expected", "got", "went on", "")]) for i in range(6)]
fmt = "  ".join("{:<%d}" % n for n in w)
print(fmt.format("attack", "problem", "expected", "got", "went on", ""))
for row in rows:
    print(fmt.format(*row))
print(f"\n{len(rows) - bad}/{len(rows)} attacks got their expected status; {len(records)} records for {len(expected)} files; grade-dir exit {rc}")
sys.exit(1 if bad or rc != 0 or len(records) != len(expected) else 0)
PY

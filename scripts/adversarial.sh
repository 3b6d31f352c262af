#!/usr/bin/env bash
# Runs the adversarial suite (tests/adversarial/<problem>/<attack>.cu, each naming its expected
# status in a `// expect: STATUS[|STATUS]` first line) through `kernrl grade-dir` and prints a table:
# attack, problem, expected, got, and whether the grader went on. Optional lines after the first:
#   // expect-unattributed: REASON   the record has problem null and problem_unknown.reason REASON
#   // expect-cut: FIELD             the record notes a cut of FIELD (e.g. error.log), i.e. FIELD_cut_bytes
# Some attacks are generated rather than committed (a 10 MB file, an unreadable file, a symlink
# loop, a non-UTF-8 file name); their expectations are in $WORK/.expect. The suite runs as
# --writers concurrent grade-dir shards appending to one trace file (default 2 with --compile-only,
# else 1), so the trace must also show every record whole, exactly once, and no line over 128 KiB.
# Exit 1 if any attack got another status, a record is missing or duplicated, or a line is broken.
#   scripts/adversarial.sh [--compile-only] [--out DIR] [--build DIR] [--writers N]
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=build
OUTDIR="${OUT:-$(mktemp -d)}"
EXTRA=()
WRITERS=""
while [ $# -gt 0 ]; do
  case "$1" in
    --compile-only) EXTRA+=(--compile-only) ;;
    --out) OUTDIR="$2"; shift ;;
    --build) BUILD="$2"; shift ;;
    --writers) WRITERS="$2"; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
if [ -z "$WRITERS" ]; then
  case " ${EXTRA[*]:-} " in *" --compile-only "*) WRITERS=2 ;; *) WRITERS=1 ;; esac
fi
mkdir -p "$OUTDIR"
WORK="$(mktemp -d)"
trap 'chmod -R u+rwX "$WORK" 2>/dev/null; rm -rf "$WORK"' EXIT
cp -r tests/adversarial/. "$WORK/"
# A 10 MB source file, generated rather than committed.
{ echo "// expect: format_error"; echo "// a 10 MB source file"; head -c 10485760 /dev/zero | tr '\0' ' '; } >"$WORK/L1_23_Softmax/ten_megabytes.cu"
# A file that cannot be read: one record, unattributed, and the run goes on. Root reads anything,
# so as root kernrl runs without the capabilities that bypass file permissions.
cp tests/adversarial/L1_23_Softmax/zeros.cu "$WORK/L1_23_Softmax/unreadable.cu"
chmod 000 "$WORK/L1_23_Softmax/unreadable.cu"
printf 'L1_23_Softmax/unreadable.cu\tformat_error\tunreadable\n' >"$WORK/.expect"
# A symlink loop named like a kernel: the same unreadable record, never an abort.
ln -s symlink_loop.cu "$WORK/L1_23_Softmax/symlink_loop.cu"
printf 'L1_23_Softmax/symlink_loop.cu\tformat_error\tunreadable\n' >>"$WORK/.expect"
# A file name that is not UTF-8 (Latin-1 "é"): graded normally; its record names it with \xe9.
cp problems/L1/23_Softmax/solution.cu "$WORK/L1_23_Softmax/latin1_name_$(printf '\351').cu"
printf 'L1_23_Softmax/latin1_name_\351.cu\tcorrect\t\n' >>"$WORK/.expect"
RUNAS=()
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  RUNAS=(setpriv --bounding-set -dac_override,-dac_read_search)
fi
cat >"$WORK/config.yaml" <<'YAML'
timeouts:
  compile_s: 20
  run_s: 30
YAML
TRACE="$OUTDIR/adversarial.jsonl"
rm -f "$TRACE"
rc=0
pids=()
for ((i = 0; i < WRITERS; i++)); do
  SHARD=()
  [ "$WRITERS" -gt 1 ] && SHARD=(--shard "$i/$WRITERS")
  "${RUNAS[@]}" "$BUILD/kernrl" grade-dir "$WORK" --out "$TRACE" --run adversarial --config "$WORK/config.yaml" --quiet --no-resume \
    "${SHARD[@]}" "${EXTRA[@]}" &
  pids+=($!)
done
for p in "${pids[@]}"; do
  wait "$p" || rc=$?
done
python3 - "$WORK" "$TRACE" "$rc" "${EXTRA[*]:-}" "$WRITERS" <<'PY'
import json, os, sys
work, trace, rc, extra, writers = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
compile_only = "--compile-only" in extra

def key(path):
    # kernrl writes bytes that are not UTF-8 as \xNN, exactly as Python's backslashreplace does.
    return os.fsencode(path).decode("utf-8", "backslashreplace")

expected = {}  # key -> (statuses, unattributed reason or None, cut fields)
for root, dirs, files in os.walk(work):
    dirs[:] = [d for d in dirs if not d.startswith(".")]
    for f in files:
        p = os.path.join(root, f)
        if not f.endswith(".cu") or not os.path.isfile(p) or not os.access(p, os.R_OK):
            continue
        with open(p, "rb") as fh:
            head = [fh.readline().decode("utf-8", "replace") for _ in range(4)]
        if not head[0].startswith("// expect:"):
            continue
        want = head[0].split(":", 1)[1].strip().split("|")
        unattributed, cuts, forbid = None, [], None
        for line in head[1:]:
            if line.startswith("// forbid:"):  # text of a file of the machine that must not reach the record
                forbid = line.split(":", 1)[1].strip()
            if line.startswith("// expect-unattributed:"):
                unattributed = line.split(":", 1)[1].strip()
            if line.startswith("// expect-cut:"):
                cuts.append(line.split(":", 1)[1].strip())
        expected[key(p)] = (want, unattributed, cuts, forbid)
for line in open(os.path.join(work, ".expect"), "rb"):
    rel, status, reason = line.decode("utf-8", "surrogateescape").rstrip("\n").split("\t")
    expected[key(os.path.join(work, rel))] = ([status], reason or None, [], None)

records, broken, long_lines, dups = {}, 0, 0, []
with open(trace, "rb") as fh:
    for raw in fh:
        if len(raw) > 128 * 1024:
            long_lines += 1
        try:
            r = json.loads(raw.decode("utf-8"))  # strict: a record must be valid UTF-8
        except Exception:
            broken += 1
            continue
        if r["file"] in records:
            dups.append(r["file"])
        records[r["file"]] = r

def field(r, dotted):
    for part in dotted.split("."):
        r = r.get(part) if isinstance(r, dict) else None
    return r

bad = 0
rows = []
for p, (want, unattributed, cuts, forbid) in sorted(expected.items()):
    r = records.get(p)
    got = r["status"] if r else "MISSING"
    ok_want = want
    if compile_only and not set(want) & {"format_error", "compile_error"}:
        ok_want = ["compiled"]  # nothing runs: only the CPU stages can be judged
        if "launch_error" in want:
            ok_want.append("launch_error")  # a configuration that cannot run is caught before the GPU
    ok = got in ok_want
    if r and unattributed is not None:
        reason = (r.get("problem_unknown") or {}).get("reason")
        if r.get("problem") is not None or reason != unattributed:
            ok = False
            got += f" (unattributed: {reason})"
    if r and forbid and forbid in json.dumps(r):
        ok = False
        got += f" (leaked: {forbid})"
    for c in cuts:
        if r and not field(r, c + "_cut_bytes"):
            ok = False
            got += f" (no {c}_cut_bytes)"
    bad += not ok
    name = os.path.basename(p)[:-3]
    rows.append((name, os.path.basename(os.path.dirname(p)), "|".join(ok_want), got, "yes" if r else "NO", "ok" if ok else "FAIL"))
w = [max(len(x[i]) for x in rows + [("attack", "problem", "expected", "got", "went on", "")]) for i in range(6)]
fmt = "  ".join("{:<%d}" % n for n in w)
print(fmt.format("attack", "problem", "expected", "got", "went on", ""))
for row in rows:
    print(fmt.format(*row))
print(f"\n{len(rows) - bad}/{len(rows)} attacks got their expected status; {len(records)} records for {len(expected)} files; "
      f"{writers} concurrent writer(s): {broken} broken line(s), {len(dups)} duplicate record(s), {long_lines} line(s) over 128 KiB; grade-dir exit {rc}")
for d in dups:
    print(f"duplicate: {d}")
sys.exit(1 if bad or rc != 0 or len(records) != len(expected) or broken or dups or long_lines else 0)
PY

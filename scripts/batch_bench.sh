#!/usr/bin/env bash
# Throughput and robustness of grade-dir on a GPU machine: a directory of >= 100 samples (bundled
# solutions of a level plus broken variants: wrong, crashing, hanging) graded end to end; kernels
# per minute; then the same directory graded with a kill -9 part way and --resume, compared with
# the uninterrupted run (same file -> same status).
#   scripts/batch_bench.sh [--build DIR] [--gpus 0,1] [--level L1]
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=build-gpu GPUS="" LEVEL=L1
while [ $# -gt 0 ]; do
  case "$1" in
    --build) BUILD="$2"; shift ;;
    --gpus) GPUS="$2"; shift ;;
    --level) LEVEL="$2"; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
OUTDIR="${OUT:-$(mktemp -d)}"
K="$BUILD/kernrl"
D="$(mktemp -d)"
trap 'rm -rf "$D"' EXIT
cat >"$D/config.yaml" <<'YAML'
timeouts:
  run_s: 20
YAML
# KernelBench layout: 7 samples of every solution of the level, plus broken variants of softmax.
n=0
for sol in problems/"$LEVEL"/*/solution.cu; do
  num="$(basename "$(dirname "$sol")" | cut -d_ -f1)"
  lvl="${LEVEL#L}"
  for s in 0 1 2 3 4 5 6; do cp "$sol" "$D/level_${lvl}_problem_${num}_sample_${s}_kernel.cu"; n=$((n + 1)); done
done
s=10
for bad in zeros illegal_address trap unwritten infinite_loop compile_error memoise writes_input; do
  cp "tests/adversarial/L1_23_Softmax/$bad.cu" "$D/level_1_problem_23_sample_${s}_kernel.cu"
  s=$((s + 1)); n=$((n + 1))
done
gpu_args=()
[ -n "$GPUS" ] && gpu_args=(--gpus "$GPUS")
echo "== $n samples"
start=$(date +%s.%N)
"$K" grade-dir "$D" --out "$OUTDIR/batch_full.jsonl" --run batch --seed 7 --config "$D/config.yaml" --no-resume "${gpu_args[@]}" >"$OUTDIR/batch_full.log" 2>&1
end=$(date +%s.%N)
python3 - "$OUTDIR/batch_full.jsonl" "$start" "$end" <<'PY'
import json, sys
from collections import Counter
recs = [json.loads(l) for l in open(sys.argv[1])]
secs = float(sys.argv[3]) - float(sys.argv[2])
gpus = sorted({(r.get("device") or {}).get("gpu_index") for r in recs if r.get("device")})
print(f"{len(recs)} records in {secs:.1f} s = {60 * len(recs) / secs:.1f} kernels/min on GPUs {gpus}")
print("statuses:", dict(Counter(r["status"] for r in recs)))
cpu = sum(r.get("compile", {}).get("ms", 0) for r in recs if r.get("compile"))
print(f"compile time summed over samples: {cpu / 1000:.1f} s (overlapped with GPU work)")
# Where the grader's time went (the records' `grader` objects), mean ms per record that ran.
ran = [r for r in recs if r.get("ran") and isinstance(r.get("grader"), dict)]
if ran:
    keys = ["prepare_ms", "queue_ms", "worker_start_ms", "worker_ms", "total_ms"]
    print("grader, mean ms per kernel that ran:", ", ".join(
        f"{k[:-3]} {sum(r['grader'].get(k, 0) for r in ran) / len(ran):.1f}" for k in keys))
    phases = Counter()
    for r in ran:
        phases.update(r["grader"].get("phases", {}))
    print("  worker phases:", ", ".join(f"{k} {v / len(ran):.1f}" for k, v in phases.most_common()))
    by_problem = {}
    for r in ran:
        by_problem.setdefault(r["problem"], []).append(r)
    print("  per problem (mean worker ms | kernel+reference+baseline timing ms):")
    for p, rs in sorted(by_problem.items()):
        w = sum(r["grader"].get("worker_ms", 0) for r in rs) / len(rs)
        ph = Counter()
        for r in rs:
            ph.update(r["grader"].get("phases", {}))
        top = ", ".join(f"{k} {v / len(rs):.0f}" for k, v in ph.most_common(4))
        print(f"    {p:44s} {w:8.1f}  [{top}]")
    # The grader's own time per file against the GPU work the rules require: the phases that wait
    # for kernel, timed and reference runs are the GPU work; the rest of the worker's round trip
    # (inputs, comparisons, checks, launch facts, bookkeeping) is the grader's own. Correct samples
    # only (a failing kernel stops early); a worker's start is reported apart (worker_start_ms).
    gpu_phases = ("kernel", "timing", "reference", "verify_reference", "baseline")
    def split(r):
        ph = r["grader"].get("phases", {})
        gpu = sum(ph.get(k, 0) for k in gpu_phases)
        return gpu, r["grader"].get("worker_ms", 0) - gpu
    def median(xs):
        xs = sorted(xs)
        return xs[len(xs) // 2] if len(xs) % 2 else (xs[len(xs) // 2 - 1] + xs[len(xs) // 2]) / 2
    print("  grader's own time vs GPU work per file, correct samples (median ms; ratio median / max):")
    over = []
    for p, rs in sorted(by_problem.items()):
        ok = [split(r) for r in rs if r["status"] == "correct"]
        if not ok:
            continue
        ratios = [own / gpu if gpu > 0 else float("inf") for gpu, own in ok]
        gpu_m, own_m = median([g for g, _ in ok]), median([o for _, o in ok])
        print(f"    {p:44s} gpu {gpu_m:7.1f}  own {own_m:7.1f}  ratio {median(ratios):5.2f} / {max(ratios):5.2f}")
        if median(ratios) > 2:
            over.append(p)
        if median(ratios) > 1.5:  # where the time goes: every phase, median ms over the samples
            phases_ok = [r["grader"].get("phases", {}) for r in rs if r["status"] == "correct"]
            names = sorted({k for ph in phases_ok for k in ph})
            meds = {k: median([ph.get(k, 0) for ph in phases_ok]) for k in names}
            print("      phases: " + ", ".join(f"{k} {v:.2f}" for k, v in sorted(meds.items(), key=lambda kv: -kv[1])))
    print(f"  problems whose median ratio is over 2: {len(over)}" + (f" ({', '.join(over)})" if over else ""))
    starts = [r["grader"] for r in recs if isinstance(r.get("grader"), dict) and "worker_start_ms" in r["grader"]]
    for g in starts:
        parts = ", ".join(f"{k} {v:.0f}" for k, v in sorted(g.get("worker_start", {}).items()))
        print(f"  worker start: waited {g['worker_start_ms']:.0f} ms [{parts}]")
PY
grep -A12 "records in" "$OUTDIR/batch_full.log" || true
echo "== kill -9 part way, then --resume"
rm -f "$OUTDIR/batch_killed.jsonl"
"$K" grade-dir "$D" --out "$OUTDIR/batch_killed.jsonl" --run batch --seed 7 --config "$D/config.yaml" --quiet "${gpu_args[@]}" &
pid=$!
sleep "${KILL_AFTER:-12}"
kill -9 $pid
wait $pid 2>/dev/null
before=$(wc -l <"$OUTDIR/batch_killed.jsonl")
"$K" grade-dir "$D" --out "$OUTDIR/batch_killed.jsonl" --run batch --config "$D/config.yaml" --quiet "${gpu_args[@]}" >/dev/null 2>&1
python3 - "$OUTDIR/batch_full.jsonl" "$OUTDIR/batch_killed.jsonl" "$before" <<'PY'
import json, sys
def load(p):
    out, bad = {}, 0
    for l in open(p):
        try:
            r = json.loads(l)
            out[r["file"]] = r
        except ValueError:
            bad += 1
    return out, bad
full, _ = load(sys.argv[1])
resumed, bad = load(sys.argv[2])
diff = [f for f in full if f not in resumed or resumed[f]["status"] != full[f]["status"]]
print(f"killed after {sys.argv[3]} records; after --resume: {len(resumed)} records ({bad} cut-off lines), "
      f"{len(full)} in the uninterrupted run; {len(diff)} files differ in status")
for f in diff[:10]:
    print("  differs:", f, full[f]["status"], resumed.get(f, {}).get("status"))
sys.exit(1 if diff or len(resumed) != len(full) else 0)
PY

#!/usr/bin/env bash
# The CLI's GPU path end to end on a machine without a GPU: kernrl copied beside a stand-in worker
# (tests/stand_in_worker.py) that speaks the worker protocol. eval of a correct, a crashing and a
# hanging kernel (records, exit codes, the worker's log); grade-dir over a folder mixing them
# (every file one record, worker restarts in the summary, the worker's start on the records after
# a crash), and on two GPUs; kill -9 part way and --resume; bench's files; report's grader table.
set -u
KERNRL="$1"
source "$(dirname "$0")/lib.sh"
K="$(stand_in_kernrl)"
BIN="$(dirname "$K")"
holds() {  # holds NAME PYTHON-EXPR-ON-r FILE: true for the first JSON line of FILE
  if python3 -c "import json,sys; r=json.loads(open(sys.argv[1]).readline()); sys.exit(0 if ($2) else 1)" "$3" 2>/dev/null; then
    echo "ok   $1"; else echo "FAIL $1: not ($2)"; head -c 800 "$3"; echo; fail=1; fi
}

SOL="$ROOT/problems/L1/23_Softmax/solution.cu"
printf 'timeouts:\n  run_s: 2\n' >"$TMP/config.yaml"

check "eval on the worker: correct" 0 "$K" eval "$SOL" --json
holds "ran, with the worker's device and timings" \
  "r['status']=='correct' and r['ran'] and r['device']['name']=='Stand-in' and abs(r['speedup']-2)<1e-9" "$TMP/out"
holds "the worker's start is in the record" \
  "r['grader']['worker_start_ms']>=0 and r['grader']['worker_start']['exec']==12.5 and r['grader']['worker_ms']>=0" "$TMP/out"
check "eval: a crashed worker is the kernel's runtime_error" 1 "$K" eval "$TMP/crash.cu" --json
holds "its log is in the record" \
  "r['status']=='runtime_error' and 'exited with code 1' in r['error']['message'] and 'stand-in: crashing now' in r['error']['log']" "$TMP/out"
# The stand-in sleeps an hour on a hang: a record at all means it was cut (CTest's timeout would end
# the test first); the round trip says it was cut at the evaluation deadline, not before: run_s
# (2 s) plus 5 s per GiB of the problem's tensors at the bench size (L1_23: 0.5 GiB, 4.5 s).
check "eval: a hang is a timeout" 1 "$K" eval "$TMP/hang.cu" --json --config "$TMP/config.yaml"
holds "timeout record" "r['status']=='timeout' and 'did not finish within 4 s' in r['error']['message']" "$TMP/out"
holds "the hang was cut at its deadline" "r['grader']['worker_ms']>=4500" "$TMP/out"
check "eval --feedback on the worker" 0 "$K" eval "$SOL" --feedback
grep -q "speedup 2x" "$TMP/out" && echo "ok   feedback names the speedup" || { echo "FAIL feedback: $(head -c 300 "$TMP/out")"; fail=1; }

# grade-dir: crashes and a hang between correct kernels.
D="$TMP/gen"
mkdir -p "$D"
for s in 0 1 2; do cp "$SOL" "$D/level_1_problem_23_sample_${s}_kernel.cu"; done
cp "$TMP/crash.cu" "$D/level_1_problem_23_sample_3_kernel.cu"
cp "$SOL" "$D/level_1_problem_23_sample_4_kernel.cu"
cp "$TMP/hang.cu" "$D/level_1_problem_23_sample_5_kernel.cu"
cp "$TMP/crash.cu" "$D/level_1_problem_23_sample_6_kernel.cu"
for s in 7 8; do cp "$SOL" "$D/level_1_problem_23_sample_${s}_kernel.cu"; done
check "grade-dir on the worker" 0 "$K" grade-dir "$D" --gpus 0 --out "$TMP/full.jsonl" --config "$TMP/config.yaml" --no-resume
grep -q "3 worker restarts" "$TMP/err" && echo "ok   the summary counts the worker restarts" || { echo "FAIL summary:"; cat "$TMP/err" | head; fail=1; }
if python3 - "$TMP/full.jsonl" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
by = {r["file"].rsplit("sample_", 1)[1].split("_")[0]: r for r in recs}
want = {"0": "correct", "1": "correct", "2": "correct", "3": "runtime_error", "4": "correct",
        "5": "timeout", "6": "runtime_error", "7": "correct", "8": "correct"}
got = {k: r["status"] for k, r in by.items()}
# One GPU grades in the order the files finish compiling, and writes each record when it is done:
# the file's order is the worker's. A worker's start is on the first record it graded: the first
# record, and each one after a crash or a hang (the last record's replacement graded nothing).
started = [i == 0 or recs[i - 1]["status"] in ("runtime_error", "timeout") for i in range(len(recs))]
reported = ["worker_start_ms" in r["grader"] for r in recs]
ok = len(recs) == 9 and got == want and reported == started
print(("ok  " if ok else "FAIL") + f" grade-dir: {len(recs)} records, statuses {got}, worker starts "
      f"reported on records {[i for i, x in enumerate(reported) if x]} (want {[i for i, x in enumerate(started) if x]})")
sys.exit(0 if ok else 1)
PY
then :; else fail=1; fi

# Two GPUs (two workers, one queue): both grade, every file once, a summary line per GPU.
check "grade-dir on two GPUs" 0 "$K" grade-dir "$D" --gpus 0,1 --out "$TMP/two.jsonl" --config "$TMP/config.yaml" --no-resume
if python3 - "$TMP/two.jsonl" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
gpus = sorted({r["device"]["gpu_index"] for r in recs if r.get("device")})
ok = len(recs) == 9 and len({r["file"] for r in recs}) == 9 and gpus == [0, 1]
print(("ok  " if ok else "FAIL") + f" two GPUs: {len(recs)} records, GPUs used {gpus}")
sys.exit(0 if ok else 1)
PY
then :; else fail=1; fi
[ "$(grep -c '^  GPU [01]: ' "$TMP/err")" = 2 ] && echo "ok   a summary line per GPU" || { echo "FAIL summary per GPU:"; cat "$TMP/err"; fail=1; }

# kill -9 while the hang is being waited for, then --resume: every file exactly once.
"$K" grade-dir "$D" --gpus 0 --out "$TMP/killed.jsonl" --config "$TMP/config.yaml" --quiet &
pid=$!
for _ in $(seq 100); do
  [ -s "$TMP/killed.jsonl" ] && [ "$(wc -l <"$TMP/killed.jsonl")" -ge 5 ] && break
  sleep 0.1
done
kill -9 $pid
wait $pid 2>/dev/null
before=$(wc -l <"$TMP/killed.jsonl")
check "grade-dir --resume after kill -9" 0 "$K" grade-dir "$D" --gpus 0 --out "$TMP/killed.jsonl" --config "$TMP/config.yaml" --quiet
files=$(grep -o '"file":"[^"]*"' "$TMP/killed.jsonl" | sort | uniq | wc -l)
lines=$(wc -l <"$TMP/killed.jsonl")
[ "$lines" = 9 ] && [ "$files" = 9 ] && echo "ok   killed after $before records; after --resume every file once" ||
  { echo "FAIL resume: $lines records of $files files (killed after $before)"; fail=1; }
# No stand-in outlives kernrl: a worker no longer needed is killed without waiting for its
# teardown, so this waits for the last one to be gone (up to a minute).
for _ in $(seq 600); do pgrep -f "$BIN/kernrl-worker" >/dev/null || break; sleep 0.1; done
if pgrep -f "$BIN/kernrl-worker" >/dev/null; then echo "FAIL a worker outlived kernrl"; fail=1; else echo "ok   no worker left behind"; fi

# kernrl bench on the worker: ceilings, a baseline file eval then reuses, and an --out that cannot be
# written refused before anything is measured.
check "bench --device" 0 "$K" bench --device --repeats 1 --out "$TMP/device.json"
python3 -c "import json; d=json.load(open('$TMP/device.json')); assert d['schema']=='kernrl.device.v1' and d['ceilings']['bandwidth_gbs']==3000.0" &&
  echo "ok   the device file has the ceilings" || { echo "FAIL device file"; fail=1; }
check "bench --baselines" 0 "$K" bench --baselines --problem L1_23 --out "$TMP/base/stand-in.json"
if python3 - "$TMP/base/stand-in.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
p = d["problems"].get("L1_23_Softmax", {})
ok = (d["schema"].startswith("kernrl.baselines") and p.get("baseline", {}).get("median_ms") == 1.0
      and p.get("kernel_baseline", {}).get("timing", {}).get("median_ms") == 0.5 and len(d["problems"]) == 1)
print(("ok  " if ok else "FAIL") + " the baseline file has the reference's and the reference kernel's timings")
sys.exit(0 if ok else 1)
PY
then :; else fail=1; fi
check "eval reuses the baseline file" 0 "$K" eval "$SOL" --json --baselines "$TMP/base/stand-in.json"
holds "baseline from the file" "r['timing']['baseline_source'].startswith('file:')" "$TMP/out"
check "bench --out a folder is refused" 2 "$K" bench --device --out "$TMP"
grep -q "it is a folder" "$TMP/err" && echo "ok   the refusal says why" || { echo "FAIL refusal: $(cat "$TMP/err")"; fail=1; }

check "report: the grader's time" 0 "$K" report "$TMP/full.jsonl"
grep -q "worker start ms" "$TMP/out" && echo "ok   report shows the worker's start" || { echo "FAIL report"; fail=1; }
exit $fail

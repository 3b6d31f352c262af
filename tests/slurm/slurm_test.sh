#!/usr/bin/env bash
# scripts/slurm/ on a real Slurm: a one-node cluster (munged, slurmctld, slurmd, started here in a
# scratch folder with a generated slurm.conf) grades a directory as a 3-task job array in
# compile-only mode; one task is cancelled mid-run; the report step names it; it is resubmitted;
# the merged traces and report then hold every file exactly once.
#
#   tests/slurm/slurm_test.sh KERNRL [SCRATCH]
#
# Installs slurm-wlm and munge with apt when missing (as root). Exit 77 (skipped) only when they
# cannot be installed or the daemons cannot be run here; the reason is printed.
set -euo pipefail
KERNRL=$(realpath "${1:?usage: slurm_test.sh KERNRL [SCRATCH]}")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SKIP=77

skip() { echo "SKIP: $*"; exit $SKIP; }
fail() { echo "FAIL: $*"; for f in "$T"/*.log "$T"/out/logs/*.log; do [ -e "$f" ] && { echo "--- $f"; tail -n 20 "$f"; }; done; exit 1; }

# ---- Slurm and munge ----
need=()
for c in slurmctld slurmd sbatch munged munge; do command -v "$c" >/dev/null || need+=("$c"); done
if [ ${#need[@]} -gt 0 ]; then
  [ "$(id -u)" = 0 ] || skip "Slurm is not installed (${need[*]} missing) and installing it needs root"
  command -v apt-get >/dev/null || skip "Slurm is not installed and there is no apt-get"
  echo "installing slurm-wlm and munge with apt-get"
  export DEBIAN_FRONTEND=noninteractive
  apt-get -o DPkg::Lock::Timeout=600 update -qq || true
  apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends slurm-wlm munge \
    || skip "apt-get could not install slurm-wlm and munge"
fi
[ "$(id -u)" = 0 ] || skip "the test starts slurmd, which runs jobs as their users: it needs root"

T=$(mktemp -d "${2:-${TMPDIR:-/tmp}}/kernrl-slurm.XXXXXX")
pids=()
cleanup() {
  set +e
  for p in "${pids[@]+"${pids[@]}"}"; do kill "$p" 2>/dev/null; done
  sleep 1
  for p in "${pids[@]+"${pids[@]}"}"; do kill -9 "$p" 2>/dev/null; done
  [ "${KEEP_SCRATCH:-0}" = 1 ] || rm -rf "$T"
}
trap cleanup EXIT

pid_of() {  # waits for a daemon's pid file
  for _ in $(seq 100); do [ -s "$1" ] && { cat "$1"; return; }; sleep 0.1; done
  return 1
}

# munged on a socket of its own, with a fresh key.
mkdir -p "$T/munge" "$T/state" "$T/spool"
chmod 700 "$T/munge"
dd if=/dev/urandom of="$T/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$T/munge/munge.key"
munged --force --socket="$T/munge/socket" --key-file="$T/munge/munge.key" \
  --log-file="$T/munged.log" --pid-file="$T/munge/munged.pid" --seed-file="$T/munge/seed" \
  || skip "munged does not start here: $(tail -n 3 "$T/munged.log" 2>/dev/null)"
pids+=("$(pid_of "$T/munge/munged.pid")")

# Two free TCP ports for slurmctld and slurmd.
read -r ctld_port slurmd_port < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
node=$(hostname -s)
# Process tracking by the process tree, no task binding, no accounting: what a container without
# systemd or writable cgroups can run.
cat > "$T/slurm.conf" <<CONF
ClusterName=kernrltest
SlurmctldHost=$node(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
AuthInfo=socket=$T/munge/socket
CredType=cred/munge
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
KillWait=5
MinJobAge=3600
NodeName=$node NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$T/slurm.conf"
slurmctld -f "$SLURM_CONF" -i || skip "slurmctld does not start here: $(tail -n 5 "$T/slurmctld.log" 2>/dev/null)"
pids+=("$(pid_of "$T/slurmctld.pid")")
slurmd -f "$SLURM_CONF" || skip "slurmd does not start here: $(tail -n 5 "$T/slurmd.log" 2>/dev/null)"
pids+=("$(pid_of "$T/slurmd.pid")")
for _ in $(seq 60); do
  state=$(sinfo -h -n "$node" -o %t 2>/dev/null || true)
  [ "$state" = idle ] && break
  sleep 0.5
done
[ "$state" = idle ] || skip "the Slurm node did not come up (state '$state'): $(tail -n 5 "$T/slurmd.log")"
echo "ok   one-node Slurm cluster up ($node, $(nproc) CPUs)"

# ---- a directory to grade: bundled solutions, named after their problem, two copies each ----
G="$T/gen"
mkdir -p "$G"
n=0
for f in "$ROOT"/problems/L1/*/solution.cu "$ROOT"/problems/L2/*/solution.cu; do
  [ $n -lt 30 ] || break
  name=$(basename "$(dirname "$f")")
  cp "$f" "$G/$name.cu"
  printf '\n// second sample\n' | cat "$f" - > "$G/$name.b.cu"
  n=$((n + 2))
done
echo "ok   $n files to grade"
export KERNRL_CACHE="$T/cache"

job_state() { scontrol show job "$1" -o 2>/dev/null | grep -o 'JobState=[A-Z_]*' | head -n 1 | cut -d= -f2; }
wait_jobs() {  # until none of the jobs is pending or running
  for _ in $(seq 600); do
    [ -z "$(squeue -h -j "$1" 2>/dev/null)" ] && return 0
    sleep 0.5
  done
  fail "jobs $1 did not finish"
}
records() {  # complete records in a trace
  if [ -f "$1" ]; then grep -c '"status"' "$1" || true; else echo 0; fi
}

# ---- the array, and a task cancelled mid-run ----
OUT="$T/out"
read -r array report < <("$ROOT/scripts/slurm/submit.sh" --parsable --shards 3 --out "$OUT" \
  --gpus-per-shard 0 --kernrl "$KERNRL" "$G" -- --compile-only --jobs 1)
echo "ok   submitted array job $array and report job $report"
victim="$OUT/traces/shard-1-of-3.jsonl"
for _ in $(seq 600); do
  [ "$(records "$victim")" -ge 1 ] && break
  sleep 0.1
done
[ "$(records "$victim")" -ge 1 ] || fail "shard 1 wrote no record"
scancel "${array}_1"
echo "ok   cancelled task ${array}_1 after $(records "$victim") record(s)"
wait_jobs "$array,$report"
[ "$(job_state "${array}_1")" = CANCELLED ] || fail "task 1 is $(job_state "${array}_1"), not CANCELLED"
for t in 0 2; do
  [ "$(job_state "${array}_$t")" = COMPLETED ] || fail "task $t is $(job_state "${array}_$t")"
done
[ ! -e "$OUT/done/shard-1-of-3" ] || fail "the cancelled shard is marked done"
[ "$(job_state "$report")" = FAILED ] || fail "the report job is $(job_state "$report"), not FAILED"
grep -q "1 of 3 shard(s) did not complete: 1" "$OUT"/logs/report-"$report".log \
  || fail "the report step does not name shard 1"
partial=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["records"])' "$OUT/report.json")
[ "$partial" -lt "$n" ] || fail "the first report has $partial records: the task was not cut short"
echo "ok   the report step named the missing shard; first report: $partial of $n files"

# ---- resubmission of that task ----
read -r array2 report2 < <("$ROOT/scripts/slurm/submit.sh" --parsable --shards 3 --out "$OUT" \
  --gpus-per-shard 0 --kernrl "$KERNRL" --resubmit 1 "$G" -- --compile-only --jobs 1)
wait_jobs "$array2,$report2"
[ "$(job_state "$report2")" = COMPLETED ] || fail "the second report job is $(job_state "$report2")"
echo "ok   resubmitted task 1 (job $array2) and the report (job $report2)"

# ---- every file exactly once ----
python3 - "$G" "$OUT" "$n" <<'PY' || fail "merged results"
import collections, json, os, sys
gen, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
files = sorted(os.listdir(gen))
seen, shard_of, seeds = collections.Counter(), {}, set()
for name in sorted(os.listdir(os.path.join(out, "traces"))):
    for line in open(os.path.join(out, "traces", name)):
        try:
            r = json.loads(line)
        except ValueError:
            continue  # a line cut by the kill (repaired on resume)
        f = os.path.basename(r["file"])
        seen[f] += 1
        shard_of.setdefault(f, set()).add(name)
        seeds.add(r.get("run_seed"))
        assert r["status"] == "compiled", (f, r["status"], r.get("error"))
assert sorted(seen) == files, ("files graded", sorted(set(files) ^ set(seen)))
twice = [f for f, c in seen.items() if c != 1]
assert not twice, ("graded more than once", twice)
assert all(len(s) == 1 for s in shard_of.values()), "a file in two shards"
assert len(seeds) == 1, ("one run seed", seeds)
report = json.load(open(os.path.join(out, "report.json")))
assert report["records"] == n and report["duplicates"] == 0, (report["records"], report["duplicates"])
assert len(report["runs"]) == 1 and report["runs"][0]["samples"] == n, report["runs"]
assert report["runs"][0]["status_counts"]["compiled"] == n
assert len(report["files"]) == 3
html = open(os.path.join(out, "report.html")).read()
assert html.startswith("<!DOCTYPE html>") and "<svg" in html
print("ok   merged report: %d files, each graded exactly once, in %d shard traces, one run seed" % (n, len(report["files"])))
PY
echo "passed"

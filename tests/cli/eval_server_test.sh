#!/usr/bin/env bash
# eval through a running service on a machine without a GPU: `kernrl serve` on the stand-in worker
# (tests/stand_in_worker.py), then `eval --server URL` (and $KERNRL_SERVER): the service's record
# (its run name) printed as eval prints it, with eval's exit codes for a correct, a crashing and an
# unknown-problem answer; options only a local eval honours refused; no service at the address:
# graded here as before.
set -u
KERNRL="$1"
source "$(dirname "$0")/lib.sh"
K="$(stand_in_kernrl)"
SOL="$ROOT/problems/L1/23_Softmax/solution.cu"

"$K" serve --port 0 --gpus 0 --run served --trace "$TMP/served.jsonl" 2>"$TMP/serve.err" &
serve_pid=$!
url=""
for _ in $(seq 600); do  # waits for the line that names the port (at most a minute)
  url="$(grep -o 'listening on http://[0-9.]*:[0-9]*' "$TMP/serve.err" | sed 's/listening on //')"
  [ -n "$url" ] && break
  kill -0 $serve_pid 2>/dev/null || break
  sleep 0.1
done
[ -n "$url" ] || { echo "FAIL serve did not start"; cat "$TMP/serve.err"; kill $serve_pid; exit 1; }
holds() {  # holds NAME PYTHON-EXPR-ON-r FILE: true for the first JSON line of FILE
  if python3 -c "import json,sys; r=json.loads(open(sys.argv[1]).readline()); sys.exit(0 if ($2) else 1)" "$3" 2>/dev/null; then
    echo "ok   $1"; else echo "FAIL $1: not ($2)"; head -c 800 "$3"; echo; fail=1; fi
}

check "eval --server: a correct kernel" 0 "$K" eval "$SOL" --json --server "$url"
holds "the service graded it (its run name), on its worker" \
  "r['status']=='correct' and r['run']=='served' and r['device']['name']=='Stand-in' and r['file']=='$SOL'" "$TMP/out"
check "eval --server: the summary as eval prints it" 0 "$K" eval "$SOL" --server "$url"
has "summary names the status" "correct" "$TMP/out"
check "eval --server: a crashing kernel is exit 1" 1 "$K" eval "$TMP/crash.cu" --json --server "$url"
holds "its runtime_error record" "r['status']=='runtime_error' and r['run']=='served'" "$TMP/out"
check "eval via \$KERNRL_SERVER, answer on stdin" 0 env KERNRL_SERVER="$url" "$K" eval - --json <"$SOL"
holds "graded by the service" "r['run']=='served' and r['file']=='<stdin>'" "$TMP/out"
check "eval --server --trace appends the service's record" 0 "$K" eval "$SOL" --server "$url" --trace "$TMP/t.jsonl"
holds "the appended record" "r['run']=='served'" "$TMP/t.jsonl"
check "eval --server: an unknown problem is exit 2" 2 "$K" eval "$SOL" --server "$url" --problem no_such_problem_xyz
has "the service's error is said" "UNKNOWN_PROBLEM" "$TMP/err"
check "eval --server with --size is refused" 2 "$K" eval "$SOL" --server "$url" --size N=4
has "naming the option" "size" "$TMP/err"
check "eval with \$KERNRL_SERVER and --size grades here" 0 env KERNRL_SERVER="$url" "$K" eval "$SOL" --json --size batch_size=4
holds "graded here (no run name)" "r['status']=='correct' and r.get('run') is None" "$TMP/out"

kill -TERM $serve_pid
wait $serve_pid
# Nothing listens there now: eval says so and grades by itself.
check "eval --server with no service there grades here" 0 "$K" eval "$SOL" --json --server "$url"
holds "graded here" "r['status']=='correct' and r.get('run') is None" "$TMP/out"
has "it says why" "no kernrl serve at" "$TMP/err"
check "eval --server: a URL it cannot use" 2 "$K" eval "$SOL" --server "ftp://x"
[ "$(wc -l <"$TMP/served.jsonl")" -ge 5 ] && echo "ok   the service's trace holds what it graded" || { echo "FAIL service trace"; fail=1; }
exit $fail

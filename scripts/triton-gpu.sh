#!/usr/bin/env bash
# The `triton` phase of scripts/gpu-test.sh, on a GPU host whose Python has Triton: the real
# Triton compiler in kernrl-triton's sandbox (--check-sandbox), a Triton answer graded end to end,
# the bundled Triton solutions (problems/*/*/solution.py), the Triton attacks
# (tests/triton/attacks: each its expected status, nothing written outside), kernrl's timing against
# triton.testing.do_bench (scripts/triton_timing.py), and a grade-dir batch
# (the Level-1 Triton solutions x4 with faulty kernels mixed in, cold caches) against the CUDA
# batch of the same problems and against the Triton batch with a compile server per compile, with
# where its compile time went (compile-only batches, scripts/triton_compile_profile.py; left out
# with TRITON_PROFILE=0). Writes triton-*.{log,jsonl,md} under $OUT.
#   scripts/triton-gpu.sh --build DIR [--out DIR]
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
BUILD=build
OUT="${OUT:-$ROOT/gpu-results}"
while [ $# -gt 0 ]; do
  case "$1" in
    --build) BUILD="$2"; shift ;;
    --out) OUT="$2"; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
mkdir -p "$OUT"
K="$BUILD/kernrl"
log() { echo "== $(date -u +%H:%M:%S) $*"; }
PY="${KERNRL_TRITON_PYTHON:-$(command -v python3)}"
export KERNRL_TRITON_PYTHON="$PY"
log "Triton $("$PY" -c 'import triton; print(triton.__version__)' 2>&1 | tail -1) at $PY"

# The sandbox check of the launcher, with what kernrl gives it.
TDIR="$("$PY" -c 'import os, triton; print(os.path.dirname(triton.__file__))')"
PRIV="$(mktemp -d)"
SETUP=$(printf '{"python":"%s","script":"%s","tmp":"%s","read_dirs":["/usr","%s"],"read_files":["%s"],"exec_files":["%s"]}' \
  "$PY" "$(readlink -f "$BUILD/kernrl_triton.py")" "$PRIV" "$TDIR" "$(readlink -f "$BUILD/kernrl_triton.py")" "$(readlink -f "$PY")")
"$BUILD/kernrl-triton" --setup "$SETUP" --check-sandbox >"$OUT/triton-sandbox.json" 2>&1
log "sandbox check (exit $?): $(cat "$OUT/triton-sandbox.json")"
rm -rf "$PRIV"

export KERNRL_CACHE="$(mktemp -d)"
CFG="$(mktemp)"
printf 'triton: {timeout_s: %s}\n' "${TRITON_TIMEOUT_S:-60}" >"$CFG"

log "grade-dir batch: Level-1 Triton solutions x4 + faulty, against the CUDA batch (cold caches)"
batch() {  # batch KIND: builds the folder, grades it with a fresh cache, prints kernels/min
  local kind="$1" label="$1" cfg=() dir; dir="$(mktemp -d)"
  if [ "$kind" = triton-server-per-compile ]; then  # the same with no server kept: import per compile
    kind=triton; printf 'triton: {pool: 0}\n' >"$dir.yaml"; cfg=(--config "$dir.yaml")
  fi
  local count=0
  for f in problems/L1/*/solution.py; do
    [ -e "$f" ] || continue
    local d; d="$(dirname "$f")"; local id="L1_$(basename "$d")"
    mkdir -p "$dir/$id"
    for i in 1 2 3 4; do
      if [ "$kind" = triton ]; then
        # Distinct sources (no cache hits between copies): a comment differs.
        { cat "$f"; echo "# copy $i"; } >"$dir/$id/s$i.py"
      else
        { cat "$d/solution.cu"; echo "// copy $i"; } >"$dir/$id/s$i.cu"
      fi
      count=$((count + 1))
    done
  done
  if [ "$kind" = triton ]; then
    cp tests/triton/attacks/replaces_compiler.py "$dir/L1_23_Softmax/faulty1.py" 2>/dev/null && count=$((count + 1))
  else
    cp tests/adversarial/L1_23_Softmax/illegal_address.cu "$dir/L1_23_Softmax/faulty1.cu" 2>/dev/null && count=$((count + 1))
  fi
  local start; start=$(date +%s%N)
  KERNRL_CACHE="$(mktemp -d)" "$K" grade-dir "$dir" "${cfg[@]}" --out "$OUT/triton-batch-$label.jsonl" --run "batch-$label" --no-resume >"$OUT/triton-batch-$label.log" 2>&1
  local ms=$(( ($(date +%s%N) - start) / 1000000 ))
  echo "| $label | $count | $ms ms | $(( count * 60000 / (ms > 0 ? ms : 1) )) kernels/min | $(grep -c '"status":"correct"' "$OUT/triton-batch-$label.jsonl") correct |"
}
{ echo "| batch | kernels | wall | rate | correct |"; echo "| --- | --- | --- | --- | --- |"; batch triton; batch cuda; batch triton-server-per-compile; } | tee "$OUT/triton-batch.md"
log "where the Triton batch's compile time went (compile.triton_timing of its records)"
"$PY" - "$OUT"/triton-batch-*.jsonl <<'PY' | tee -a "$OUT/triton-batch.md"
import json, sys
for path in sys.argv[1:]:
    recs = [json.loads(l) for l in open(path) if l.strip()]
    tot, n, ms, grader = {}, 0, 0.0, {}
    for r in recs:
        c = r.get("compile") or {}
        ms += c.get("ms") or 0
        for k, v in (c.get("triton_timing") or {}).items():
            tot[k] = tot.get(k, 0) + v
        for k, v in ((r.get("grader") or {}).get("phases") or {}).items():
            grader[k] = grader.get(k, 0) + (v or 0)
        for k in ("prepare_ms", "queue_ms", "worker_ms", "total_ms"):
            v = (r.get("grader") or {}).get(k)
            if isinstance(v, (int, float)):
                grader[k] = grader.get(k, 0) + v
        n += 1
    print(f"\n{path.rsplit('/', 1)[-1]}: {n} records, compile.ms summed {ms:.0f} ms, mean {ms / max(n, 1):.0f} ms")
    if tot:
        print("triton_timing summed: " + ", ".join(f"{k} {v:.0f}" for k, v in sorted(tot.items())))
    print("grader summed (ms): " + ", ".join(f"{k} {v:.0f}" for k, v in sorted(grader.items())))
PY
if [ "${TRITON_PROFILE:-1}" != 0 ]; then  # TRITON_PROFILE=0 leaves these out
log "the Triton batch compiled only (cold cache), and one file at a time (-j 1)"
for jobs in "" 1; do
  dir="$(mktemp -d)"; count=0
  for f in problems/L1/*/solution.py; do
    id="L1_$(basename "$(dirname "$f")")"; mkdir -p "$dir/$id"
    reps=4; [ -n "$jobs" ] && reps=1
    for i in $(seq 1 $reps); do { cat "$f"; echo "# copy $i"; } >"$dir/$id/s$i.py"; count=$((count + 1)); done
  done
  start=$(date +%s%N)
  KERNRL_CACHE="$(mktemp -d)" "$K" grade-dir "$dir" --compile-only ${jobs:+-j $jobs} --out "$OUT/triton-compile-only${jobs}.jsonl" --run co --no-resume >/dev/null 2>&1
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  echo "compile-only ${jobs:+-j $jobs }$count files: $ms ms ($(( count * 60000 / (ms > 0 ? ms : 1) )) files/min)"
  "$PY" -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l); c = r.get("compile") or {}
    print("  ", r["problem"], r["status"], round(c.get("ms") or 0), json.dumps(c.get("triton_timing")))' "$OUT/triton-compile-only${jobs}.jsonl" >"$OUT/triton-compile-only${jobs}.txt"
  [ -n "$jobs" ] && cat "$OUT/triton-compile-only${jobs}.txt"
done | tee -a "$OUT/triton-batch.md"
log "one process: Triton's import, a first compile and later compiles (scripts/triton_compile_profile.py)"
TRITON_CACHE_DIR="$(mktemp -d)" "$PY" scripts/triton_compile_profile.py | tee -a "$OUT/triton-batch.md"
TRITON_CACHE_DIR="$(mktemp -d)" "$PY" -X importtime -c 'import triton, triton.compiler, triton.language' 2>&1 | sort -t'|' -k2 -n | tail -12 | tee -a "$OUT/triton-batch.md"
echo "cores: $(nproc)" | tee -a "$OUT/triton-batch.md"
fi

log "one Triton answer, cold cache then cached"
for round in cold cached; do
  start=$(date +%s%N)
  "$K" eval tests/triton/answers/softmax.py --json >"$OUT/triton-softmax-$round.json" 2>"$OUT/triton-softmax-$round.err"
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  "$PY" - "$OUT/triton-softmax-$round.json" "$round" "$ms" <<'PY'
import json, sys
try:
    r = json.loads(open(sys.argv[1]).readline())
except Exception as e:
    print("no record:", e); sys.exit(0)
c = r.get("compile") or {}
t = (r.get("timing") or {}).get("kernel") or {}
print(f"{sys.argv[2]}: {r.get('status')} in {sys.argv[3]} ms (compile {c.get('ms', 0):.0f} ms, "
      f"cached {c.get('cached')}), kernel median {t.get('median_ms')} ms, speedup {r.get('speedup')}")
if r.get("error"):
    print("  error:", (r["error"].get("message") or "")[:800]); print((r["error"].get("log") or "")[-1500:])
PY
done
log "a markdown answer with autotune and heuristics"
"$K" eval tests/triton/answers/autotune_gelu.md --json >"$OUT/triton-gelu.json" 2>&1
head -c 1200 "$OUT/triton-gelu.json"; echo

log "bundled Triton solutions"
SOL="$(mktemp -d)"
n=0
for f in problems/L*/*/solution.py; do
  [ -e "$f" ] || continue
  d="$(dirname "$f")"; id="$(basename "$(dirname "$d")")_$(basename "$d")"
  mkdir -p "$SOL/$id" && cp "$f" "$SOL/$id/solution.py" && n=$((n + 1))
done
if [ "$n" -gt 0 ]; then
  start=$(date +%s)
  "$K" grade-dir "$SOL" --out "$OUT/triton-solutions.jsonl" --run triton-solutions --no-resume >"$OUT/triton-solutions.log" 2>&1
  log "graded $n Triton solutions in $(( $(date +%s) - start )) s"
  python3 scripts/results_table.py "$OUT/triton-solutions.jsonl" | tee "$OUT/triton-solutions.md" | tail -40
  log "timing faithful to Triton's own: kernrl's medians against triton.testing.do_bench"
  "$PY" scripts/triton_timing.py "$OUT/triton-solutions.jsonl" 2>"$OUT/triton-timing.err" | tee "$OUT/triton-timing.md"
  tail -3 "$OUT/triton-timing.err"
else
  log "no problems/*/*/solution.py yet"
fi

log "Triton attacks"
rm -f /tmp/kernrl-triton-attack-written
for f in tests/triton/attacks/*.py; do
  want="$(sed -n '1s/^# expect: //p' "$f")"
  timeout 300 "$K" eval "$f" --json --config "$CFG" >"$OUT/triton-attack.json" 2>"$OUT/triton-attack.err"
  got="$("$PY" -c 'import json,sys; r=json.loads(open(sys.argv[1]).readline()); print(r["status"], "|", ((r.get("error") or {}).get("message") or "")[:160].replace("\n"," "))' "$OUT/triton-attack.json" 2>/dev/null)"
  echo "$(basename "$f" .py): expected $want, got $got"
done | tee "$OUT/triton-attacks.md"
[ -e /tmp/kernrl-triton-attack-written ] && echo "LEAK: an attack wrote /tmp/kernrl-triton-attack-written"

log "Triton acceptance corpus (answers written from the Triton prompt alone)"
scripts/acceptance.sh --corpus tests/triton/corpus --build "$BUILD" --out "$OUT/triton-corpus" \
  >"$OUT/triton-corpus.md" 2>&1
tail -2 "$OUT/triton-corpus.md"
grep -F ' **' "$OUT/triton-corpus.md" | head -40

#!/usr/bin/env bash
# The training loop around the grader on a GPU (docs/training.md): kernrl serve with retrieved
# examples, one multi-turn episode (a compile error, then the bundled solution of L1_23_Softmax)
# through examples/multi_turn.py when Python's websockets is there, else the same turns through
# POST /v1/grade with trajectory fields; the next turn's prompt; report --by turn and --by step.
#   scripts/training-gpu.sh --build DIR --out DIR
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=build-gpu OUT=training-results
while [ $# -gt 0 ]; do
  case "$1" in
    --build) BUILD="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$OUT/answers"
KERNRL="$BUILD/kernrl"
SOL=problems/L1/23_Softmax/solution.cu
{ echo '```cuda'; sed '0,/__global__/s//__global__ not_a_type/' "$SOL"; echo '```'; } >"$OUT/answers/turn_1.md"
cp "$SOL" "$OUT/answers/turn_2.cu"
"$KERNRL" serve --port 0 --examples 2 --trace "$OUT/trace.jsonl" 2>"$OUT/serve.log" &
PID=$!
for _ in $(seq 600); do
  PORT=$(sed -n 's/.*listening on http:\/\/[^:]*:\([0-9]*\).*/\1/p' "$OUT/serve.log" | head -1)
  [ -n "$PORT" ] && break
  sleep 0.2
done
[ -n "${PORT:-}" ] || { cat "$OUT/serve.log"; kill "$PID"; exit 1; }
rc=0
if python3 -c 'import websockets' 2>/dev/null; then
  python3 examples/multi_turn.py --url "ws://127.0.0.1:$PORT/ws" --problem L1_23_Softmax \
    --answers "$OUT/answers" --step 1 --run gpu-test >"$OUT/episode.json" || rc=1
  python3 -c 'import json,sys; e=json.load(open(sys.argv[1])); print([(t["turn"], t["status"], t["reward"], round(t["return"], 4)) for t in e["turns"]])' "$OUT/episode.json"
else
  python3 - "$PORT" "$OUT/answers" >"$OUT/episode.json" <<'PY' || rc=1
import json, pathlib, sys, urllib.request
port, answers = sys.argv[1], pathlib.Path(sys.argv[2])
out = []
for turn, name in ((1, "turn_1.md"), (2, "turn_2.cu")):
    body = {"source": (answers / name).read_text(), "problem": "L1_23_Softmax", "trajectory": "gpu-episode",
            "turn": turn, "training": {"step": 1, "run": "gpu-test"}}
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/grade", data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    rec = json.loads(urllib.request.urlopen(req, timeout=300).read())
    out.append({"turn": turn, "status": rec["status"], "reward": rec.get("reward"), "speedup": rec.get("speedup")})
print(json.dumps(out))
PY
  cat "$OUT/episode.json"
fi
kill -TERM "$PID"; wait "$PID"
"$KERNRL" report "$OUT/trace.jsonl" --by turn | tee "$OUT/report-turn.md" | sed -n '/## Trajectories/,/## Statuses/p'
"$KERNRL" report "$OUT/trace.jsonl" --by step --format html >"$OUT/curves.html" || rc=1
exit $rc

#!/usr/bin/env bash
# The KernelBench suite on a GPU host, measured against KernelBench itself: built with the host's
# torch, checked against KernelBench's eager modules, its torch.compile baselines timed, and
# KernelBench-style generations graded by KernelBench's own eval and by kernrl side by side.
#
#   scripts/kb-gpu.sh --kernrl BUILD/kernrl --refdump BUILD/kernrl_suite_refdump \
#       --kernelbench KB_CHECKOUT --out OUT [steps...]
#
# steps (default: suite identity baselines side):
#   suite      kernrl suite add kernelbench (KB_LEVELS, default 1,2,3; KB_ONLY: problem ids, or
#              "gens": the problems of KB_GENS' generations)
#   identity   tools/suites/kb_identity.py in KB_SHARDS (default 4) processes on the GPU
#   baselines  tools/suites/kb_baselines.py: torch.compile and eager per problem (KB_BASELINES_ONLY:
#              problem ids first; KB_BASELINES_DEADLINE seconds, default 120; KB_BASELINES_SEED: a
#              baseline file of the same GPU to add to, timing only the problems it lacks)
#   side       scripts/kb_side_by_side.py over KB_GENS (folders of level_*_kernel.py files; default
#              tests/import/generations tests/kernelbench/generations) in KB_SIDE_DIR (default
#              /tmp/kernrl-kb-side; KB_SIDE_DEADLINE: seconds, then no more files); its side.json,
#              side_by_side.md and log are copied to OUT as kb-*. scripts/kb-side-gpu.sh runs it
#              beside the kernrl build and the suite's conversion instead, in one go
# KB_SUITE: the suite folder (default /tmp/kernrl-kb-suite; several GB of weights: not under OUT).
set -uo pipefail
cd "$(dirname "$0")/.."
K="" REFDUMP="" KB="" OUT=""
while [ $# -gt 0 ]; do
  case "$1" in
    --kernrl) K="$2"; shift 2 ;;
    --refdump) REFDUMP="$2"; shift 2 ;;
    --kernelbench) KB="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    *) break ;;
  esac
done
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(suite identity baselines side)
want() { for s in "${steps[@]}"; do [ "$s" = "$1" ] && return 0; done; return 1; }
log() { echo "== $(date -u +%H:%M:%S) $*"; }
[ -n "$K" ] && [ -n "$KB" ] && [ -n "$OUT" ] || { echo "usage: $0 --kernrl K --refdump R --kernelbench KB --out OUT [steps]" >&2; exit 2; }
mkdir -p "$OUT"
SUITE="${KB_SUITE:-/tmp/kernrl-kb-suite}"
JOBS="$(nproc)"

if want suite; then
  start=$(date +%s)
  if [ "${KB_ONLY:-}" = gens ]; then  # the problems of KB_GENS' generations
    KB_ONLY=$(for d in ${KB_GENS:-tests/import/generations tests/kernelbench/generations}; do ls "$d"; done |
      sed -nE 's/^level_([123])_problem_([0-9]+)_sample_.*\.py$/L\1_\2/p' | sort -u | paste -sd,)
  fi
  only=(); [ -n "${KB_ONLY:-}" ] && only=(--only "$KB_ONLY")
  # `kernrl suite add` runs tools/suites/kernelbench_suite.py; before kernrl is built (a build
  # beside it), the script itself.
  if [ -x "$K" ]; then builder=("$K" suite add kernelbench "$KB" --out "$SUITE"); else builder=(python3 tools/suites/kernelbench_suite.py "$KB" "$SUITE"); fi
  KERNRL_PYTHON="$(command -v python3)" "${builder[@]}" \
    --levels "${KB_LEVELS:-1,2,3}" --jobs "${KB_SUITE_JOBS:-$(( JOBS - 2 ))}" --timeout 240 "${only[@]}" >"$OUT/kb-suite-build.log" 2>&1 ||
    log "suite add failed (see kb-suite-build.log)"
  log "suite built in $(( $(date +%s) - start )) s: $(tail -2 "$OUT/kb-suite-build.log" | head -1)"
  cp "$SUITE/suite.json" "$OUT/kb-suite.json" 2>/dev/null
  grep '^FAIL' "$OUT/kb-suite-build.log" | head -30
fi

if want identity; then
  start=$(date +%s)
  n="${KB_SHARDS:-4}"
  gpus=$(nvidia-smi -L | wc -l); [ "$gpus" -ge 1 ] || gpus=1
  for k in $(seq 0 $(( n - 1 ))); do  # shards spread over the GPUs, round robin
    CUDA_VISIBLE_DEVICES=$(( k % gpus )) python3 tools/suites/kb_identity.py "$SUITE" "$KB" --refdump "$REFDUMP" --device cuda \
      --max-bench-mb "${KB_MAX_BENCH_MB:-2048}" --shard "$k/$n" >"$OUT/kb-identity-$k.md" 2>"$OUT/kb-identity-$k.err" &
  done
  wait
  {
    echo "| problem | size sets | weights = KernelBench's | max abs diff | verdict |"
    echo "| --- | --- | --- | --- | --- |"
    cat "$OUT"/kb-identity-[0-9]*.md | grep '^| L' | sort -t_ -k1.4n -k2n
  } >"$OUT/kb-identity.md"
  total=$(grep -c '^| L' "$OUT/kb-identity.md"); same=$(grep -c '| same |$' "$OUT/kb-identity.md")
  log "identity: $same of $total problems the same, in $(( $(date +%s) - start )) s"
  grep '^| L' "$OUT/kb-identity.md" | grep -v '| same |$' | head -30
  cat "$OUT"/kb-identity-*.err | tail -5
fi

if want baselines; then
  start=$(date +%s)
  # KB_BASELINES_SEED: a baseline file of the same GPU to start from; its problems are not timed again
  python3 tools/suites/kb_baselines.py "$SUITE" --only "${KB_BASELINES_ONLY:-}" --all \
    ${KB_BASELINES_SEED:+--seed "$KB_BASELINES_SEED" --missing} \
    --jobs "${KB_BASELINES_JOBS:-8}" --deadline "${KB_BASELINES_DEADLINE:-120}" --timeout "${KB_BASELINES_TIMEOUT:-120}" >"$OUT/kb-baselines.log" 2>&1
  log "compile baselines in $(( $(date +%s) - start )) s: $(tail -1 "$OUT/kb-baselines.log")"
  grep '^FAIL' "$OUT/kb-baselines.log" | grep -v deadline | head -10
  cp "$SUITE"/baselines/*.json "$OUT/" 2>/dev/null
fi

if want side; then
  start=$(date +%s)
  # shellcheck disable=SC2086
  SIDE="${KB_SIDE_DIR:-/tmp/kernrl-kb-side}"  # the builds and copies: not under $OUT
  python3 scripts/kb_side_by_side.py --kernrl "$K" --suite "$SUITE" --kernelbench "$KB" \
    --gens ${KB_GENS:-tests/import/generations tests/kernelbench/generations} --out "$SIDE" --tag "${KB_TAG:-run}" \
    --jobs "$(( JOBS / 2 ))" --deadline "${KB_SIDE_DEADLINE:-0}" 2>&1 | tail -8
  for f in side.json side_by_side.md side.log; do cp "$SIDE/$f" "$OUT/kb-$f" 2>/dev/null; done
  log "side by side in $(( $(date +%s) - start )) s"
fi

#!/usr/bin/env bash
# Compile time through the kernrl-nvrtc fork server and its precompiled headers, against a
# kernrl-nvrtc process per compile, measured as one session sees it: `kernrl serve --stdio
# --compile-only`, one answer at a time (scripts/nvrtc_server/steps.py), every answer a cache miss
# (a distinct comment per copy). CPU only: NVRTC needs no GPU. Then the acceptance corpus
# (tests/acceptance) compiled with and without the server: every cubin must be the same.
# With --gpu (a machine with a GPU), also one session's step graded on the GPU for the CUB kernel
# with its PCH ready, against grade-dir's time per kernel for the same kernel.
#   scripts/nvrtc-server-bench.sh [--build DIR] [--steps N] [--gpu] [--out FILE]
# (--steps 0: the acceptance corpus only; --corpus-grep REGEX: only its answers whose text matches)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=build STEPS=8 OUTFILE="" GPU=0 CORPUS_GREP=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build) BUILD="$2"; shift ;;
    --steps) STEPS="$2"; shift ;;
    --out) OUTFILE="$2"; shift ;;
    --gpu) GPU=1 ;;
    --corpus-grep) CORPUS_GREP="$2"; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
KERNRL="$(cd "$BUILD" && pwd)/kernrl"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
ANSWERS=tests/acceptance/answers
declare -A FILE=([cub]=L1_23_Softmax__crlf-cub.md [cooperative_groups]=L1_23_Softmax__plain-cu-cg.cu
                 [plain]=L1_26_GELU___cu-float4.md)
declare -A PROBLEM=([cub]=L1_23_Softmax [cooperative_groups]=L1_23_Softmax [plain]=L1_26_GELU_)
copy() {  # copy FILE NOTE OUT: FILE with a `// NOTE` line at the end of its code (a new cache key)
  python3 - "$@" <<'PY'
import sys
src, note, out = sys.argv[1:4]
lines = open(src, encoding="utf-8", errors="surrogateescape").read().split("\n")
fences = [i for i, l in enumerate(lines) if l.lstrip().startswith("```")]
at = fences[1] if src.endswith(".md") and len(fences) >= 2 else len(lines)
lines.insert(at, "// " + note)
open(out, "w", encoding="utf-8", errors="surrogateescape").write("\n".join(lines))
PY
}
config() {  # config NAME SERVER PCH_SETS
  printf 'compile:\n  cache_dir: %s\n  server: %s\n  pch_sets: %s\n' "$TMP/cache-$1" "$2" "$3" >"$TMP/$1.yaml"
}
if [ "$GPU" = 1 ]; then
  # One session on the GPU: a warm-up copy makes the PCH, then STEPS copies, one at a time; then
  # grade-dir over STEPS other copies (compiles overlapped with the GPU).
  config gpu-serve true 64
  config gpu-grade-dir true 64
  items=()
  mkdir -p "$TMP/gpu-dir/L1_23_Softmax"
  for i in $(seq 0 "$STEPS"); do
    copy "$ANSWERS/${FILE[cub]}" "gpu step $i" "$TMP/gpu-step-$i.md"
    items+=("L1_23_Softmax=$TMP/gpu-step-$i.md")
    [ "$i" -gt 0 ] && copy "$ANSWERS/${FILE[cub]}" "gpu grade-dir $i" "$TMP/gpu-dir/L1_23_Softmax/s$i.md"
  done
  python3 scripts/nvrtc_server/steps.py "$KERNRL" "$TMP/gpu-serve.yaml" --gpu "${items[@]}" |
    tee "$TMP/gpu-steps.jsonl" >&2
  # grade-dir's own figure: its summary's kernels/min, as a time per kernel.
  "$KERNRL" grade-dir "$TMP/gpu-dir" --no-resume --config "$TMP/gpu-grade-dir.yaml" \
    --out "$TMP/gpu-grade-dir.jsonl" >/dev/null 2>"$TMP/gpu-grade-dir.log" || true
  grep 'kernels/min' "$TMP/gpu-grade-dir.log" >&2 || true
  sed -n 's|.* = \([0-9.]*\) kernels/min.*|\1|p' "$TMP/gpu-grade-dir.log" |
    python3 -c "import sys; print(60000 / float(sys.stdin.read()))" >"$TMP/gpu-grade-dir-ms" || true
fi
: >"$TMP/steps.jsonl"
[ "$STEPS" -gt 0 ] && modes=("server+pch:true:64" "server:true:0" "process:false:0") || modes=()
for mode in "${modes[@]}"; do
  IFS=: read -r name server sets <<<"$mode"
  for kind in cub cooperative_groups plain; do
    config "$name-$kind" "$server" "$sets"
    items=()
    for i in $(seq "$STEPS"); do  # the same kernel, a cache miss each time
      f="$TMP/$kind-$i-$(basename "${FILE[$kind]}")"
      copy "$ANSWERS/${FILE[$kind]}" "copy $i" "$f"
      items+=("${PROBLEM[$kind]}=$f")
    done
    python3 scripts/nvrtc_server/steps.py "$KERNRL" "$TMP/$name-$kind.yaml" "${items[@]}" |
      python3 -c "import json,sys
for l in sys.stdin: r = json.loads(l); r.update(mode='$name', kernel='$kind'); print(json.dumps(r), flush=True)" |
      tee -a "$TMP/steps.jsonl" >&2
  done
done

# The acceptance corpus: the same statuses and cubins through the fork server, with every PCH
# warmed by two copies of every answer (all copies first, then the answers), as with a process per
# compile; both through serve, so that each answer is the same source (and cache key) in both.
items=()
originals=()
while IFS=$'\t' read -r problem file; do
  [ -n "$CORPUS_GREP" ] && ! grep -Eq "$CORPUS_GREP" "$ANSWERS/$file" && continue
  mkdir -p "$TMP/corpus/$problem"
  cp "$ANSWERS/$file" "$TMP/corpus/$problem/"
  copy "$ANSWERS/$file" "warm-up" "$TMP/warm-$file"
  copy "$ANSWERS/$file" "warm-up 2" "$TMP/warm2-$file"
  items+=("$problem=$TMP/warm-$file" "$problem=$TMP/warm2-$file")
  originals+=("$problem=$TMP/corpus/$problem/$file")
done < <(python3 -c "import json
for e in json.load(open('tests/acceptance/manifest.json')): print(e['problem'] + '\t' + e['file'].split('/')[-1])")
config corpus-server true 64
config corpus-process false 0
python3 scripts/nvrtc_server/steps.py "$KERNRL" "$TMP/corpus-server.yaml" "${items[@]}" "${originals[@]}" \
  >"$TMP/corpus-server.jsonl"
python3 scripts/nvrtc_server/steps.py "$KERNRL" "$TMP/corpus-process.yaml" "${originals[@]}" \
  >"$TMP/corpus-process.jsonl"
python3 scripts/nvrtc_server/summary.py "$TMP" >"$TMP/table.md"
cat "$TMP/table.md"
[ -n "$OUTFILE" ] && cp "$TMP/table.md" "$OUTFILE"
exit 0

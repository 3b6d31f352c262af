#!/usr/bin/env bash
# The `triton-wrapper` phase of scripts/gpu-test.sh, on a GPU host whose Python has Triton: Triton
# answers with a host wrapper and no launch block (docs/kernel-format.md, "Host wrappers") graded
# end to end with the expectations of their manifests, through scripts/acceptance.sh: the test
# answers of tests/triton/wrappers and, when it is there, the corpus of model-written wrapper
# answers tests/triton/wrapper_corpus (answers/*.py|md and manifest.json, laid out as
# tests/triton/corpus), or the folders given with --corpus. For each corpus: a table (expected and
# got, grader-caused rejections), the trace, and the launch blocks derived from the wrappers.
# Writes triton-wrapper-*.{md,jsonl} under $OUT; exit 1 if an answer got another status.
#   scripts/triton-wrapper-gpu.sh --build DIR [--out DIR] [--corpus DIR]...
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=build
OUT="${OUT:-$PWD/gpu-results}"
CORPORA=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build) BUILD="$2"; shift ;;
    --out) OUT="$2"; shift ;;
    --corpus) CORPORA+=("$2"); shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
if [ ${#CORPORA[@]} -eq 0 ]; then
  CORPORA=(tests/triton/wrappers)
  [ -e tests/triton/wrapper_corpus/manifest.json ] && CORPORA+=(tests/triton/wrapper_corpus)
fi
mkdir -p "$OUT"
log() { echo "== $(date -u +%H:%M:%S) $*"; }
export KERNRL_TRITON_PYTHON="${KERNRL_TRITON_PYTHON:-$(command -v python3)}"
rc=0
for c in "${CORPORA[@]}"; do
  name="$(basename "$c")"
  log "Triton host-wrapper answers: $c"
  start=$(date +%s)
  OUT="$OUT/triton-wrapper-$name" scripts/acceptance.sh --corpus "$c" --build "$BUILD" \
    --out "$OUT/triton-wrapper-$name" >"$OUT/triton-wrapper-$name.md" 2>&1 || rc=1
  log "graded in $(( $(date +%s) - start )) s: $(tail -1 "$OUT/triton-wrapper-$name.md")"
  grep -F ' **' "$OUT/triton-wrapper-$name.md" | head -40
  cp "$OUT/triton-wrapper-$name/acceptance.jsonl" "$OUT/triton-wrapper-$name.jsonl" 2>/dev/null
  # The launch blocks kernrl derived, with each answer's status and speedup.
  python3 - "$OUT/triton-wrapper-$name.jsonl" <<'PY' >>"$OUT/triton-wrapper-$name.md"
import json, os, sys
print()
for line in open(sys.argv[1], encoding="utf-8"):
    r = json.loads(line)
    w = r.get("wrapper_plan") or {}
    print("### %s: %s (speedup %s)" % (os.path.basename(r["file"]), r["status"], r.get("speedup")))
    if w:
        print("```yaml\n%s```" % w.get("launch_block", ""))
        for n in w.get("notes") or []:
            print("- note:", n)
    if r.get("error"):
        print("error (line %s): %s" % (r["error"].get("line"), (r["error"].get("message") or "")[:600]))
PY
done
exit $rc

#!/usr/bin/env bash
# The kernrl CLI end to end on a machine without a GPU: list, show, eval --compile-only (exit codes
# and records), grade-dir --compile-only on a fixture directory, report.
set -u
KERNRL="$1"
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
export KERNRL_CACHE="$TMP/cache"
fail=0
check() {  # check NAME EXPECTED_EXIT COMMAND...
  local name="$1" want="$2"
  shift 2
  "$@" >"$TMP/out" 2>"$TMP/err"
  local got=$?
  if [ "$got" != "$want" ]; then
    echo "FAIL $name: exit $got, expected $want"; sed 's/^/    /' "$TMP/out" "$TMP/err" | head -20; fail=1
  else
    echo "ok   $name"
  fi
}
has() {  # has NAME PATTERN FILE
  if grep -q -- "$2" "$3"; then echo "ok   $1"; else echo "FAIL $1: '$2' not in output"; head -20 "$3"; fail=1; fi
}

check "list" 0 "$KERNRL" list
has "list shows softmax" "L1_23_Softmax" "$TMP/out"
check "list --json" 0 "$KERNRL" list --level 1 --json
has "list --json is JSONL" '"id":"L1_23_Softmax"' "$TMP/out"
check "show" 0 "$KERNRL" show L1_23
has "show has the template" "/\* kernrl" "$TMP/out"
check "show --prompt" 0 "$KERNRL" show L1_23_Softmax --prompt
has "prompt has the contract" "kernel-file contract" "$TMP/out"
check "show unknown problem" 2 "$KERNRL" show L1_999
check "bad flag" 2 "$KERNRL" eval --bogus x.cu
check "unreadable file" 2 "$KERNRL" eval "$TMP/missing.cu" --problem L1_23_Softmax
check "unknown problem" 2 "$KERNRL" eval "$ROOT/problems/L1/23_Softmax/solution.cu" --problem L9_999

SOL="$ROOT/problems/L1/23_Softmax/solution.cu"
check "eval --compile-only" 0 "$KERNRL" eval "$SOL" --compile-only --json
has "compiled status" '"status":"compiled"' "$TMP/out"
has "ran false" '"ran":false' "$TMP/out"
check "eval --compile-only cached" 0 "$KERNRL" eval "$SOL" --compile-only --json
has "second compile is cached" '"cached":true' "$TMP/out"
check "eval human summary says nothing ran" 0 "$KERNRL" eval "$SOL" --compile-only
has "summary" "nothing ran" "$TMP/out"

printf 'I think this works:\n```cuda\nextern "C" __global__ void k(float* out) { out[0] = 1 }\n/* kernrl\nlaunches:\n  - {kernel: k, grid: [1], block: [1], args: [out]}\n*/\n```\n' >"$TMP/answer.md"
check "markdown compile error" 1 "$KERNRL" eval "$TMP/answer.md" --problem L1_23_Softmax --compile-only --json
has "compile_error status" '"status":"compile_error"' "$TMP/out"
has "error names the markdown line" 'answer.md(3)' "$TMP/out"
printf 'No code, sorry.\n' >"$TMP/none.md"
check "no code is a format error" 1 "$KERNRL" eval "$TMP/none.md" --problem L1_23_Softmax --compile-only --json
has "format_error status" '"status":"format_error"' "$TMP/out"
check "feedback text" 1 "$KERNRL" eval "$TMP/none.md" --problem L1_23_Softmax --compile-only --feedback
has "feedback has guidance" "fenced" "$TMP/out"

# A launch configuration that cannot run is a launch_error before anything runs, naming the
# dimension, its expression, its value and the size set.
printf '/* kernrl\nproblem: L1_23_Softmax\nlaunches:\n  - {kernel: k, grid: [batch_size / 4], block: [256], args: [x, out, dim]}\n*/\nextern "C" __global__ void k(const float* x, float* out, int dim) {}\n' >"$TMP/grid0.cu"
check "grid 0 is a launch error" 1 "$KERNRL" eval "$TMP/grid0.cu" --compile-only --json
has "launch_error status" '"status":"launch_error"' "$TMP/out"
has "names dimension, value and sizes" 'grid.x = batch_size / 4 is 0 at batch_size=3 dim=4099' "$TMP/out"
# An unquoted expression with a comma inside a flow mapping, CRLF line ends: compiles.
printf '/* kernrl\r\nproblem: L1_23_Softmax\r\nlaunches:\r\n  - {kernel: k, grid: [cdiv(batch_size, 1)], block: [256], args: [x, out, dim]}\r\nscratch:\r\n  buf: {dtype: float32, count: 2 * cdiv(dim, 256)}\r\n*/\r\nextern "C" __global__ void k(const float* x, float* out, int dim) {}\r\n' >"$TMP/crlf.cu"
check "CRLF and unquoted expressions compile" 0 "$KERNRL" eval "$TMP/crlf.cu" --compile-only --json
has "compiled" '"status":"compiled"' "$TMP/out"
# A KernelBench-style answer is named as such.
printf 'import torch\nfrom torch.utils.cpp_extension import load_inline\nclass ModelNew(torch.nn.Module):\n    pass\n' >"$TMP/level_1_problem_23_sample_0_kernel.py"
check "KernelBench module is a format error" 1 "$KERNRL" eval "$TMP/level_1_problem_23_sample_0_kernel.py" --compile-only --json
has "names the format" 'KernelBench-style' "$TMP/out"
has "names the docs" 'docs/kernel-format.md' "$TMP/out"

# grade-dir on a fixture directory: KernelBench names, a folder per problem, garbage.
D="$TMP/gen"
mkdir -p "$D/L1_23_Softmax"
cp "$SOL" "$D/level_1_problem_23_sample_0_kernel.cu"
cp "$TMP/answer.md" "$D/level_1_problem_23_sample_1_kernel.md"
cp "$SOL" "$D/L1_23_Softmax/a.cu"
cp "$TMP/none.md" "$D/L1_23_Softmax/b.txt"
check "grade-dir --compile-only" 0 "$KERNRL" grade-dir "$D" --compile-only --quiet --kernelbench-json "$TMP/kb.json"
lines=$(wc -l <"$D/kernrl-traces.jsonl")
[ "$lines" = 4 ] && echo "ok   four records" || { echo "FAIL grade-dir wrote $lines records"; fail=1; }
check "grade-dir resume grades nothing new" 0 "$KERNRL" grade-dir "$D" --compile-only --quiet
lines=$(wc -l <"$D/kernrl-traces.jsonl")
[ "$lines" = 4 ] && echo "ok   resume adds nothing" || { echo "FAIL resume: $lines records"; fail=1; }
# Shards: two slices together cover every file exactly once.
S="$TMP/shards"
mkdir -p "$S/L1_23_Softmax"
for i in 1 2 3 4 5 6 7; do cp "$SOL" "$S/L1_23_Softmax/s$i.cu"; done
check "shard 0/2" 0 "$KERNRL" grade-dir "$S" --compile-only --quiet --shard 0/2 --out "$TMP/s0.jsonl"
check "shard 1/2" 0 "$KERNRL" grade-dir "$S" --compile-only --quiet --shard 1/2 --out "$TMP/s1.jsonl"
total=$(cat "$TMP/s0.jsonl" "$TMP/s1.jsonl" | wc -l)
uniq=$(cat "$TMP/s0.jsonl" "$TMP/s1.jsonl" | grep -o '"file":"[^"]*"' | sort -u | wc -l)
[ "$total" = 7 ] && [ "$uniq" = 7 ] && echo "ok   shards partition the files" || { echo "FAIL shards: $total records, $uniq files"; fail=1; }
check "bad shard" 2 "$KERNRL" grade-dir "$S" --compile-only --quiet --shard 2/2
check "report" 0 "$KERNRL" report "$D/kernrl-traces.jsonl"
check "report json" 0 "$KERNRL" report "$D/kernrl-traces.jsonl" --format json
exit $fail

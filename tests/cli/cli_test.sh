#!/usr/bin/env bash
# The kernrl CLI end to end on a machine without a GPU: list, show, eval --compile-only (exit codes
# and records), grade-dir --compile-only on a fixture directory, report.
set -u
KERNRL="$1"
source "$(dirname "$0")/lib.sh"
export KERNRL_CACHE="$TMP/cache"

check "list" 0 "$KERNRL" list
has "list shows softmax" "L1_23_Softmax" "$TMP/out"
check "list --json" 0 "$KERNRL" list --level 1 --json
has "list --json is JSONL" '"id":"L1_23_Softmax"' "$TMP/out"
check "show" 0 "$KERNRL" show L1_23
has "show has the template" "/\* kernrl" "$TMP/out"
check "show --prompt" 0 "$KERNRL" show L1_23_Softmax --prompt
has "prompt has the contract" "kernel-file contract" "$TMP/out"
check "show unknown problem" 2 "$KERNRL" show L1_999
check "show --prompt --examples 2" 0 "$KERNRL" show L1_23_Softmax --prompt --examples 2
has "the prompt starts with two examples" "## Example 2: " "$TMP/out"
check "show --prompt --examples --json names them" 0 "$KERNRL" show L1_23_Softmax --prompt --examples 1 --json
has "the examples' ids" '"examples":\["L' "$TMP/out"
check "show --previous needs --prompt" 2 "$KERNRL" show L1_23_Softmax --previous "$0"
check "show --record needs --previous" 2 "$KERNRL" show L1_23_Softmax --prompt --record "$0"
check "show --prompt --previous without a record" 0 "$KERNRL" show L1_23_Softmax --prompt --previous "$0"
has "the status is unknown" "Status: unknown" "$TMP/out"
check "bad flag" 2 "$KERNRL" eval --bogus x.cu
check "unreadable file" 2 "$KERNRL" eval "$TMP/missing.cu" --problem L1_23_Softmax
check "unknown problem" 2 "$KERNRL" eval "$ROOT/problems/L1/23_Softmax/solution.cu" --problem L9_999

SOL="$ROOT/problems/L1/23_Softmax/solution.cu"
check "eval --compile-only" 0 "$KERNRL" eval "$SOL" --compile-only --json
has "compiled status" '"status":"compiled"' "$TMP/out"
has "ran false" '"ran":false' "$TMP/out"
check "eval - reads standard input" 0 sh -c "\"\$0\" eval - --problem l1_23 --compile-only --json < \"\$1\"" "$KERNRL" "$SOL"
has "stdin label" '"file":"<stdin>"' "$TMP/out"
check "problem by part of its name, any case" 0 "$KERNRL" show sum_REDUCTION
check "unknown problem: did you mean" 2 "$KERNRL" show L1_23_Softmx
has "suggestion" "did you mean L1_23_Softmax" "$TMP/err"
check "eval --compile-only cached" 0 "$KERNRL" eval "$SOL" --compile-only --json
has "second compile is cached" '"cached":true' "$TMP/out"
check "eval human summary says nothing ran" 0 "$KERNRL" eval "$SOL" --compile-only
has "summary" "nothing ran" "$TMP/out"
check "eval without a GPU: compiled, nothing ran, exit 3" 3 env CUDA_VISIBLE_DEVICES= "$KERNRL" eval "$SOL" --json
has "nothing ran: compiled record" '"status":"compiled"' "$TMP/out"

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

# ---- inputs that must still give exactly one complete record ----
# Root reads any file: permission cases run kernrl without the capabilities that bypass permissions.
RUNAS=()
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then RUNAS=(setpriv --bounding-set -dac_override,-dac_read_search); fi
jq_py() {  # jq_py NAME PYTHON-EXPR-ON-r FILE: the expression holds for the one JSON record in FILE
  if python3 -c "import json,sys; r=json.loads(open(sys.argv[1],'rb').read().decode('utf-8')); sys.exit(0 if ($2) else 1)" "$3" 2>/dev/null; then
    echo "ok   $1"; else echo "FAIL $1: not ($2)"; head -c 600 "$3"; echo; fail=1; fi
}
{ printf '// caf\351: a Latin-1 comment\n'; cat "$SOL"; } >"$TMP/latin1.cu"
check "Latin-1 comment compiles" 0 "$KERNRL" eval "$TMP/latin1.cu" --compile-only --json
jq_py "Latin-1: graded, hash of the raw bytes" "r['status']=='compiled' and r['problem']=='L1_23_Softmax' and r['source_sha256']=='$(sha256sum "$TMP/latin1.cu" | cut -d' ' -f1)'" "$TMP/out"
cp "$SOL" "$TMP/caf$(printf '\351').cu"
check "non-UTF-8 file name" 0 "$KERNRL" eval "$TMP/caf$(printf '\351').cu" --compile-only --json
jq_py "file name escaped as \\xe9" "r['file'].endswith('caf\\\\xe9.cu')" "$TMP/out"
check "unreadable file: a record and exit 2" 2 "$KERNRL" eval "$TMP/missing.cu" --problem L1_23_Softmax --json --trace "$TMP/t.jsonl"
jq_py "unreadable record" "r['status']=='format_error' and r['problem'] is None and r['problem_unknown']['reason']=='unreadable' and r['source_sha256'] is None and 'No such file' in r['error']['message']" "$TMP/out"
has "unreadable: reason on stderr" "cannot read" "$TMP/err"
has "unreadable: appended with --trace" '"reason":"unreadable"' "$TMP/t.jsonl"
check "unreadable file, human summary" 2 "$KERNRL" eval "$TMP/missing.cu"
has "summary names why there is no problem" "(no problem: unreadable)" "$TMP/out"
check "unknown --problem: a record and exit 2" 2 "$KERNRL" eval "$SOL" --problem L9_999 --json
jq_py "unknown --problem record" "r['problem'] is None and r['problem_unknown']=={'reason':'unknown_problem','named':'L9_999','from':'option'} and len(r['source_sha256'])==64" "$TMP/out"
check "unknown --problem: feedback says it was not graded" 2 "$KERNRL" eval "$SOL" --problem L9_999 --feedback --compile-only
has "feedback: not graded" "was not graded" "$TMP/out"
if grep -q "kernrl list" "$TMP/out"; then echo "FAIL kernrl's lookup message leaked into the feedback"; fail=1; fi
sed 's/problem: L1_23_Softmax/problem: L9_999_Nope/' "$SOL" >"$TMP/unknown_block.cu"
check "unknown problem in the launch block: exit 1" 1 "$KERNRL" eval "$TMP/unknown_block.cu" --compile-only --json
jq_py "unknown block problem record" "r['problem'] is None and r['problem_unknown']['from']=='launch_block' and r['problem_unknown']['named']=='L9_999_Nope'" "$TMP/out"
cp "$SOL" "$TMP/noread.cu"; chmod 000 "$TMP/noread.cu"
if [ ${#RUNAS[@]} -gt 0 ] || [ "$(id -u)" != 0 ]; then
  check "permission denied: exit 2" 2 "${RUNAS[@]}" "$KERNRL" eval "$TMP/noread.cu" --compile-only --json
  jq_py "permission denied record" "'Permission denied' in r['error']['message'] and r['problem_unknown']['reason']=='unreadable' and r['source_sha256'] is None" "$TMP/out"
fi
check "seed too large" 2 "$KERNRL" eval "$SOL" --compile-only --seed 18446744073709551616
has "seed error says why" "too large" "$TMP/err"
check "negative seed" 2 "$KERNRL" eval "$SOL" --compile-only --seed -1
check "largest seed" 0 "$KERNRL" eval "$SOL" --compile-only --json --seed 18446744073709551615
has "largest seed recorded" '"seed":18446744073709551615' "$TMP/out"
printf 'timeouts:\n  compile_s: .nan\n' >"$TMP/nan.yaml"
check "config NaN timeout refused" 2 "$KERNRL" eval "$SOL" --compile-only --config "$TMP/nan.yaml"
has "config error names key and line" "nan.yaml:2: timeouts.compile_s" "$TMP/err"
check "unwritable --trace" 2 "$KERNRL" eval "$SOL" --compile-only --trace "$TMP/latin1.cu/t.jsonl"
has "--trace error names the file" "latin1.cu" "$TMP/err"

# ---- oversized compile logs are capped in the record ----
# A 500-byte kernel whose one error names a type of 2^18 leaves: NVRTC writes a 4 MB log.
cat >"$TMP/flood.cu" <<'CU'
/* kernrl
problem: L1_23_Softmax
launches:
  - {kernel: k, grid: [batch_size], block: [256], args: [x, out, dim]}
*/
template <class A, class B> struct P {};
template <int N, class T> struct D { using type = typename D<N - 1, P<T, T>>::type; };
template <class T> struct D<0, T> { using type = T; };
extern "C" __global__ void k(const float* x, float* out, int dim) {
  typename D<18, int>::type v = 1;
  out[0] = dim;
}
CU
printf 'records:\n  compile_log_bytes: 4096\n' >"$TMP/caps.yaml"
check "compile log flood: compile_error" 1 "$KERNRL" eval "$TMP/flood.cu" --compile-only --json --config "$TMP/caps.yaml"
jq_py "flood: log capped with a note" "r['status']=='compile_error' and len(r['error']['log'].encode())<=4096 and r['error']['log_cut_bytes']>1000000 and 'kernrl cut' in r['error']['log']" "$TMP/out"
size=$(wc -c <"$TMP/out")
[ "$size" -lt 20000 ] && echo "ok   flood: record is small ($size bytes)" || { echo "FAIL flood record is $size bytes"; fail=1; }

# ---- grade-dir robustness ----
G="$TMP/odd"
mkdir -p "$G/L1_23_Softmax" "$G/locked/L1_23_Softmax" "$G/unattributed"
cp "$SOL" "$G/L1_23_Softmax/a.cu"
cp "$TMP/latin1.cu" "$G/L1_23_Softmax/latin1.cu"
cp "$SOL" "$G/level_1_problem_23_sample_99999999999999999999_kernel.cu"
cp "$SOL" "$G/level_9_problem_999_sample_0_kernel.cu"
cp "$TMP/unknown_block.cu" "$G/unattributed/u.cu"
cp "$SOL" "$G/locked/L1_23_Softmax/hidden_by_permissions.cu"
cp "$SOL" "$G/L1_23_Softmax/noread.cu"; chmod 000 "$G/L1_23_Softmax/noread.cu"
ln -s loop.cu "$G/L1_23_Softmax/loop.cu"
ln -s "$G" "$G/L1_23_Softmax/up"
echo '{}' >"$G/notes.txt"
OUTF="$G/./results/x.txt"  # inside DIR, spelled with ./, in a folder that does not exist yet, graded extension
LOCKED=0; { [ ${#RUNAS[@]} -gt 0 ] || [ "$(id -u)" != 0 ]; } && LOCKED=1  # whether chmod 000 really locks kernrl out
check "grade-dir on odd inputs" 0 "${RUNAS[@]}" "$KERNRL" grade-dir "$G/" --compile-only --quiet --out "$OUTF" --no-resume
has "symlink loop reported" "loop.cu: a symlink loop" "$TMP/err"
has "folder link not followed" "not followed" "$TMP/err"
has "huge sample number reported" "out of range" "$TMP/err"
python3 - "$G/results/x.txt" "$LOCKED" <<'PY' && echo "ok   one complete record per file, own output not graded" || { echo "FAIL grade-dir records"; fail=1; }
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1], "rb").read().decode("utf-8").splitlines()]
by = {r["file"].split("/odd/", 1)[1]: r for r in recs}
assert len(by) == len(recs) == 9, sorted(by)
assert not any(k.startswith("results/") for k in by), "graded its own output"
assert by["L1_23_Softmax/latin1.cu"]["status"] == "compiled"
assert by["L1_23_Softmax/loop.cu"]["problem_unknown"]["reason"] == "unreadable"
if sys.argv[2] == "1":
    assert by["L1_23_Softmax/noread.cu"]["problem_unknown"] == {"reason": "unreadable", "named": "L1_23_Softmax", "from": "path"}
    assert by["L1_23_Softmax/noread.cu"]["source_sha256"] is None
assert by["level_1_problem_23_sample_99999999999999999999_kernel.cu"]["sample"] is None
assert by["level_1_problem_23_sample_99999999999999999999_kernel.cu"]["status"] == "compiled"
assert by["level_9_problem_999_sample_0_kernel.cu"]["problem_unknown"] == {"reason": "unknown_problem", "named": "L9_999", "from": "path"}
assert by["unattributed/u.cu"]["problem_unknown"]["from"] == "launch_block"
assert by["notes.txt"]["problem_unknown"]["reason"] == "not_named"
for r in recs:
    assert "source_sha256" in r and "status" in r and "error" in r and "problem" in r
    assert (r["problem"] is None) == ("problem_unknown" in r)
    assert (r["source_sha256"] is None) == (r.get("problem_unknown", {}).get("reason") == "unreadable")
PY
check "grade-dir resume: nothing new, unreadable and unknown included" 0 "${RUNAS[@]}" "$KERNRL" grade-dir "./$(realpath --relative-to=. "$G")" --compile-only --quiet --out "$G/results/x.txt"
n=$(wc -l <"$G/results/x.txt")
[ "$n" = 9 ] && echo "ok   resume appends nothing (DIR spelled differently)" || { echo "FAIL resume appended: $n records"; fail=1; }
check "grade-dir another run name grades again" 0 "${RUNAS[@]}" "$KERNRL" grade-dir "$G" --compile-only --quiet --out "$G/results/x.txt" --run second
n=$(wc -l <"$G/results/x.txt")
[ "$n" = 18 ] && echo "ok   resume is keyed by run name" || { echo "FAIL second run: $n records"; fail=1; }
check "report: unattributed records shown apart" 0 "$KERNRL" report "$G/results/x.txt" --format json
python3 - "$TMP/out" "$G/results/x.txt" <<'PY' && echo "ok   report: unattributed outside every metric" || { echo "FAIL report unattributed"; head -c 800 "$TMP/out"; fail=1; }
import json, sys
a = json.load(open(sys.argv[1]))
recs = [json.loads(l) for l in open(sys.argv[2], "rb").read().decode("utf-8").splitlines()]
nulls = sum(r["problem"] is None for r in recs)
assert nulls >= 8 and a["unattributed"]["records"] == nulls, (nulls, a["unattributed"])
assert a["records"] == len(recs) - nulls
for run in a["runs"]:
    assert run["samples"] == (len(recs) - nulls) // 2 and run["problems"] == 1, run
assert a["unattributed"]["runs"]["second"]["reasons"]["unknown_problem"] == 2
PY
check "report md" 0 "$KERNRL" report "$G/results/x.txt"
has "report md: unattributed section" "## Unattributed" "$TMP/out"
if [ ${#RUNAS[@]} -gt 0 ] || [ "$(id -u)" != 0 ]; then
  chmod 000 "$G/locked"
  check "unreadable folder: exit 1" 1 "${RUNAS[@]}" "$KERNRL" grade-dir "$G" --compile-only --quiet --out "$TMP/locked.jsonl"
  has "unreadable folder named" "cannot read the folder .*locked" "$TMP/err"
  check "unreadable DIR itself: exit 2" 2 "${RUNAS[@]}" "$KERNRL" grade-dir "$G/locked" --compile-only --quiet --out "$TMP/locked2.jsonl"
  has "unreadable DIR named" "cannot read .*locked: Permission denied" "$TMP/err"
  chmod 755 "$G/locked"
fi
check "kernelbench-json under a file: exit 2 before grading" 2 "$KERNRL" grade-dir "$G" --compile-only --quiet --out "$TMP/kb1.jsonl" --kernelbench-json "$TMP/latin1.cu/kb.json"
[ ! -e "$TMP/kb1.jsonl" ] || [ ! -s "$TMP/kb1.jsonl" ] && echo "ok   nothing graded" || { echo "FAIL graded before failing"; fail=1; }
check "kernelbench-json write failure: exit 2" 2 "$KERNRL" grade-dir "$S" --compile-only --quiet --out "$TMP/kb2.jsonl" --kernelbench-json /dev/full
has "kernelbench-json failure named" "kernelbench-json /dev/full: cannot write" "$TMP/err"
check "kernelbench-json into a new folder" 0 "$KERNRL" grade-dir "$S" --compile-only --quiet --out "$TMP/kb3.jsonl" --kernelbench-json "$TMP/new/dir/kb.json"
[ -s "$TMP/new/dir/kb.json" ] && echo "ok   kernelbench-json written" || { echo "FAIL no kernelbench json"; fail=1; }
check "grade-dir seed out of range" 2 "$KERNRL" grade-dir "$S" --compile-only --quiet --seed 99999999999999999999
check "grade-dir unwritable --out" 2 "$KERNRL" grade-dir "$S" --compile-only --quiet --out "$TMP/latin1.cu/x.jsonl"

# ---- shards sharing one --out, at the same time ----
P="$TMP/par"
mkdir -p "$P/L1_23_Softmax"
for i in $(seq 1 24); do cp "$SOL" "$P/L1_23_Softmax/s$i.cu"; cp "$TMP/flood.cu" "$P/L1_23_Softmax/f$i.cu"; done
for i in 0 1 2 3; do "$KERNRL" grade-dir "$P" --compile-only --quiet --shard $i/4 --out "$TMP/shared.jsonl" --config "$TMP/caps.yaml" -j 1 & done
wait
python3 - "$TMP/shared.jsonl" <<'PY' && echo "ok   4 concurrent shards: 48 whole records, each file once" || { echo "FAIL concurrent shards"; fail=1; }
import json, sys
lines = open(sys.argv[1], "rb").read().decode("utf-8").splitlines()
files = [json.loads(l)["file"] for l in lines]
assert len(files) == 48 and len(set(files)) == 48, (len(files), len(set(files)))
PY
exit $fail

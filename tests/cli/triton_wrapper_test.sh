#!/usr/bin/env bash
# Triton answers with a host wrapper and no launch block, on a machine without Triton or a GPU:
# the real kernrl-triton launcher, sandbox and helper (wrapper_plan.py with its shape-only torch)
# over the stand-in `triton` package of tests/triton/stand_in. Each answer of
# tests/triton/wrappers/manifest.json gets its launch plan derived from ModelNew.forward and
# compiled (`compiled`, `wrapper_plan` in the record with the expected lines of the derived
# launch block), or its format_error with the reason and the line; then grade-dir over the folder,
# an answer that no problem names, a wrapper that spins (a bounded compile_error), a wrapper
# missing Triton (a set-up error), and the KernelBench-style Triton prompt.
#   tests/cli/triton_wrapper_test.sh KERNRL
set -u
KERNRL="$1"
source "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
STAND_IN="$ROOT/tests/triton/stand_in"
WRAP="$ROOT/tests/triton/wrappers"
BIN_DIR="$(cd "$(dirname "$KERNRL")" && pwd)"
cat >"$TMP/triton.yaml" <<EOF2
triton: {python: $PY, path: "$STAND_IN", timeout_s: 20, memory_limit_mb: 4096, pool: 1}
EOF2

# Each answer through eval, one record each.
python3 - "$WRAP/manifest.json" >"$TMP/cases" <<'PY'
import json, sys
for e in json.load(open(sys.argv[1])):
    print(e["file"], e["problem"], e["expect"])
PY
while read -r file problem expect; do
  "$KERNRL" eval "$WRAP/$file" --problem "$problem" --compile-only --json --config "$TMP/triton.yaml" \
    >"$TMP/rec-$(basename "$file").json" 2>"$TMP/err"
done <"$TMP/cases"
python3 - "$WRAP/manifest.json" "$TMP" <<'PY' || fail=1
import json, os, sys
bad = 0
for e in json.load(open(sys.argv[1])):
    name = os.path.basename(e["file"])
    try:
        r = json.load(open(os.path.join(sys.argv[2], "rec-%s.json" % name)))
    except Exception as x:
        print("FAIL %s: no record (%s)" % (name, x)); bad += 1; continue
    msg = (r.get("error") or {}).get("message", "")
    if e["expect"] == "correct":
        block = (r.get("wrapper_plan") or {}).get("launch_block", "")
        missing = [p for p in e.get("plan", []) if p not in block]
        if r["status"] != "compiled" or r.get("language") != "triton" or missing:
            print("FAIL %s: %s %s; missing %s in\n%s" % (name, r["status"], msg, missing, block)); bad += 1
        else:
            print("ok   %s: plan derived from %s.forward and compiled" % (name, r["wrapper_plan"]["class"]))
    else:
        line = (r.get("error") or {}).get("line")
        if r["status"] != e["expect"] or e["reason"] not in msg or line != e["line"]:
            print("FAIL %s: %s at line %s: %s" % (name, r["status"], line, msg)); bad += 1
        else:
            print("ok   %s: %s at line %s: %s" % (name, r["status"], line, msg[:100]))
sys.exit(1 if bad else 0)
PY

# The derived plan's launches name the wrapper's lines; the kernels compiled are those it launches.
R="$TMP/rec-L1_40_LayerNorm__two-kernels-scratch.py.json"
has "compiled both kernels" '"kernel":"ln_apply"' "$R"
has "the record says the plan came from the wrapper" '"wrapper_plan":{"class":"ModelNew"' "$R"

# Refusals that name the line and say why, written on the fly from the GELU answer.
GELU="$WRAP/answers/L1_26_GELU___elementwise.py"
refused() {  # refused NAME SED-SCRIPT EXPECTED-MESSAGE
  sed "$2" "$GELU" >"$TMP/r.py"
  check "$1" 1 "$KERNRL" eval "$TMP/r.py" --problem L1_26_GELU_ --compile-only --json --config "$TMP/triton.yaml"
  has "$1: says why" "$3" "$TMP/out"
}
refused "a data-dependent grid" 's/n_elements = x.numel()/n_elements = int(x.sum().item())/' \
  "forward calls the tensor method sum(), a torch operation"
refused "an output that is the input (in place)" 's/out = torch.empty_like(x)/out = x/' \
  "forward returns the input x, which a kernel writes in place"
refused "a returned tensor that no launch writes" 's/        return out/        return torch.empty_like(x)/' \
  "forward returns a tensor that no kernel launch writes"
refused "item() of a tensor" 's/n_elements = x.numel()/n_elements = x.numel() if x.max() > 0 else 0/' \
  "tensor method max"
refused "a buffer filled with ones" 's/out = torch.empty_like(x)/out = torch.ones_like(x)/' \
  "poisons outputs before each run"

# grade-dir over the answers laid out by problem, for this folder's answers and the corpus of
# model-written wrapper answers (tests/triton/wrapper_corpus): each answer expected `correct` must
# be `compiled` (its plan derived and its kernels compiled), the others their expected status.
corpus() {  # corpus DIR NAME
  rm -rf "$TMP/dir-$2"
  python3 - "$1" "$TMP/dir-$2" <<'PY'
import json, os, shutil, sys
for e in json.load(open(os.path.join(sys.argv[1], "manifest.json"))):
    d = os.path.join(sys.argv[2], e["problem"])
    os.makedirs(d, exist_ok=True)
    shutil.copy(os.path.join(sys.argv[1], e["file"]), d)
PY
  "$KERNRL" grade-dir "$TMP/dir-$2" --compile-only --out "$TMP/trace-$2.jsonl" --quiet --no-resume \
    --config "$TMP/triton.yaml" >/dev/null 2>"$TMP/err-$2"
  python3 - "$1" "$TMP/trace-$2.jsonl" "$2" <<'PY' || fail=1
import json, os, sys
got = {os.path.basename(r["file"]): r for r in map(json.loads, open(sys.argv[2], encoding="utf-8"))}
bad = 0
manifest = json.load(open(os.path.join(sys.argv[1], "manifest.json")))
for e in manifest:
    r = got.get(os.path.basename(e["file"]))
    want = "compiled" if e["expect"] == "correct" else e["expect"]
    if r is None or r["status"] != want:
        msg = ((r or {}).get("error") or {}).get("message", "")
        print("FAIL %s %s: %s, expected %s: %s" % (sys.argv[3], e["file"], r and r["status"], want, msg[:300]))
        bad += 1
print("%s grade-dir %s: %d/%d answers as expected" % ("ok  " if not bad else "FAIL", sys.argv[3], len(manifest) - bad, len(manifest)))
sys.exit(1 if bad else 0)
PY
}
corpus "$WRAP" wrappers
[ -e "$ROOT/tests/triton/wrapper_corpus/manifest.json" ] && corpus "$ROOT/tests/triton/wrapper_corpus" wrapper_corpus
has "an output allocated with zeros is filled first" "kernrl_zero_fill" "$TMP/trace-wrappers.jsonl"

# The compile keeps `try: from triton.language.extra import libdevice / except ImportError:` and
# plain functions without their annotations (torch is not there when kernels compile).
python3 - "$BIN_DIR/kernrl_triton.py" <<'PY' && echo "ok   the compile keeps a libdevice try block" || { echo "FAIL libdevice try block"; fail=1; }
import ast, importlib.util, sys
spec = importlib.util.spec_from_file_location("helper", sys.argv[1])
h = importlib.util.module_from_spec(spec)
spec.loader.exec_module(h)
src = """import torch
import triton
import triton.language as tl
try:
    from triton.language.extra import libdevice
except ImportError:
    libdevice = tl.math
def wrap(x: torch.Tensor) -> torch.Tensor:
    return x
"""
tree, dropped = h.filter_module(ast.parse(src))
assert [type(s).__name__ for s in tree.body] == ["Import", "Import", "Try", "FunctionDef"], tree.body
assert dropped == [1] and tree.body[3].args.args[0].annotation is None and tree.body[3].returns is None
PY

# A wrapper that spins while kernrl runs it: cut at the Triton timeout, a compile_error.
cat >"$TMP/slow.yaml" <<EOF2
triton: {python: $PY, path: "$STAND_IN", timeout_s: 3, memory_limit_mb: 4096, pool: 0}
EOF2
sed 's/        x = x.contiguous()/        while True: pass/' "$GELU" >"$TMP/spin.py"
check "a wrapper that spins" 1 "$KERNRL" eval "$TMP/spin.py" --problem L1_26_GELU_ --compile-only --json --config "$TMP/slow.yaml"
has "spins: a compile_error" '"status":"compile_error"' "$TMP/out"
has "spins: says it was cut" "did not finish within 3 s" "$TMP/out"

# A wrapper that reads a file in forward: the sandbox stops it, the reason and the line.
sed 's|        x = x.contiguous()|        open("/etc/passwd").read()|' "$GELU" >"$TMP/reads.py"
check "a wrapper that reads /etc/passwd" 1 "$KERNRL" eval "$TMP/reads.py" --problem L1_26_GELU_ --compile-only --json --config "$TMP/triton.yaml"
has "reads: refused at its line" '"line":22' "$TMP/out"
has "reads: the sandbox denied it" "PermissionError" "$TMP/out"

# No Triton: a set-up error, as for any Triton file.
cat >"$TMP/no_triton.yaml" <<EOF2
triton: {python: $PY, path: "", pool: 0}
EOF2
check "no Triton is a set-up error" 2 "$KERNRL" eval "$GELU" --problem L1_26_GELU_ --compile-only --json --config "$TMP/no_triton.yaml"
has "says how to point at one" "KERNRL_TRITON_PYTHON" "$TMP/err"

# The KernelBench-style Triton prompt asks for a ModelNew with Triton kernels and no launch block.
check "show --prompt --style kernelbench --language triton" 0 "$KERNRL" show L1_26_GELU_ --prompt --style kernelbench --language triton --json
has "asks for ModelNew" "ModelNew" "$TMP/out"
has "Triton example" "@triton.jit" "$TMP/out"
has "its name" '"prompt_name":"kernrl.kernelbench_triton.v1"' "$TMP/out"

# The KernelBench-style CUDA prompt says how the module is graded, and asks for no more than the
# converter grades: no PyTorch operators kept in forward or in the host function.
check "show --prompt --style kernelbench" 0 "$KERNRL" show L1_26_GELU_ --prompt --style kernelbench --json
has "asks for ModelNew" "ModelNew" "$TMP/out"
has "says how it is graded" "How it is graded" "$TMP/out"
has "no PyTorch operators kept" "no PyTorch operations in forward" "$TMP/out"
has "its name" '"prompt_name":"kernrl.kernelbench.v3"' "$TMP/out"
has "its version" '"prompt_version":3' "$TMP/out"
exit $fail

#!/usr/bin/env bash
# Triton kernel files end to end on a machine without Triton or a GPU: the real kernrl-triton
# launcher, its sandbox and the Python helper, with the stand-in `triton` package of
# tests/triton/stand_in (the same surface the helper uses; it compiles nothing). Covers: the
# sandbox check, --compile-only of a .py and a markdown answer (records with `language` and the
# compiled kernels), an autotuned answer graded on the stand-in worker (tests/stand_in_worker.py:
# the configs' times and the kept config in the record), the attacks of tests/triton/attacks (each its expected status, nothing
# written outside), a missing Triton (a clear set-up error), and the Triton prompt.
#   tests/cli/triton_test.sh KERNRL
set -u
KERNRL="$1"
source "$(dirname "$0")/lib.sh"
# A compile cache of this run alone: the first compiles below must be compiled, not found from an
# earlier run.
export KERNRL_CACHE="$TMP/cache"
BIN="$(cd "$(dirname "$KERNRL")" && pwd)"
PY=/usr/bin/python3
STAND_IN="$ROOT/tests/triton/stand_in"
cat >"$TMP/triton.yaml" <<EOF
triton: {python: $PY, path: "$STAND_IN", timeout_s: 20, memory_limit_mb: 4096, pool: 1}
EOF

# The launcher's own check: inside, nothing outside the profile can be read, written, executed or
# connected to; its private directory and the helper can.
REAL_PY="$(readlink -f "$PY")"
mkdir -p "$TMP/private"
SETUP=$(printf '{"python":"%s","script":"%s","tmp":"%s","read_dirs":["/usr","%s"],"read_files":["%s"],"exec_files":["%s"]}' \
  "$PY" "$BIN/kernrl_triton.py" "$TMP/private" "$STAND_IN" "$(readlink -f "$BIN/kernrl_triton.py")" "$REAL_PY")
check "kernrl-triton --check-sandbox" 0 "$BIN/kernrl-triton" --setup "$SETUP" --check-sandbox
has "sandbox holds" '"ok":true' "$TMP/out"
has "no /etc/passwd" '"read /etc/passwd":false' "$TMP/out"
has "no shell" '"execute /bin/sh":false' "$TMP/out"
has "no socket" '"socket":false' "$TMP/out"
has "private dir writable" '"write tmp":true' "$TMP/out"

ANS="$ROOT/tests/triton/answers"
check "eval a Triton .py --compile-only" 0 "$KERNRL" eval "$ANS/softmax.py" --compile-only --json --config "$TMP/triton.yaml"
has "compiled" '"status":"compiled"' "$TMP/out"
has "language triton" '"language":"triton"' "$TMP/out"
has "Triton's version" '"triton":"0.0+stand-in"' "$TMP/out"
has "the compiled kernel" '"kernel":"softmax_kernel"' "$TMP/out"
has "num_warps from the launch block" '"num_warps":8' "$TMP/out"
check "the same again comes from the cache" 0 "$KERNRL" eval "$ANS/softmax.py" --compile-only --json --config "$TMP/triton.yaml"
has "cached" '"cached":true' "$TMP/out"
check "a markdown answer with autotune and heuristics" 0 "$KERNRL" eval "$ANS/autotune_gelu.md" --compile-only --json --config "$TMP/triton.yaml"
has "autotune configs compiled" '"configs":2' "$TMP/out"
has "not timed without the GPU worker" '"timed":false' "$TMP/out"
has "heuristic evaluated" '"EVEN":' "$TMP/out"
has "where the compile's time went" '"triton_timing":{' "$TMP/out"
# Its four compiles (two configs at two specialisations) run at once where there are cores for it.
if [ "$(nproc)" -gt 1 ]; then has "compiles run at once" '"parallel":[2-8]' "$TMP/out"; fi

# The autotune configs timed by the worker (the stand-in worker makes the last config the fastest):
# the record says which config was kept and each config's time, and the kernel's settings are the
# kept config's.
SK="$(stand_in_kernrl)"
ln -sf "$BIN/kernrl-triton" "$TMP/bin/kernrl-triton"
ln -sf "$BIN/kernrl_triton.py" "$TMP/bin/kernrl_triton.py"
ln -sf "$BIN/kernrl_triton_server.py" "$TMP/bin/kernrl_triton_server.py"
check "eval an autotuned answer on the stand-in worker" 0 "$SK" eval "$ANS/autotune_gelu.md" --json --config "$TMP/triton.yaml"
has "graded" '"status":"correct"' "$TMP/out"
has "the worker's choice" '"chosen":1' "$TMP/out"
has "timed by the worker" '"timed":true' "$TMP/out"
has "each config's time" '"times_ms":\[1.0,0.5\]' "$TMP/out"
has "the kept config's warps" '"kernel":"gelu_kernel","key":"gelu_kernel","num_ctas":1,"num_stages":3,"num_warps":8' "$TMP/out"

# A kernel the launch block passes too few arguments: the helper names the parameters.
sed 's/args: \[x, out, dim\]/args: [x, out]/' "$ANS/softmax.py" >"$TMP/too_few.py"
check "wrong argument count" 1 "$KERNRL" eval "$TMP/too_few.py" --compile-only --json --config "$TMP/triton.yaml"
has "names the parameters" "non-constexpr parameters (x_ptr, out_ptr, n_cols)" "$TMP/out"

rm -f /tmp/kernrl-triton-attack-written
for f in "$ROOT"/tests/triton/attacks/*.py; do
  name="$(basename "$f" .py)"
  want="$(sed -n '1s/^# expect: //p' "$f")"
  "$KERNRL" eval "$f" --compile-only --json --config "$TMP/triton.yaml" >"$TMP/out" 2>"$TMP/err"
  got="$(grep -o '"status":"[a-z_]*"' "$TMP/out" | head -1 | cut -d'"' -f4)"
  if [[ "|$want|" == *"|$got|"* ]]; then echo "ok   attack $name: $got"; else
    echo "FAIL attack $name: got '$got', expected $want"; head -c 1500 "$TMP/out"; cat "$TMP/err"; fail=1; fi
done
if [ -e /tmp/kernrl-triton-attack-written ]; then echo "FAIL an attack wrote outside its directory"; fail=1; fi
leftover="$(find "${TMPDIR:-/tmp}" -maxdepth 1 -name 'kernrl-triton-*' -newer "$TMP/triton.yaml" 2>/dev/null | head -3)"

# No Triton: a set-up error that says how to point kernrl at one.
cat >"$TMP/no_triton.yaml" <<EOF
triton: {python: $PY, path: "", pool: 0}
EOF
check "no Triton is a set-up error" 2 "$KERNRL" eval "$ANS/softmax.py" --compile-only --json --config "$TMP/no_triton.yaml"
has "says how to point at one" "KERNRL_TRITON_PYTHON" "$TMP/err"

check "show --prompt --language triton" 0 "$KERNRL" show L1_23_Softmax --prompt --language triton
has "Triton contract" "Triton kernel-file contract" "$TMP/out"
has "Triton template" "@triton.jit" "$TMP/out"
has "the limits" "above 48 KiB" "$TMP/out"
check "show --contract states both" 0 "$KERNRL" show --contract
has "CUDA contract" "Device code only" "$TMP/out"
has "Triton contract in it" "Triton kernel-file contract" "$TMP/out"
[ -n "$leftover" ] && echo "note: private directories still present: $leftover"
exit $fail

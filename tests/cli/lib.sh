# Shared by the CLI tests (sourced, after KERNRL="$1"): ROOT, a scratch folder TMP removed at exit,
# KERNRL_CACHE (in TMP unless set), fail=0, and the helpers below.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
export KERNRL_CACHE="${KERNRL_CACHE:-$TMP/cache}"
fail=0

check() {  # check NAME EXPECTED_EXIT COMMAND...: its output in $TMP/out and $TMP/err
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

# stand_in_kernrl: $TMP/bin/kernrl, a copy of $KERNRL beside the stand-in worker of the tests
# (tests/stand_in_worker.py, which speaks the worker protocol without a GPU) and kernrl-nvrtc; and
# $TMP/crash.cu and $TMP/hang.cu, the softmax solution with kernels the stand-in crashes and hangs
# on. Prints the path of that kernrl.
stand_in_kernrl() {
  local bin="$TMP/bin" sol="$ROOT/problems/L1/23_Softmax/solution.cu"
  mkdir -p "$bin"
  cp "$KERNRL" "$bin/kernrl"
  ln -sf "$(cd "$(dirname "$KERNRL")" && pwd)/kernrl-nvrtc" "$bin/kernrl-nvrtc"
  cp "$ROOT/tests/stand_in_worker.py" "$bin/kernrl-worker"
  chmod +x "$bin/kernrl-worker"
  sed 's/softmax_rows/standin_crash/g' "$sol" >"$TMP/crash.cu"
  sed 's/softmax_rows/standin_hang/g' "$sol" >"$TMP/hang.cu"
  echo "$bin/kernrl"
}

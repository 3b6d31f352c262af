#!/usr/bin/env bash
# kernrl serve against hostile clients, without a GPU: every rule of tests/serve/hardening_test.py
# (which attack, and whether it held), then the soak of tests/serve/soak_test.py (memory and
# /health latency under a mix of hostile clients on the stand-in worker). Writes one markdown file.
#
#   scripts/serve-hardening.sh [--build DIR] [--seconds N] [--out FILE]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=build SECONDS_=60 OUT=docs/results/serve-soak.md
PY=${PYTHON:-/usr/bin/python3}  # Debian's, with python3-websockets
while [ $# -gt 0 ]; do
  case "$1" in
    --build) BUILD=$2; shift 2 ;;
    --seconds) SECONDS_=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    *) echo "usage: $0 [--build DIR] [--seconds N] [--out FILE]" >&2; exit 2 ;;
  esac
done
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
rc=0
"$PY" tests/serve/hardening_test.py --kernrl "$BUILD/kernrl" >"$TMP/hardening.txt" 2>&1 || rc=1
"$PY" tests/serve/soak_test.py --kernrl "$BUILD/kernrl" --seconds "$SECONDS_" \
  --report "$TMP/soak.md" >"$TMP/soak.txt" 2>&1 || rc=1
{
  cat "$TMP/soak.md"
  echo
  echo "## Each rule on its own"
  echo
  echo "\`tests/serve/hardening_test.py\` on the same machine and date: each line is one attack and"
  echo "whether the server held (\`ok\`) or not (\`FAIL\`)."
  echo
  echo '```'
  grep -E '^(ok|FAIL) ' "$TMP/hardening.txt" || true
  tail -1 "$TMP/hardening.txt"
  echo '```'
  echo
  echo "## The soak's own checks"
  echo
  echo '```'
  grep -E '^(ok|FAIL) |soak:' "$TMP/soak.txt" || true
  echo '```'
} >"$OUT"
echo "wrote $OUT"
exit $rc

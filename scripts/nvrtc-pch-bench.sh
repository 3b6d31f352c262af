#!/usr/bin/env bash
# NVRTC's compile time by phase for header-heavy kernels (CUB, cooperative groups), cold and with
# NVRTC's automatic precompiled headers made from a trusted anchor compile (the PCH lives in the
# process that made it). CPU only: NVRTC needs no GPU. Builds scripts/nvrtc_pch/pch_bench.cpp with
# the system compiler against the CUDA Toolkit's NVRTC, runs every measurement in a fresh process,
# RUNS times (default 3), and prints a Markdown table of medians for docs/results/.
#   scripts/nvrtc-pch-bench.sh [--runs N] [--out FILE]
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=3 OUTFILE=""
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) RUNS="$2"; shift ;;
    --out) OUTFILE="$2"; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
CUDA="${CUDA_HOME:-/usr/local/cuda}"
BIN="$(mktemp -d)"
trap 'rm -rf "$BIN"' EXIT
g++ -std=c++17 -O1 -Isrc -I"$CUDA/include" -DKERNRL_CUDA_INCLUDE="\"$CUDA/include\"" \
  scripts/nvrtc_pch/pch_bench.cpp -L"$CUDA/lib64" -lnvrtc -Wl,-rpath,"$CUDA/lib64" -o "$BIN/pch_bench"
declare -A HEADERS=(
  [plain]=""
  [cub_block_reduce]="cub/block/block_reduce.cuh"
  [cub_radix_sort_scan]="cub/block/block_radix_sort.cuh cub/block/block_scan.cuh"
  [cooperative_groups_reduce]="cooperative_groups.h cooperative_groups/reduce.h"
)
: >"$BIN/runs.jsonl"
for k in plain cub_block_reduce cub_radix_sort_scan cooperative_groups_reduce; do
  for _ in $(seq "$RUNS"); do
    "$BIN/pch_bench" "$k" cold >>"$BIN/runs.jsonl"
    if [ -n "${HEADERS[$k]}" ]; then
      for mode in pch explicit; do
        # shellcheck disable=SC2086
        "$BIN/pch_bench" "$k" $mode ${HEADERS[$k]} >>"$BIN/runs.jsonl"
      done
    fi
  done
done
# A PCH file used by another process (the same NVRTC library, a fresh process) is refused.
PCH_FILE="$BIN/reduce.pch" "$BIN/pch_bench" cub_block_reduce explicit cub/block/block_reduce.cuh >/dev/null
PCH_FILE="$BIN/reduce.pch" PCH_BENCH_LOG=1 "$BIN/pch_bench" cub_block_reduce use \
  >"$BIN/other_process.json" 2>"$BIN/other_process.log"
python3 - "$BIN/runs.jsonl" "$RUNS" "$CUDA" >"$BIN/table.md" <<'PY'
import json, os, statistics, subprocess, sys, time
runs = [json.loads(l) for l in open(sys.argv[1])]
def med(xs):
    return statistics.median(xs) if xs else float("nan")
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
ver = runs[0].get("nvrtc", "?") if runs else "?"
load = open("/proc/loadavg").read().split()[:3]
print(f"`scripts/nvrtc-pch-bench.sh` on {cpu} ({os.cpu_count()} cores, load average "
      f"{' '.join(load)} at the end), NVRTC {ver}, {time.strftime('%Y-%m-%d', time.gmtime())}; "
      f"medians of {sys.argv[2]} runs, each in a fresh process, `-arch=sm_90a` and kernrl's options. "
      "\"cold\": one compile as kernrl makes it today. \"auto\" and \"explicit\": a PCH made by an "
      "anchor compile of kernrl's own text (the prelude and the kernel's CCCL headers as "
      "pre-includes; NVRTC's automatic mode `-pch`, or `--create-pch FILE`), then the kernel "
      "(with its `#line`) compiled in the same process with the same pre-includes (`-pch`, or "
      "`--use-pch FILE`). Seconds; phases from NVRTC's `--time`.\n")
print("| kernel | PCH | cold s | cold: front end / NVVM / PTX s | PCH build s (once) | with PCH s | with PCH: front end s | PCH used |")
print("|---|---|---|---|---|---|---|---|")
kernels = []
for r in runs:
    if r["kernel"] not in kernels:
        kernels.append(r["kernel"])
for k in kernels:
    cold = [r["compile"] for r in runs if r["kernel"] == k and r["mode"] == "cold"]
    ph = lambda rs, name: med([x["phases"].get(name, 0) / 1000 for x in rs])
    head = [f"{med([c['s'] for c in cold]):.2f}",
            f"{ph(cold, 'CUDA C++ Frontend'):.2f} / {ph(cold, 'NVVM Optimizer'):.2f} / {ph(cold, 'PTX Translation'):.2f}"]
    modes = [m for m in ("pch", "explicit") if any(r["kernel"] == k and r["mode"] == m for r in runs)]
    if not modes:
        print("| " + " | ".join([k, "-"] + head + ["-", "-", "-", "-"]) + " |")
    for m in modes:
        pch = [r for r in runs if r["kernel"] == k and r["mode"] == m]
        row = [k, "auto" if m == "pch" else m] + head + [
            f"{med([p['anchor']['s'] + p.get('anchor_again', {}).get('s', 0) for p in pch]):.2f}",
            f"{med([p['compile']['s'] for p in pch]):.2f}",
            f"{ph([p['compile'] for p in pch], 'CUDA C++ Frontend'):.2f}",
            f"{sum(p['compile']['pch_used'] for p in pch)}/{len(pch)}"
            + ("" if all(p["compile"]["pch_used"] for p in pch)
               else f" (anchor: {pch[0]['anchor']['pch_status']})")]
        print("| " + " | ".join(row) + " |")
other = json.load(open(os.path.join(os.path.dirname(sys.argv[1]), "other_process.json")))
log = open(os.path.join(os.path.dirname(sys.argv[1]), "other_process.log")).read()
print()
print("The same PCH file used by a fresh process: " +
      ("used" if other["compile"]["pch_used"] else "refused") + f", compile {other['compile']['s']:.2f} s" +
      (" (NVRTC: \"incompatible precompiled header (PCH) heap allocation address\")" if "heap allocation address" in log else ""))
PY
cat "$BIN/table.md"
[ -n "$OUTFILE" ] && cp "$BIN/table.md" "$OUTFILE"
exit 0

#!/usr/bin/env bash
# GPU tests and measurements, on a machine with an NVIDIA GPU, the CUDA Toolkit and the torch
# Python package (its libtorch is used). Header/C++ dependencies come from Debian packages in
# .device/ (scripts/fetch-device-deps.sh) when the machine cannot install them itself.
#   scripts/gpu-test.sh [build] [unit] [routes] [acceptance] [solutions] [adversarial] [memo] [bench] [speed] [batch] [latency] [profile] [precision] [serve] [nvrtc] [import] [triton] [triton-wrapper] [faults] [scaling] [kernelbench] [training]   (default: all)
# Results go to $OUT (default ./gpu-results): logs, traces and tables.
#   kernelbench needs KERNELBENCH_DIR, a KernelBench checkout (KB_LEVELS: levels, default 1,2,3;
#   KB_STEPS, KB_GENS and the other KB_* variables: scripts/kb-gpu.sh).
#   scripts/gpu-test.sh ... pack   bundles everything under $OUT into results.tgz (fewer files to fetch)
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
OUT="${OUT:-$ROOT/gpu-results}"
BUILD="${BUILD_DIR:-build-gpu}"
mkdir -p "$OUT"
phases=("$@")
[ ${#phases[@]} -eq 0 ] && phases=(build unit routes acceptance solutions adversarial memo bench speed batch latency profile precision serve nvrtc import triton triton-wrapper faults scaling kernelbench training)
want() { for p in "${phases[@]}"; do [ "$p" = "$1" ] && return 0; done; return 1; }
log() { echo "== $(date -u +%H:%M:%S) $*"; }

PREFIX=/tmp/kernrl-deps
if ls .device/*.deb >/dev/null 2>&1; then
  mkdir -p "$PREFIX"
  for d in .device/*.deb; do dpkg -x "$d" "$PREFIX"; done
  export LD_LIBRARY_PATH="$PREFIX/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
export CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
export KERNRL_CACHE="${KERNRL_CACHE:-/tmp/kernrl-cache}"

if want build; then
  log "configure"
  TORCH_PREFIX="$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')"
  extra=()
  if [ ! -e /usr/include/openssl/evp.h ] && [ -d "$PREFIX/usr/include/openssl" ]; then
    extra+=(-DOPENSSL_INCLUDE_DIR="$PREFIX/usr/include" -DOPENSSL_CRYPTO_LIBRARY="$PREFIX/usr/lib/x86_64-linux-gnu/libcrypto.so.3"
            -DCMAKE_CXX_FLAGS="-isystem $PREFIX/usr/include/x86_64-linux-gnu")
  fi
  cmake --preset gpu -B "$BUILD" \
    -DCMAKE_PREFIX_PATH="$TORCH_PREFIX;$PREFIX/usr" -DCUDAToolkit_ROOT="$CUDA_HOME" \
    -DKERNRL_PROBLEM_GLOB="${KERNRL_PROBLEM_GLOB:-L*/*}" "${extra[@]}" >"$OUT/configure.log" 2>&1 ||
    { tail -40 "$OUT/configure.log"; exit 1; }
  log "build"
  start=$(date +%s)
  # BUILD_TARGETS (space-separated) builds only those targets, e.g. for the triton phase alone:
  # "kernrl kernrl-worker kernrl-nvrtc kernrl-triton".
  targets=(); for t in ${BUILD_TARGETS:-}; do targets+=(--target "$t"); done
  cmake --build "$BUILD" -j "$(nproc)" "${targets[@]}" >"$OUT/build.log" 2>&1 || { grep -E "error|FAILED" "$OUT/build.log" | head -40; exit 1; }
  log "built in $(( $(date +%s) - start )) s, $(grep -c 'warning:' "$OUT/build.log") compiler warnings"
fi
K="$BUILD/kernrl"

if want unit; then
  log "CPU test suites (unit, problems) against this libtorch"
  "$BUILD/kernrl-worker" --self-test >"$OUT/compare-self-test.log" 2>&1 && log "fused comparison agrees with torch" || { log "fused comparison FAILED"; head -30 "$OUT/compare-self-test.log"; }
  (cd "$BUILD" && ctest -R 'unit|problems|sandbox|header' -j "$(nproc)" --output-on-failure) >"$OUT/ctest.log" 2>&1 && log "ctest ok" || { log "ctest FAILED"; grep -E "Failed|\*\*\*" "$OUT/ctest.log" | head -30; }
fi

if want routes; then
  log "references with a fused route against their portable route, on the GPU (test and bench sizes)"
  KERNRL_TEST_DEVICE=cuda "$BUILD/kernrl_problem_tests" -tc='references with a fused route*' \
    >"$OUT/routes.log" 2>&1 && log "routes ok" || { log "routes FAILED"; grep -E "ERROR|problem|output" "$OUT/routes.log" | head -40; }
fi

if want acceptance; then
  log "acceptance corpus (answers written from the prompt alone)"
  scripts/acceptance.sh --build "$BUILD" --out "$OUT" >"$OUT/acceptance.md" 2>&1; tail -1 "$OUT/acceptance.md"
  grep -F ' **' "$OUT/acceptance.md" | head -20
fi

if want solutions; then
  log "grade every bundled solution"
  SOL="$(mktemp -d)"
  IFS=';' read -ra globs <<<"${KERNRL_PROBLEM_GLOB:-L*/*}"
  for d in $(for g in "${globs[@]}"; do echo problems/$g/; done); do
    id="$(basename "$(dirname "$d")")_$(basename "$d")"
    mkdir -p "$SOL/$id" && cp "$d/solution.cu" "$SOL/$id/solution.cu"
  done
  rm -f "$OUT/solutions.jsonl"
  start=$(date +%s)
  "$K" grade-dir "$SOL" --out "$OUT/solutions.jsonl" --run solutions --no-resume >"$OUT/solutions.log" 2>&1
  log "graded $(wc -l <"$OUT/solutions.jsonl") solutions in $(( $(date +%s) - start )) s"
  python3 scripts/results_table.py "$OUT/solutions.jsonl" | tee "$OUT/solutions.md"
fi

if want adversarial; then
  log "adversarial suite"
  scripts/adversarial.sh --build "$BUILD" --out "$OUT" | tee "$OUT/adversarial.md"
fi

if want memo; then
  log "memoising kernels: eval and grade-dir, 10 seeds each"
  {
    echo "| seed | mode | file | status |"; echo "| --- | --- | --- | --- |"
    for seed in 1 2 3 4 5 6 7 8 9 10; do
      for f in tests/adversarial/*/memoise_pointer.cu tests/adversarial/*/memoise_flag.cu tests/adversarial/*/memoise.cu; do
        [ -e "$f" ] || continue
        st=$("$K" eval "$f" --seed "$seed" --json 2>/dev/null | python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["status"])')
        echo "| $seed | eval | $f | $st |"
      done
      D="$(mktemp -d)"; cp -r tests/adversarial/. "$D/"; find "$D" -name '*.cu' ! -name 'memoise*' -delete
      "$K" grade-dir "$D" --out "$D/t.jsonl" --seed "$seed" --no-resume --quiet >/dev/null 2>&1
      python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l); print("| %s | grade-dir | %s | %s |" % (sys.argv[2], r["file"].split("/", 3)[-1], r["status"]))' "$D/t.jsonl" "$seed"
    done
  } >"$OUT/memo.md"
  grep -c "| incorrect |" "$OUT/memo.md" | sed 's/^/incorrect rows: /'; grep -vc "| incorrect |" "$OUT/memo.md" | sed 's/^/other rows (incl. 2 header lines): /'
fi

if want bench; then
  log "device ceilings, twice"
  "$K" bench --device --out "$OUT/device1.json" >/dev/null && "$K" bench --device --out "$OUT/device2.json" >/dev/null
  log "baselines"
  "$K" bench --baselines --out "$OUT/baselines.json" 2>&1 | tail -100
fi

if want triton; then
  log "Triton: the real compiler in its sandbox, Triton answers and solutions, attacks, batch"
  OUT="$OUT" scripts/triton-gpu.sh --build "$BUILD" --out "$OUT" 2>&1 | tee "$OUT/triton.md"
fi

if want triton-wrapper; then
  log "Triton answers with a host wrapper and no launch block: the plan derived from forward"
  scripts/triton-wrapper-gpu.sh --build "$BUILD" --out "$OUT" 2>&1 | tee "$OUT/triton-wrapper.log"
fi

if want batch; then
  log "grade-dir throughput and kill/resume"
  OUT="$OUT" scripts/batch_bench.sh --build "$BUILD" | tee "$OUT/batch.md"
fi

if want faults; then
  # FAULT_LATENCY=0 skips the latency probe (run on its own, e.g. beside the build).
  if [ "${FAULT_LATENCY:-1}" != 0 ]; then
    log "fault latency: from a faulting kernel's launch to the error on the host, per fault and way of waiting"
    python3 scripts/fault_latency.py --out "$OUT" | tail -40
  fi
  log "the adversarial suite's faulting and hanging kernels under the default deadlines: expected and graded statuses"
  FD="$(mktemp -d)"
  for f in tests/adversarial/*/{trap,misaligned,illegal_address,infinite_loop,hardcoded_bench_size,strided_subset}.cu; do
    [ -e "$f" ] && mkdir -p "$FD/$(basename "$(dirname "$f")")" && cp "$f" "$FD/$(basename "$(dirname "$f")")/"
  done
  "$K" grade-dir "$FD" --out "$OUT/fault-files.jsonl" --no-resume --quiet >/dev/null 2>&1
  python3 - "$OUT/fault-files.jsonl" <<'PY' | tee "$OUT/fault-files.md"
import json, sys
print("| file | expected | graded | watchdog | message |"); print("|---|---|---|---|---|")
for line in open(sys.argv[1]):
    r = json.loads(line); f = r["file"]
    want = open(f).readline().split("expect:")[-1].strip()
    ok = r["status"] in want.split("|")
    w = r.get("watchdog") or {}
    msg = ((r.get("error") or {}).get("message") or "")[:140].replace("|", "/").replace("\n", " ")
    print(f"| {'/'.join(f.split('/')[-2:])} | {want} | {r['status']}{'' if ok else ' **'} | "
          f"{w.get('bound_s')} + {w.get('grace_s')} s ({w.get('basis')}) | {msg} |")
PY
  # FAULT_RUNS: the settings to compare (scripts/fault_bench.py's RUNS; default clean before after).
  log "fault mix: a Level-1 batch with a third crashing, trapping or hanging, ${FAULT_RUNS:-clean before after}, 1 and 2 GPUs"
  # FAULT_KEEP=1 keeps each run's records in $OUT/records/.
  python3 scripts/fault_bench.py --kernrl "$K" --out "$OUT" ${FAULT_RUNS:+--runs $FAULT_RUNS} ${FAULT_KEEP:+--keep} | tail -60
fi

if want scaling; then
  log "multi-GPU scaling: a long clean Level-1 batch (${SCALING_SAMPLES:-16} samples of each solution) on one GPU and on two"
  python3 scripts/fault_bench.py --kernrl "$K" --out "$OUT" --samples "${SCALING_SAMPLES:-16}" --runs clean \
    --gpus 0 0,1 --name scaling.md | tail -30
fi

if want profile; then
  log "eval --profile: Nsight Compute metrics of two bundled solutions (one and several launches)"
  for sol in problems/L1/23_Softmax/solution.cu problems/L1/1_Square_matrix_multiplication_/solution.cu; do
    "$K" eval "$sol" --json --profile >"$OUT/profile.json" 2>"$OUT/profile.err"
    python3 - "$OUT/profile.json" "$sol" <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).readline()); p = r.get("profile", {})
print(f"{sys.argv[2]}: {r['status']}, profile in {r.get('grader', {}).get('profile_ms', 0):.0f} ms")
if "error" in p:
    print("  profile error:", p["error"][:600])
for l in p.get("launches", []):
    stalls = ", ".join(f"{s['reason']} {s['ratio']:.2f}" for s in l.get("stalls", []))
    print(f"  {l['kernel'][:40]}: {l.get('duration_us')} us, DRAM {l.get('dram_throughput_pct')}%, "
          f"SM {l.get('sm_throughput_pct')}%, occupancy {l.get('achieved_occupancy_pct')}%; stalls: {stalls}")
PY
  done
fi

if want latency; then
  log "eval latency: one cached Level-1 kernel, bench size and a tiny size, 5 times each"
  python3 scripts/eval_latency.py --kernrl "$K" --runs 5 | tee "$OUT/latency.md"
fi

if want speed; then
  log "speed: compile cold/cached per solution, eval wall time, run-to-run spread"
  python3 scripts/speed_bench.py --kernrl "$K" --out "$OUT/speed.md" | tail -60
fi

if want precision; then
  log "precision margins of every fp32 problem (fp64, reordered fp32, TF32, bf16) at the bench size"
  BUILD_DIR="$BUILD" PYTHON="${PYTHON:-python3}" timeout "${PRECISION_TIMEOUT:-300}" \
    scripts/precision.sh --sizes bench --device cuda --out "$OUT/precision.md" >"$OUT/precision.log" 2>&1 ||
    log "precision.sh stopped (see precision.log)"
  tail -5 "$OUT/precision.log"
fi

if want serve; then
  log "kernrl serve: latency with 1, 8 and 64 sessions, cache, crashing and hanging kernels"
  scripts/serve-bench.sh --build "$BUILD" --out "$OUT/serve" >"$OUT/serve-bench.log" 2>&1 || log "serve-bench failed"
  tail -40 "$OUT/serve-bench.log"
fi

if want nvrtc; then
  log "compiles: the kernrl-nvrtc fork server and its precompiled headers, a session's step against grade-dir"
  scripts/nvrtc-server-bench.sh --build "$BUILD" --gpu --steps "${NVRTC_STEPS:-8}" --out "$OUT/nvrtc-server.md" >"$OUT/nvrtc-server.log" 2>&1 ||
    log "nvrtc-server-bench failed"
  tail -25 "$OUT/nvrtc-server.log"
fi

if want import; then
  log "KernelBench import corpus: conversion and grading"
  scripts/import-bench.sh --build "$BUILD" --out "$OUT/import" 2>&1 | tail -25
fi

if want kernelbench; then
  log "torch steps: the test suite's small MLP, its linear layers as torch steps, cat and null arguments, pointers into buffers, tensor accessor arguments, counted steps, struct arguments, stacked tensors, tensors scaled by numbers (mul, div), named values, inputs taken apart and put together by the view steps unfold and select; its small LSTM and GRU as lstm and gru steps, result 0 and 1 (expect correct)"
  TS=/tmp/kernrl-torch-steps-suite; rm -rf "$TS"
  KERNRL_PYTHON="$(command -v python3)" "$K" suite add kernelbench tests/suites/kernelbench --out "$TS" --only L3_1,L3_5,L3_6 \
    >"$OUT/torch-steps.log" 2>&1
  for f in tests/suites/torch_steps/*.cu; do
    "$K" eval "$f" --suite "$TS" --json 2>>"$OUT/torch-steps.log" | tee -a "$OUT/torch-steps.jsonl" | python3 -c '
import json, sys
r = json.loads(sys.stdin.readline() or "{}")
print("torch steps %s: %s (speedup %s) %s" % (sys.argv[1], r.get("status", "no record"), r.get("speedup"), r.get("message", "")[:200]))' "$(basename "$f")"
  done
  log "KernelBench suite: built with this host's torch, checked against KernelBench's own modules"
  if [ -z "${KERNELBENCH_DIR:-}" ] || [ ! -d "${KERNELBENCH_DIR:-}/KernelBench" ]; then
    log "KERNELBENCH_DIR is not a KernelBench checkout: skipped"
  else
    KB_SUITE="${KB_SUITE:-/tmp/kernrl-kb-suite}"  # several GB of weights: not under $OUT
    # (tests/kernelbench/v4/kb-prompt: its L3_18_SqueezeNet converts through a submodule class the
    # generation defines, FireModule, whose conv2d steps take features.N.* by module path; its
    # L3_20_MobileNetV2 through the layers __init__ builds in loops into a list, its plan list of
    # them and its nn.Sequential classifier called from forward.)
    export KB_SUITE KB_GENS="${KB_GENS:-tests/import/generations tests/kernelbench/generations tests/kernelbench/v4/kb-prompt}"
    # The suite built, checked against KernelBench's own modules (the worker's TorchScript path,
    # on the GPU), its torch.compile baselines timed, and KB_GENS graded by KernelBench's eval
    # and by kernrl side by side (scripts/kb-gpu.sh; KB_* variables there).
    scripts/kb-gpu.sh --kernrl "$K" --refdump "$BUILD/kernrl_suite_refdump" --kernelbench "$KERNELBENCH_DIR" \
      --out "$OUT" ${KB_STEPS:-suite identity baselines side}
    log "kernrl's own solutions graded on the suite's problems of the same number and names"
    {
      echo "| suite problem | kernrl solution | status | speedup |"; echo "| --- | --- | --- | --- |"
      for sol in problems/L[123]/*/solution.cu; do
        lv=$(basename "$(dirname "$(dirname "$sol")")"); num=$(basename "$(dirname "$sol")" | cut -d_ -f1)
        [ -n "$(ls -d "$KB_SUITE/problems/$lv/${num}_"* 2>/dev/null)" ] || continue
        "$K" eval "$sol" --problem "${lv}_${num}" --suite "$KB_SUITE" --json 2>/dev/null | python3 -c '
import json, sys
line = sys.stdin.readline()
r = json.loads(line) if line.strip() else {}
print("| %s | %s | %s | %s |" % (r.get("problem", sys.argv[1]), sys.argv[2], r.get("status", "no record"), r.get("speedup", "")))' "${lv}_${num}" "$sol"
      done
    } >"$OUT/kernelbench-solutions.md"
    cat "$OUT/kernelbench-solutions.md"
  fi
fi

if want training; then
  log "training loop: a multi-turn episode over kernrl serve on the GPU, next-turn prompts, report --by turn"
  scripts/training-gpu.sh --build "$BUILD" --out "$OUT/training" >"$OUT/training.log" 2>&1 || log "training failed"
  tail -30 "$OUT/training.log"
fi

if want pack; then
  (cd "$OUT" && tar czf /tmp/kernrl-results.tgz . && find . -mindepth 1 -delete && mv /tmp/kernrl-results.tgz results.tgz)
fi

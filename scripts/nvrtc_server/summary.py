#!/usr/bin/env python3
"""The Markdown of scripts/nvrtc-server-bench.sh from its work folder: compile and step times per
kernel and mode, and the acceptance corpus compared between the fork server and a process per
compile (statuses, and cubins byte for byte from the two compile caches).
  summary.py DIR [--device TEXT]   (TEXT: the machine the figures are from; default this one's CPU)"""
import glob
import json
import os
import statistics
import sys
import time

tmp = sys.argv[1]
steps = [json.loads(l) for l in open(os.path.join(tmp, "steps.jsonl"))]
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
load = " ".join(open("/proc/loadavg").read().split()[:3])
device = f"{cpu} ({os.cpu_count()} cores, load average {load} at the end)"
if "--device" in sys.argv:
    device = sys.argv[sys.argv.index("--device") + 1]


def med(xs):
    return statistics.median(xs) if xs else float("nan")


print(f"`scripts/nvrtc-server-bench.sh` on {device}, {time.strftime('%Y-%m-%d', time.gmtime())}; "
      "compile-only (no GPU used) unless said. One session: "
      "`kernrl serve --stdio --compile-only`, one answer at a time, every answer a compile-cache "
      "miss (the same acceptance answer with a distinct comment). Modes: `server+pch` (the fork "
      "server with precompiled headers, the default), `server` (`compile.pch_sets: 0`), `process` "
      "(`compile.server: false`: a kernrl-nvrtc process per compile). \"first\": the session's "
      "first compile (it starts the server and, with PCHs, the header build); \"warm\": the "
      "median of the later compiles that used a PCH (server+pch) or of all later ones; \"step - "
      "compile\": the median of what the step took beyond its compile. Milliseconds.\n")
print("| kernel | mode | first compile | warm compile | warm step | step - compile | PCH used |")
print("|---|---|---|---|---|---|---|")
for kernel in ("cub", "cooperative_groups", "plain"):
    for mode in ("server+pch", "server", "process"):
        rs = [r for r in steps if r["kernel"] == kernel and r["mode"] == mode and r["compile_ms"]]
        if not rs:
            continue
        later = rs[1:]
        warm = [r for r in later if r["pch"] == "used"] if mode == "server+pch" else later
        if mode == "server+pch" and not warm:
            warm = later
        used = sum(r["pch"] == "used" for r in rs)
        print(f"| {kernel} | {mode} | {rs[0]['compile_ms']:.0f} | "
              f"{med([r['compile_ms'] for r in warm]):.0f} | {med([r['step_ms'] for r in warm]):.0f} | "
              f"{med([r['step_ms'] - r['compile_ms'] for r in warm]):.1f} | {used}/{len(rs)} |")

if not os.path.exists(os.path.join(tmp, "corpus-process.jsonl")):
    print("\nAcceptance corpus: not run to the end here.")
    server = None
else:
    server = [json.loads(l) for l in open(os.path.join(tmp, "corpus-server.jsonl"))]
if server is not None:
    originals = {os.path.basename(r["file"]): r for r in server if "/corpus/" in r["file"]}
    process = {}
    for l in open(os.path.join(tmp, "corpus-process.jsonl")):
        r = json.loads(l)
        process[os.path.basename(r.get("file") or "")] = r.get("status")
    same_status = [f for f, r in originals.items() if process.get(f) == r["status"]]
    cubins = lambda d: {os.path.basename(p): open(p, "rb").read()
                        for p in glob.glob(os.path.join(tmp, d, "*", "*.cubin"))}
    srv, proc = cubins("cache-corpus-server"), cubins("cache-corpus-process")
    same = [k for k in proc if srv.get(k) == proc[k]]
    used = sum(r["pch"] == "used" for r in originals.values())
    print()
    print(f"Acceptance corpus ({len(originals)} answers): {len(same_status)} with the same status through "
          f"the fork server as with a process per compile; {len(same)} of {len(proc)} cubins the same "
          f"byte for byte ({used} of the answers compiled with a PCH, the others had no CCCL or "
          f"cooperative-groups header to cover). Differing: "
          f"{', '.join(f + ' (' + str(originals[f]['status']) + ' / ' + str(process.get(f)) + ')' for f in sorted(set(originals) - set(same_status))) or 'none'}"
          f"{'; cubins ' + ', '.join(k for k in proc if k not in same) if len(same) != len(proc) else ''}.")

gpu = os.path.join(tmp, "gpu-steps.jsonl")
if os.path.exists(gpu):
    rs = [json.loads(l) for l in open(gpu)][1:]  # the first made the PCH
    warm = [r for r in rs if r["pch"] == "used"]
    try:
        per_kernel = float(open(os.path.join(tmp, "gpu-grade-dir-ms")).read())
    except (OSError, ValueError):
        per_kernel = float("nan")
    statuses = sorted({r["status"] for r in rs})
    print()
    print(f"On the GPU, the CUB kernel (L1_23_Softmax, statuses {', '.join(map(str, statuses))}): one "
          f"session's step {med([r['step_ms'] for r in warm]):.0f} ms at the median "
          f"({len(warm)} of {len(rs)} steps with the PCH ready; compile "
          f"{med([r['compile_ms'] for r in warm]):.0f} ms of it); grade-dir over {len(rs)} copies of "
          f"the same kernel: {per_kernel:.0f} ms per kernel (its summary's kernels/min); the difference "
          f"{med([r['step_ms'] for r in warm]) - per_kernel:.0f} ms (target: at most 30 ms).")

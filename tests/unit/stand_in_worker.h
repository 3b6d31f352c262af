// A stand-in for kernrl-worker, for tests on machines without a GPU: a Python script that speaks
// the worker protocol (docs/protocol.md). What it does with an eval request is chosen by the
// request's seed: 1 answers `correct` with timings, 2 writes to its log and exits 1, 3 never
// answers, 4 answers with `fatal` and exits. It says hello after 0.2 s.
#pragma once

#include <sys/stat.h>

#include <fstream>
#include <string>

#include "protocol/worker.h"
#include "test_dirs.h"

inline std::string stand_in_worker() {
  auto dir = fresh_test_dir("stand-in-worker");
  auto path = dir / "fake-worker";
  std::ofstream(path) << R"(#!/usr/bin/env python3
import json, sys, time
time.sleep(0.2)
print(json.dumps({"hello": True, "protocol": )"
                      << kernrl::kWorkerProtocol << R"(, "build_id": "test",
    "device": {"name": "Stand-in", "compute_capability": "9.0", "sms": 132, "l2_bytes": 52428800,
               "memory_bytes": 85045395456, "driver": 13000},
    "uuid": "", "versions": {"torch": "0", "cuda": "13.0", "driver": "13.0"},
    "startup_ms": {"exec": 12.5, "cuda_init": 1.0, "context": 2.0, "torch": 0.5}}), flush=True)
def stats(median):
    return {"mean_ms": median, "median_ms": median, "min_ms": median, "max_ms": median,
            "std_ms": 0.0, "mad_ms": 0.0, "n": 10, "rel_stderr": 0.0}
for line in sys.stdin:
    req = json.loads(line)
    seed = req.get("seed")
    if seed == 2:
        print("stand-in: crashing now", file=sys.stderr, flush=True)
        sys.exit(1)
    if seed == 3:
        time.sleep(60)
    answer = {"status": "correct", "fatal": seed == 4,
              "correctness": {"trials": [], "n_trials": 5, "n_passed": 5},
              "timing": {"kernel": stats(0.5), "baseline": stats(1.0), "sizes": req.get("sizes") or {}},
              "phases_ms": {"kernel": 1.0, "timing": 2.0}}
    print(json.dumps(answer), flush=True)
    if seed == 4:
        sys.exit(3)
)";
  chmod(path.c_str(), 0755);
  return path.string();
}

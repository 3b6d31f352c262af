// The stand-in for kernrl-worker of the tests (tests/stand_in_worker.py): a script that speaks the
// worker protocol without a GPU. What it does with an eval request is chosen by the request's seed:
// 1 answers `correct` with timings, 2 writes to its log and exits 1, 3 never answers, 4 answers
// with `fatal` and exits. It says hello after 0.2 s.
#pragma once

#include <string>

inline std::string stand_in_worker() {
  return std::string(KERNRL_TEST_DIR) + "/stand_in_worker.py";
}

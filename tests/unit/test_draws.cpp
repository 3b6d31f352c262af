// The draws of one evaluation (src/core/draws.h) and the ranges the worker overwrites in freed
// device memory (src/worker/scrub.h): what keeps the references' and baselines' answers away from
// the inputs a kernel is graded on. The GPU side is in the adversarial suite.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "core/draws.h"
#include "worker/scrub.h"

using namespace kernrl;

namespace {

// Every input draw an evaluation with `seed` can make: its trials, timing sets, timed samples,
// baseline sets, the deadline's reference run, the launch facts' run and the autotune timing's.
std::multiset<uint64_t> evaluation_draws(uint64_t seed) {
  std::multiset<uint64_t> s;
  for (int i = 0; i < 64; ++i) s.insert(draws::trial(seed, i));
  for (int i = 0; i < 8; ++i) s.insert(draws::timing_set(seed, i));
  for (int i = 0; i < 8; ++i) s.insert(draws::baseline(seed, i));
  for (int i = 0; i < 1000; ++i) s.insert(draws::sample(seed, i));
  s.insert(draws::bound(seed));
  s.insert(draws::launches(seed));
  s.insert(draws::autotune(seed));
  return s;
}

}  // namespace

TEST_CASE("no two draws of an evaluation, or of it and its reference kernel's, are the same") {
  for (uint64_t seed : {0ull, 1ull, 7ull, 0x9e3779b97f4a7c15ull, ~0ull}) {
    std::multiset<uint64_t> mine = evaluation_draws(seed);
    CHECK(std::set<uint64_t>(mine.begin(), mine.end()).size() == mine.size());
    const uint64_t ref = draws::reference_kernel(seed);
    CHECK(ref != seed);
    std::multiset<uint64_t> both = mine;
    for (uint64_t d : evaluation_draws(ref)) both.insert(d);
    CHECK(std::set<uint64_t>(both.begin(), both.end()).size() == both.size());
  }
}

TEST_CASE("the draws keep their tags: a record's seed reproduces the same inputs") {
  // Changing a tag silently changes the inputs every recorded seed stands for.
  CHECK(draws::trial(5, 2) == derive_seed(5, "trial2"));
  CHECK(draws::timing_set(5, 1) == derive_seed(5, "timing1"));
  CHECK(draws::sample(5, 10) == derive_seed(5, "sample10"));
  CHECK(draws::trial_order(5) == derive_seed(5, "order"));
  CHECK(draws::bound(5) == derive_seed(5, "bound"));
  CHECK(draws::launches(5) == derive_seed(5, "launches"));
  CHECK(draws::autotune(5) == derive_seed(5, "autotune"));
  CHECK(draws::reference_kernel(5) == derive_seed(5, "kernel-baseline"));
  CHECK(draws::baseline(5, 0) == derive_seed(5, "baseline0"));
}

TEST_CASE("the free blocks of the caching allocator's segments, as ranges to overwrite") {
  std::vector<CachedSegment> segs(3);
  // free 512 | used 1024 | free 256 | free 256 | used 512 | free 1024
  segs[0].address = 0x10000;
  segs[0].blocks = {{512, false}, {1024, true}, {256, false},
                    {256, false}, {512, true},  {1024, false}};
  // all in use: nothing
  segs[1].address = 0x90000;
  segs[1].blocks = {{2048, true}};
  // one free block, and an empty one that adds nothing
  segs[2].address = 0xa0000;
  segs[2].blocks = {{0, false}, {4096, false}};
  std::vector<DeviceRange> want = {
      {0x10000, 512}, {0x10000 + 1536, 512}, {0x10000 + 2560, 1024}, {0xa0000, 4096}};
  CHECK(free_ranges(segs) == want);
  CHECK(free_ranges({}).empty());
}

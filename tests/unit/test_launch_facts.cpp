// The per-launch facts: the occupancy arithmetic the worker uses to name what
// limits a launch, and the record's `launches` array.
#include <doctest/doctest.h>

#include "grading/prepare.h"
#include "record/record.h"
#include "record/reward.h"
#include "worker/occupancy.h"

using namespace kernrl;
using nlohmann::json;

namespace {

std::vector<std::string> limiting(const BlockNeeds &b, int active) {
  return limiting_resources(sm_block_limits(SmResources{}, b), active);
}

} // namespace

TEST_CASE(
    "occupancy limits per resource follow CUDA's calculator (H100 figures)") {
  SmResources h100;
  // 256 threads at 128 registers: 4096 registers a warp, 16 warps an SM, 2
  // blocks.
  auto l = sm_block_limits(h100, {256, 128, 0, 0});
  CHECK(l.at("registers") == 2);
  CHECK(l.at("warps") == 8);
  CHECK(l.at("blocks") == 32);
  CHECK(l.at("shared_memory") == 228); // the driver's 1 KiB reserve per block
  CHECK(limiting({256, 128, 0, 0}, 2) == std::vector<std::string>{"registers"});
  // 1024 threads at 32 registers: registers and warp slots both allow 2 blocks.
  CHECK(limiting({1024, 32, 0, 0}, 2) ==
        std::vector<std::string>{"registers", "warps"});
  // 48 KiB of dynamic shared memory: 49152 + 1024 reserved, 4 blocks in 228
  // KiB.
  auto s = sm_block_limits(h100, {128, 32, 0, 49152});
  CHECK(s.at("shared_memory") == 4);
  CHECK(s.at("registers") == 16);
  CHECK(limiting({128, 32, 0, 49152}, 4) ==
        std::vector<std::string>{"shared_memory"});
  // Static shared memory counts the same, rounded up to 128 bytes.
  CHECK(sm_block_limits(h100, {128, 32, 1000, 0}).at("shared_memory") ==
        233472 / 2048);
  // Registers are allocated per warp in units of 256: 255 registers take 8192 a
  // warp.
  CHECK(sm_block_limits(h100, {64, 255, 0, 0}).at("registers") == 4);
  // Blocks that cannot fit at all: 1024 threads x 128 registers, more shared
  // memory than a block may have, more threads than a block may have.
  CHECK(sm_block_limits(h100, {1024, 128, 0, 0}).at("registers") == 0);
  CHECK(sm_block_limits(h100, {128, 32, 0, 232448 + 1}).at("shared_memory") ==
        0);
  CHECK(sm_block_limits(h100, {128, 32, 0, 232448}).at("shared_memory") == 1);
  CHECK(sm_block_limits(h100, {2048, 16, 0, 0}).at("warps") == 0);
  CHECK(limiting({1024, 128, 0, 0}, 0) ==
        std::vector<std::string>{"registers"});
  // Small blocks: the SM's 32 block slots.
  CHECK(limiting({32, 16, 0, 0}, 32) == std::vector<std::string>{"blocks"});
  // The driver holds fewer blocks than any limit computed here (barriers...):
  // "other".
  CHECK(limiting({256, 32, 0, 0}, 3) == std::vector<std::string>{"other"});
  CHECK(sm_block_limits(h100, {0, 32, 0, 0}).empty());
}

TEST_CASE("complete_record: the worker's launch facts become the record's "
          "`launches`") {
  Prepared p;
  p.record = {
      {"schema", kTraceSchema}, {"status", "compiled"}, {"error", nullptr}};
  EvalAnswer a;
  a.status = Status::Correct;
  LaunchFacts l;
  l.index = 1;
  l.kernel = "softmax_rows";
  l.grid = {{4096, 1, 1}};
  l.block = {{256, 1, 1}};
  l.registers = 40;
  l.ms = 0.25;
  l.share = 1.0;
  a.launches = {l};
  auto preset = load_reward_preset("kernrl");
  complete_record(p, &a, json(nullptr), json::object(), preset, json(nullptr),
                  "");
  REQUIRE(p.record["launches"].is_array());
  CHECK(p.record["launches"] == launches_to_json(a.launches));
  CHECK(p.record["launches"][0]["registers"] == 40);
  std::string line = p.record.dump();
  CHECK(line.find('\n') == std::string::npos);
  CHECK(json::parse(line) == p.record);

  // An answer without facts: no key.
  Prepared q;
  q.record = {
      {"schema", kTraceSchema}, {"status", "compiled"}, {"error", nullptr}};
  EvalAnswer b;
  b.status = Status::Incorrect;
  complete_record(q, &b, json(nullptr), json::object(), preset, json(nullptr),
                  "");
  CHECK_FALSE(q.record.contains("launches"));
}

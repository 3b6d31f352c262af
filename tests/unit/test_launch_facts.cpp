// The per-launch facts: the occupancy arithmetic the worker uses to name what limits a launch, the
// record's `launches` array and the advice the feedback makes of it (synthetic records, with and
// without `launches`).
#include <doctest/doctest.h>

#include "grading/prepare.h"
#include "record/feedback.h"
#include "record/record.h"
#include "record/reward.h"
#include "worker/occupancy.h"

using namespace kernrl;
using nlohmann::json;

namespace {

std::vector<std::string> limiting(const BlockNeeds& b, int active) {
  return limiting_resources(sm_block_limits(SmResources{}, b), active);
}

// A launch as the record carries it.
json launch(int index, const std::string& kernel, double share, int regs, int local_bytes,
            double occupancy, std::vector<std::string> limited_by, int grid_x = 1024,
            int threads = 256) {
  return {{"index", index},
          {"kernel", kernel},
          {"line", 10 + index},
          {"repeats", 1},
          {"grid", {grid_x, 1, 1}},
          {"block", {threads, 1, 1}},
          {"dynamic_shared_bytes", 0},
          {"static_shared_bytes", 0},
          {"registers", regs},
          {"local_bytes", local_bytes},
          {"max_threads_per_block", 1024},
          {"occupancy",
           {{"active_blocks_per_sm", static_cast<int>(occupancy * 64 * 32 / threads)},
            {"active_warps_per_sm", static_cast<int>(occupancy * 64)},
            {"max_warps_per_sm", 64},
            {"fraction", occupancy},
            {"limited_by", limited_by},
            {"block_limits", json::object()}}},
          {"ms", share},
          {"share", share}};
}

json correct_record(json launches) {
  json r = {{"status", "correct"},
            {"device", {{"name", "NVIDIA H100 80GB HBM3"}, {"sms", 132}}},
            {"speedup", 1.5},
            {"timing", {{"kernel", {{"median_ms", 1.0}}}, {"baseline", {{"median_ms", 1.5}}}}}};
  if (!launches.is_null()) r["launches"] = launches;
  return r;
}

}  // namespace

TEST_CASE("occupancy limits per resource follow CUDA's calculator (H100 figures)") {
  SmResources h100;
  // 256 threads at 128 registers: 4096 registers a warp, 16 warps an SM, 2 blocks.
  auto l = sm_block_limits(h100, {256, 128, 0, 0});
  CHECK(l.at("registers") == 2);
  CHECK(l.at("warps") == 8);
  CHECK(l.at("blocks") == 32);
  CHECK(l.at("shared_memory") == 228);  // the driver's 1 KiB reserve per block
  CHECK(limiting({256, 128, 0, 0}, 2) == std::vector<std::string>{"registers"});
  // 1024 threads at 32 registers: registers and warp slots both allow 2 blocks.
  CHECK(limiting({1024, 32, 0, 0}, 2) == std::vector<std::string>{"registers", "warps"});
  // 48 KiB of dynamic shared memory: 49152 + 1024 reserved, 4 blocks in 228 KiB.
  auto s = sm_block_limits(h100, {128, 32, 0, 49152});
  CHECK(s.at("shared_memory") == 4);
  CHECK(s.at("registers") == 16);
  CHECK(limiting({128, 32, 0, 49152}, 4) == std::vector<std::string>{"shared_memory"});
  // Static shared memory counts the same, rounded up to 128 bytes.
  CHECK(sm_block_limits(h100, {128, 32, 1000, 0}).at("shared_memory") == 233472 / 2048);
  // Registers are allocated per warp in units of 256: 255 registers take 8192 a warp.
  CHECK(sm_block_limits(h100, {64, 255, 0, 0}).at("registers") == 4);
  // Blocks that cannot fit at all: 1024 threads x 128 registers, more shared memory than a block
  // may have, more threads than a block may have.
  CHECK(sm_block_limits(h100, {1024, 128, 0, 0}).at("registers") == 0);
  CHECK(sm_block_limits(h100, {128, 32, 0, 232448 + 1}).at("shared_memory") == 0);
  CHECK(sm_block_limits(h100, {128, 32, 0, 232448}).at("shared_memory") == 1);
  CHECK(sm_block_limits(h100, {2048, 16, 0, 0}).at("warps") == 0);
  CHECK(limiting({1024, 128, 0, 0}, 0) == std::vector<std::string>{"registers"});
  // Small blocks: the SM's 32 block slots.
  CHECK(limiting({32, 16, 0, 0}, 32) == std::vector<std::string>{"blocks"});
  // The driver holds fewer blocks than any limit computed here (barriers...): "other".
  CHECK(limiting({256, 32, 0, 0}, 3) == std::vector<std::string>{"other"});
  CHECK(sm_block_limits(h100, {0, 32, 0, 0}).empty());
}

TEST_CASE("feedback: a correct kernel's launches become one line of advice") {
  json rec = correct_record(json::array({launch(1, "k_partial", 0.12, 32, 0, 1.0, {"warps"}),
                                         launch(2, "k_reduce", 0.81, 128, 96, 0.25, {"registers"}),
                                         launch(3, "k_scale", 0.07, 16, 0, 1.0, {"warps"})}));
  std::string f = make_feedback(rec);
  CHECK(f.find("3 launches; launch 2 (k_reduce) takes 81% of the time, uses 96 bytes of local "
               "memory per thread (register spills or local arrays), has occupancy 25% limited by "
               "registers (128 per thread)\n") != std::string::npos);
  CHECK(f.find("Time: kernel") < f.find("3 launches"));
  CHECK(f.find("3 launches") < f.find("Correct. To go faster"));
  CHECK(f.size() <= kMaxFeedbackChars);
  CHECK(f.find("k_partial") == std::string::npos);  // only the heaviest launch is named

  // Only what the facts support: a launch with nothing of note gets only its share.
  rec["launches"][1] = launch(2, "k_reduce", 0.81, 32, 0, 0.75, {"warps"});
  f = make_feedback(rec);
  CHECK(f.find("3 launches; launch 2 (k_reduce) takes 81% of the time\n") != std::string::npos);
  CHECK(f.find("occupancy") == std::string::npos);
  CHECK(f.find("local memory") == std::string::npos);

  // One launch: no share; ties named together; repeats said; a grid smaller than the GPU.
  json one = launch(1, "k", 1.0, 32, 0, 0.5, {"registers", "warps"}, 64, 1024);
  one["occupancy"]["fraction"] = 0.375;
  one["repeats"] = 8;
  f = make_feedback(correct_record(json::array({one})));
  CHECK(f.find("launch 1 (k, 8 times) has occupancy 38% limited by registers (32 per thread) and "
               "block size (1024 threads), launches 64 blocks for 132 SMs (68 SMs idle)\n") !=
        std::string::npos);
  CHECK(f.find("launches;") == std::string::npos);

  // One launch with nothing of note: no line at all.
  std::string plain =
      make_feedback(correct_record(json::array({launch(1, "k", 1.0, 32, 0, 1.0, {"warps"})})));
  CHECK(plain == make_feedback(correct_record(json(nullptr))));
}

TEST_CASE("feedback: records without launches, odd launches, other statuses") {
  // No `launches` (older records, compile errors, faults): the feedback is as before.
  json none = correct_record(json(nullptr));
  std::string f = make_feedback(none);
  CHECK(f.find("launch") == std::string::npos);
  CHECK(make_feedback(correct_record(json::array())) == f);
  // Odd values never throw and say nothing.
  json odd = correct_record(json::array(
      {json{
           {"index", "x"}, {"kernel", 3}, {"repeats", 1}, {"occupancy", "high"}, {"share", "most"}},
       json(7), json{{"kernel", "k"}, {"repeats", 0}}}));
  CHECK_NOTHROW(f = make_feedback(odd));
  CHECK(f.find("occupancy") == std::string::npos);

  // An incorrect kernel: correctness comes first, no speed advice.
  json inc = correct_record(json::array({launch(1, "k", 1.0, 128, 96, 0.25, {"registers"}, 64)}));
  inc["status"] = "incorrect";
  inc.erase("timing");
  f = make_feedback(inc);
  CHECK(f.find("local memory") == std::string::npos);
  CHECK(f.find("occupancy") == std::string::npos);

  // A launch_error whose block cannot fit on an SM says so, whatever the status.
  json big = launch(2, "k_big", 0, 128, 0, 0, {"registers"}, 64, 1024);
  big.erase("ms");
  big.erase("share");
  json le = {
      {"status", "launch_error"},
      {"error", {{"category", "launch_error"}, {"message", "launching k_big: too many resources"}}},
      {"launches", json::array({launch(1, "k_small", 0, 32, 0, 1.0, {"warps"}), big})}};
  f = make_feedback(le);
  CHECK(f.find("launch 2 (k_big) cannot run: one block does not fit on an SM (registers (128 per "
               "thread))\n") != std::string::npos);
}

TEST_CASE("complete_record: the worker's launch facts become the record's `launches`") {
  Prepared p;
  p.record = TraceRecord::from_json(
      {{"schema", kTraceSchema}, {"status", "compiled"}, {"error", nullptr}});
  EvalAnswer a;
  a.status = Status::Correct;
  trace::Launch l;
  l.index = 1;
  l.kernel = "softmax_rows";
  l.line = 4;
  l.repeats = int64_t{1};
  l.grid = std::vector<int64_t>{4096, 1, 1};
  l.block = std::vector<int64_t>{256, 1, 1};
  l.registers = int64_t{40};
  l.ms = 0.25;
  l.share = 1.0;
  a.launches = std::vector<trace::Launch>{l};
  auto preset = load_reward_preset("kernrl");
  complete_record(p, &a, json(nullptr), json::object(), preset, json(nullptr), "");
  json rec = p.record.to_json();
  REQUIRE(rec["launches"].is_array());
  CHECK(rec["launches"].dump() == a.to_json()["launches"].dump());  // the same bytes
  CHECK(rec["launches"][0]["registers"] == 40);
  REQUIRE(p.record.launches);
  CHECK(p.record.launches->at(0).registers.value_or(0) == 40);  // read by type
  std::string line = p.record.to_line();
  CHECK(line.find('\n') == std::string::npos);
  CHECK(json::parse(line) == rec);

  // An answer without facts: no key.
  Prepared q;
  q.record = TraceRecord::from_json(
      {{"schema", kTraceSchema}, {"status", "compiled"}, {"error", nullptr}});
  EvalAnswer b;
  b.status = Status::Incorrect;
  complete_record(q, &b, json(nullptr), json::object(), preset, json(nullptr), "");
  CHECK(q.record.launches.absent());
}

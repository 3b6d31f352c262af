// The trajectory view of `kernrl report` (docs/report.md, "Trajectories"): records with a
// `trajectory` and a `turn` grouped into multi-turn trajectories per run, with per-turn rates,
// solved within T turns, turns to the first correct answer, the best speedup and discounted
// returns R_t = s_t + g s_{t+1} + g^2 s_{t+2} + ... of each trajectory.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "record/trace_record.h"

namespace kernrl::report {

// The discounted returns of rewards s_1..s_T: R_t = sum over j >= t of gamma^(j-t) s_j.
std::vector<double> discounted_returns(const std::vector<double>& rewards, double gamma);

// One trajectory: its records in turn order (the last record of a turn graded twice).
struct Trajectory {
  std::string run, id;
  std::vector<const TraceRecord*> turns;
};

// The trajectories of `recs` (records without both `trajectory` and `turn` are left out), runs in
// `run_order` first, then by id.
std::vector<Trajectory> trajectories_of(const std::vector<TraceRecord>& recs,
                                        const std::vector<std::string>& run_order);

// The `trajectories` object of the report (null when no record belongs to a trajectory):
// {gamma, runs: [{run, trajectories, solved, solved_within: {T: rate}, mean_turns_to_correct,
// mean_best_speedup, mean_return, per_turn: [{turn, trajectories, format_rate, compile_rate,
// correct_rate, mean_reward, mean_return}]}], list: [{run, trajectory, problem, turns,
// first_correct_turn, best_speedup, rewards, returns}]}.
nlohmann::json trajectories_json(const std::vector<TraceRecord>& recs, double gamma,
                                 const std::vector<std::string>& run_order);

// A record's reward as a trajectory counts it: the record's `reward`, 0 when it has none.
double turn_reward(const TraceRecord& r);

}  // namespace kernrl::report

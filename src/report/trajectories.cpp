#include "report/trajectories.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>

#include "report/aggregate.h"
#include "report/records.h"

namespace kernrl::report {
using nlohmann::json;

std::vector<double> discounted_returns(const std::vector<double>& rewards, double gamma) {
  std::vector<double> r(rewards.size());
  double acc = 0;
  for (size_t i = rewards.size(); i-- > 0;) {
    acc = rewards[i] + gamma * acc;
    r[i] = acc;
  }
  return r;
}

double turn_reward(const TraceRecord& r) {
  return r.reward ? *r.reward : 0.0;
}

std::vector<Trajectory> trajectories_of(const std::vector<TraceRecord>& recs,
                                        const std::vector<std::string>& run_order) {
  // (run, id) -> turn -> record (the last one of a turn)
  std::map<std::pair<std::string, std::string>, std::map<int, const TraceRecord*>> by;
  for (const TraceRecord& r : recs)
    if (r.trajectory && r.turn && *r.turn >= 1) by[{rec::run_of(r), *r.trajectory}][*r.turn] = &r;
  std::map<std::string, size_t> rank;
  for (size_t i = 0; i < run_order.size(); ++i) rank[run_order[i]] = i;
  std::vector<Trajectory> out;
  for (auto& [key, turns] : by) {
    Trajectory t{key.first, key.second, {}};
    for (const auto& [n, r] : turns) t.turns.push_back(r);
    out.push_back(std::move(t));
  }
  std::stable_sort(out.begin(), out.end(), [&](const Trajectory& a, const Trajectory& b) {
    size_t ra = rank.count(a.run) ? rank[a.run] : SIZE_MAX;
    size_t rb = rank.count(b.run) ? rank[b.run] : SIZE_MAX;
    return ra != rb ? ra < rb : a.run != b.run ? a.run < b.run : a.id < b.id;
  });
  return out;
}

namespace {

// A trajectory's own figures.
struct Summary {
  std::vector<double> rewards, returns;
  int first_correct = 0;  // 0: never
  std::optional<double> best_speedup;
};

Summary summarise(const Trajectory& t, double gamma) {
  Summary s;
  for (const TraceRecord* r : t.turns) {
    s.rewards.push_back(turn_reward(*r));
    if (rec::is_correct(*r) && !s.first_correct) s.first_correct = *r->turn;
    if (auto sp = rec::counted_speedup(*r); sp && (!s.best_speedup || *sp > *s.best_speedup))
      s.best_speedup = sp;
  }
  s.returns = discounted_returns(s.rewards, gamma);
  return s;
}

json run_json(const std::string& run, const std::vector<const Trajectory*>& ts,
              const std::vector<const Summary*>& ss) {
  int max_turn = 0;
  for (const Trajectory* t : ts) max_turn = std::max(max_turn, *t->turns.back()->turn);
  json per_turn = json::array();
  for (int turn = 1; turn <= max_turn; ++turn) {
    size_t n = 0, formatted = 0, comp = 0, corr = 0;
    std::vector<double> rewards, returns;
    for (size_t i = 0; i < ts.size(); ++i)
      for (size_t k = 0; k < ts[i]->turns.size(); ++k) {
        const TraceRecord& r = *ts[i]->turns[k];
        if (*r.turn != turn) continue;
        ++n;
        formatted += rec::format_ok(r);
        comp += rec::compiled(r);
        corr += rec::is_correct(r);
        if (r.reward) rewards.push_back(*r.reward);
        returns.push_back(ss[i]->returns[k]);
      }
    if (n == 0) continue;
    per_turn.push_back({{"turn", turn},
                        {"trajectories", n},
                        {"format_rate", rate(formatted, n)},
                        {"compile_rate", rate(comp, n)},
                        {"correct_rate", rate(corr, n)},
                        {"mean_reward", mean_or_null(rewards)},
                        {"mean_return", mean_or_null(returns)}});
  }
  size_t solved = 0;
  std::vector<double> turns_to_correct, log_best, first_returns;
  json within = json::object();
  for (const Summary* s : ss) {
    if (s->first_correct) {
      ++solved;
      turns_to_correct.push_back(s->first_correct);
    }
    if (s->best_speedup && *s->best_speedup > 0) log_best.push_back(std::log(*s->best_speedup));
    if (!s->returns.empty()) first_returns.push_back(s->returns.front());
  }
  for (int turn = 1; turn <= max_turn; ++turn) {
    size_t n = 0;
    for (const Summary* s : ss) n += s->first_correct && s->first_correct <= turn;
    within[std::to_string(turn)] = rate(n, ss.size());
  }
  json geo = nullptr;
  if (!log_best.empty()) {
    double sum = 0;
    for (double v : log_best) sum += v;
    geo = std::exp(sum / static_cast<double>(log_best.size()));
  }
  return {{"run", run},
          {"trajectories", ts.size()},
          {"solved", solved},
          {"solved_within", within},
          {"mean_turns_to_correct", mean_or_null(turns_to_correct)},
          {"geomean_best_speedup", geo},
          {"timed_trajectories", log_best.size()},
          {"mean_return", mean_or_null(first_returns)},
          {"per_turn", per_turn}};
}

}  // namespace

json trajectories_json(const std::vector<TraceRecord>& recs, double gamma,
                       const std::vector<std::string>& run_order) {
  std::vector<Trajectory> ts = trajectories_of(recs, run_order);
  if (ts.empty()) return nullptr;
  std::vector<Summary> ss;
  for (const Trajectory& t : ts) ss.push_back(summarise(t, gamma));
  json runs = json::array(), list = json::array();
  for (size_t i = 0; i < ts.size();) {
    std::vector<const Trajectory*> group;
    std::vector<const Summary*> sums;
    size_t j = i;
    for (; j < ts.size() && ts[j].run == ts[i].run; ++j) {
      group.push_back(&ts[j]);
      sums.push_back(&ss[j]);
    }
    runs.push_back(run_json(ts[i].run, group, sums));
    i = j;
  }
  for (size_t i = 0; i < ts.size(); ++i) {
    const Trajectory& t = ts[i];
    json turns = json::array();
    for (const TraceRecord* r : t.turns) turns.push_back(*r->turn);
    list.push_back(
        {{"run", t.run},
         {"trajectory", t.id},
         {"problem", rec::problem_of(*t.turns.front()).value_or("")},
         {"turns", turns},
         {"first_correct_turn", ss[i].first_correct ? json(ss[i].first_correct) : json(nullptr)},
         {"best_speedup", ss[i].best_speedup ? json(*ss[i].best_speedup) : json(nullptr)},
         {"rewards", ss[i].rewards},
         {"returns", ss[i].returns}});
  }
  return {{"gamma", gamma}, {"runs", runs}, {"list", list}};
}

}  // namespace kernrl::report

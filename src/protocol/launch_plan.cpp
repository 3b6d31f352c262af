#include "protocol/launch_plan.h"

#include <algorithm>

namespace kernrl {

std::vector<std::string> LaunchPlan::kernel_names() const {
  std::vector<std::string> names;
  for (const auto& l : launches)
    if (std::find(names.begin(), names.end(), l.kernel) == names.end()) names.push_back(l.kernel);
  return names;
}

Vars plan_vars(const Vars& sizes, int64_t num_sms) {
  Vars v = sizes;
  v["num_sms"] = num_sms;
  return v;
}

nlohmann::json LaunchPlan::to_json() const {
  nlohmann::json ls = nlohmann::json::array();
  for (const auto& l : launches) {
    nlohmann::json args = nlohmann::json::array();
    for (const auto& a : l.args)
      args.push_back({{"text", a.text}, {"kind", static_cast<int>(a.kind)}});
    ls.push_back({{"kernel", l.kernel},
                  {"grid", l.grid},
                  {"block", l.block},
                  {"cluster", l.cluster},
                  {"shared_bytes", l.shared_bytes},
                  {"args", args},
                  {"repeat_count", l.repeat_count},
                  {"repeat_var", l.repeat_var},
                  {"cooperative", l.cooperative},
                  {"line", l.line}});
  }
  nlohmann::json sc = nlohmann::json::array();
  for (const auto& s : scratch)
    sc.push_back({{"name", s.name}, {"dtype", s.dtype.name}, {"count", s.count}, {"line", s.line}});
  return {{"problem", problem}, {"launches", ls}, {"scratch", sc}, {"line", line}};
}

LaunchPlan LaunchPlan::from_json(const nlohmann::json& j) {
  LaunchPlan p;
  p.problem = j.at("problem");
  p.line = j.at("line");
  for (const auto& l : j.at("launches")) {
    LaunchSpec s;
    s.kernel = l.at("kernel");
    s.grid = l.at("grid").get<std::vector<std::string>>();
    s.block = l.at("block").get<std::vector<std::string>>();
    s.cluster = l.at("cluster").get<std::vector<std::string>>();
    s.shared_bytes = l.at("shared_bytes");
    for (const auto& a : l.at("args"))
      s.args.push_back({a.at("text"), static_cast<ArgKind>(a.at("kind").get<int>())});
    s.repeat_count = l.at("repeat_count");
    s.repeat_var = l.at("repeat_var");
    s.cooperative = l.at("cooperative");
    s.line = l.at("line");
    p.launches.push_back(s);
  }
  for (const auto& s : j.at("scratch"))
    p.scratch.push_back(
        {s.at("name"), *dtype_from_name(s.at("dtype")), s.at("count"), s.at("line")});
  return p;
}

}  // namespace kernrl

// kernrl list: every problem with id, level, name, bench sizes and dtypes.
#include <iostream>
#include <set>

#include "cli/commands.h"
#include "core/paths.h"
#include "core/problem.h"
#include "record/trace_file.h"

namespace kernrl {

CommandRun add_list_command(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("list", "List the problems (id, level, name, bench sizes, dtypes).");
  auto level = std::make_shared<int>(0);
  auto as_json = std::make_shared<bool>(false);
  cmd->add_option("--level", *level, "Only this level (1-10)")->check(CLI::Range(1, 10));
  cmd->add_flag("--json", *as_json, "One JSON object per problem (JSONL)");
  return [=]() {
    int rc = kExitOk;
    for (const auto& dir : problem_dirs(problems_dir())) {
      ProblemSpec p;
      try {
        p = load_problem(dir);
      } catch (const SpecError& e) {
        std::cerr << "kernrl list: skipping a broken problem: " << e.what() << "\n";
        rc = kExitUsage;
        continue;
      }
      if (*level && p.level != *level) continue;
      std::set<std::string> dtypes;
      for (const auto* list : {&p.inputs, &p.parameters, &p.outputs})
        for (const auto& t : *list) dtypes.insert(t.dtype.name);
      std::string sizes, types;
      for (const auto& n : p.size_names)
        sizes += (sizes.empty() ? "" : " ") + n + "=" + std::to_string(p.bench.at(n));
      for (const auto& d : dtypes) types += (types.empty() ? "" : ",") + d;
      if (*as_json) {
        nlohmann::json bench = nlohmann::json::object();
        for (const auto& n : p.size_names) bench[n] = p.bench.at(n);
        std::cout << json_line({{"id", p.id},
                                {"level", p.level},
                                {"name", p.name},
                                {"sizes", bench},
                                {"dtypes", dtypes}})
                  << "\n";
      } else {
        std::printf("%-48s L%-3d %-28s %s\n", p.id.c_str(), p.level, types.c_str(), sizes.c_str());
      }
    }
    return rc;
  };
}

}  // namespace kernrl

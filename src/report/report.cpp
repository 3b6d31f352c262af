#include "report/report.h"

#include <set>
#include <stdexcept>

#include "core/errors.h"
#include "core/problem.h"
#include "report/render.h"

namespace kernrl {
using nlohmann::json;

json aggregate(const std::vector<TraceRecord>& records, const ReportOptions& opt) {
  std::vector<TraceRecord> baseline;
  if (!opt.baseline.empty() &&
      !report::read_inputs({opt.baseline}, &baseline, nullptr, nullptr, nullptr))
    throw UsageError("cannot read the baseline " + opt.baseline);
  return aggregate(records, opt, baseline);
}

json aggregate(const std::vector<TraceRecord>& records, const ReportOptions& opt,
               const std::vector<TraceRecord>& baseline_records) {
  report::Settings s = report::settings_of(opt);
  return report::aggregate(report::prepare(records, opt, baseline_records), opt, s);
}

json aggregate(const std::vector<json>& records, const ReportOptions& opt) {
  return aggregate(records_from_json(records), opt);
}

std::string render(const json& aggregated, const ReportOptions& opt) {
  report::Settings s = report::settings_of(opt);
  return report::find_format(opt.format)->render({aggregated, s, nullptr});
}

std::vector<std::string> run_report(const ReportOptions& opt, std::ostream& out,
                                    std::ostream& err) {
  report::Settings s = report::settings_of(opt);
  if (opt.inputs.empty()) throw UsageError("no trace files given");
  if (opt.fail_on_regression && opt.baseline.empty())
    throw UsageError("--fail-on-regression needs --baseline");

  std::vector<TraceRecord> records, baseline;
  json files = json::array(), malformed = json::array();
  if (!report::read_inputs(opt.inputs, &records, &files, &malformed, &err))
    throw UsageError("no readable trace file among the inputs");
  if (!opt.baseline.empty() &&
      !report::read_inputs({opt.baseline}, &baseline, nullptr, nullptr, &err))
    throw UsageError("cannot read the baseline " + opt.baseline);
  if (!opt.run.empty()) {
    std::set<std::string> runs;
    for (const TraceRecord& r : records) runs.insert(rec::run_of(r));
    if (!runs.count(opt.run)) {
      std::string present;
      for (const auto& r : runs) present += (present.empty() ? "" : ", ") + r;
      throw UsageError("no records of run '" + opt.run +
                       "' (runs present: " + (present.empty() ? "none" : present) + ")");
    }
  }

  report::Prepared prepared = report::prepare(records, opt, baseline);
  json a = report::aggregate(prepared, opt, s);
  a["files"] = files;
  a["malformed_lines"] = malformed;
  out << report::find_format(opt.format)->render({a, s, &prepared});
  out.flush();
  std::vector<std::string> regressed;
  if (opt.fail_on_regression)
    for (const auto& id : a["comparison"]["regressions"])
      regressed.push_back(id.get<std::string>());
  return regressed;
}

}  // namespace kernrl

#include "report/report.h"

#include <set>
#include <stdexcept>

#include "core/problem.h"
#include "report/render.h"

namespace kernrl {
using nlohmann::json;

json aggregate(const std::vector<TraceRecord>& records, const ReportOptions& opt) {
  std::vector<TraceRecord> baseline;
  if (!opt.baseline.empty() &&
      !report::read_inputs({opt.baseline}, &baseline, nullptr, nullptr, nullptr))
    throw std::invalid_argument("cannot read the baseline " + opt.baseline);
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

int run_report(const ReportOptions& opt, std::ostream& out, std::ostream& err) {
  try {
    report::Settings s = report::settings_of(opt);
    if (opt.inputs.empty()) throw std::invalid_argument("no trace files given");
    if (opt.fail_on_regression && opt.baseline.empty())
      throw std::invalid_argument("--fail-on-regression needs --baseline");

    std::vector<TraceRecord> records, baseline;
    json files = json::array(), malformed = json::array();
    if (!report::read_inputs(opt.inputs, &records, &files, &malformed, &err))
      throw std::invalid_argument("no readable trace file among the inputs");
    if (!opt.baseline.empty() &&
        !report::read_inputs({opt.baseline}, &baseline, nullptr, nullptr, &err))
      throw std::invalid_argument("cannot read the baseline " + opt.baseline);
    if (!opt.run.empty()) {
      std::set<std::string> runs;
      for (const TraceRecord& r : records) runs.insert(rec::run_of(r));
      if (!runs.count(opt.run)) {
        std::string present;
        for (const auto& r : runs) present += (present.empty() ? "" : ", ") + r;
        throw std::invalid_argument("no records of run '" + opt.run + "' (runs present: " +
                                    (present.empty() ? "none" : present) + ")");
      }
    }

    report::Prepared prepared = report::prepare(records, opt, baseline);
    json a = report::aggregate(prepared, opt, s);
    a["files"] = files;
    a["malformed_lines"] = malformed;
    out << report::find_format(opt.format)->render({a, s, &prepared});
    out.flush();
    if (opt.fail_on_regression && !a["comparison"]["regressions"].empty()) {
      err << "kernrl report: " << a["comparison"]["regressions"].size() << " problem(s) regressed:";
      for (const auto& id : a["comparison"]["regressions"]) err << " " << id.get<std::string>();
      err << "\n";
      return 1;
    }
    return 0;
  } catch (const std::invalid_argument& e) {
    err << "kernrl report: " << e.what() << "\n";
  } catch (const SpecError& e) {
    err << "kernrl report: " << e.what() << "\n";
  }
  return 2;
}

}  // namespace kernrl

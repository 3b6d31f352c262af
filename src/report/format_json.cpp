// --format json: the report object itself, pretty-printed (docs/report.md, "json").
#include "report/render.h"

namespace kernrl::report {

std::string render_json(const ReportData& data) {
  return data.report.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace kernrl::report

// The output formats of `kernrl report`: one renderer per format, each in a file of its own
// (format_<name>.cpp), listed in render.cpp's table. A renderer turns the aggregated report (and,
// for formats that draw single samples, the records behind it) into text; it decides nothing
// about exit codes.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report/aggregate.h"
#include "report/options.h"

namespace kernrl::report {

struct ReportData {
  const nlohmann::json& report;  // the kernrl.report.v3 object (aggregate)
  const Settings& settings;      // the k and p lists it was computed with
  // The records it counts (after --run, --reward, duplicates), or null when the caller only has
  // the aggregate: formats that plot single samples then leave those charts out.
  const Prepared* prepared = nullptr;
};

struct ReportFormat {
  const char* name;     // the --format value
  const char* summary;  // one line for --help
  std::string (*render)(const ReportData& data);
};

// The format called `name`, or null.
const ReportFormat* find_format(const std::string& name);
// Every format's name, in --help order.
std::vector<std::string> report_formats();

// The renderers (format_<name>.cpp).
std::string render_md(const ReportData& data);
std::string render_csv(const ReportData& data);
std::string render_json(const ReportData& data);
std::string render_html(const ReportData& data);

}  // namespace kernrl::report

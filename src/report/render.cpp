#include "report/render.h"

namespace kernrl::report {

namespace {

// Adding a format: a format_<name>.cpp with its render function, and a line here.
const ReportFormat kFormats[] = {
    {"md", "for people, in a terminal or a Markdown viewer (default)", render_md},
    {"csv", "one table", render_csv},
    {"json", "the documented, stable schema", render_json},
    {"html", "one self-contained page with the tables and charts", render_html},
};

}  // namespace

const ReportFormat* find_format(const std::string& name) {
  for (const ReportFormat& f : kFormats)
    if (name == f.name) return &f;
  return nullptr;
}

std::vector<std::string> report_formats() {
  std::vector<std::string> names;
  for (const ReportFormat& f : kFormats) names.push_back(f.name);
  return names;
}

}  // namespace kernrl::report

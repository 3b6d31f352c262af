// Charts as inline SVG for the html report: no script, no external resource, the same bytes for
// the same data. Every text that comes from the data (run, problem and file names) is escaped
// here; callers pass plain text. Each chart is one <svg class="chart"> whose data marks (bars,
// dots, boxes) carry class "mark" and a <title> tooltip.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kernrl::svg {

// Text for HTML or SVG content and for double-quoted attribute values: & < > " ' as character
// references, bytes that are not UTF-8 as `\xNN` (core/safe_text.h), other control characters
// but tab and newline dropped.
std::string escape(std::string_view s);

// `s` cut to at most `max_chars` characters (code points), ending in "…" when cut.
std::string clip(std::string_view s, size_t max_chars);

// A short readable form of a number: "0.5", "12", "1000", "0.123", "1.23e7" (3 significant digits
// unless a whole number below a million).
std::string number(double v);

// Maps a domain onto a pixel range, linearly or logarithmically (a log domain must be positive).
struct Scale {
  double lo = 0, hi = 1;    // domain
  double from = 0, to = 1;  // pixels
  bool log = false;
  double operator()(double v) const;  // values outside the domain are clamped to it
  // Tick values inside the domain: 1-2-5 steps (log: powers of ten, with 2 and 5 when few).
  std::vector<double> ticks(size_t max_ticks = 7) const;
};

// Log axes span at most [kLogMin, kLogMax]: a value outside is drawn at the edge (its tooltip
// still gives it), so that one absurd value does not flatten every other.
constexpr double kLogMin = 1e-4, kLogMax = 1e4;

// A log domain around `values` (positive, finite ones) and `always` (e.g. 1x), widened to 1-2-5
// boundaries and kept within [kLogMin, kLogMax]; [0.5, 2] around 1 when there are none.
Scale log_domain(const std::vector<double>& values, double always);
// A linear domain from the least of `values` and `lo` to the greatest of `values` and `hi`,
// widened to a 1-2-5 step.
Scale linear_domain(const std::vector<double>& values, double lo, double hi);

struct Series {
  std::string name;
  std::string color;  // a CSS color
};

// The i-th color of a palette readable with the common color-vision deficiencies.
std::string palette(size_t i);

// Vertical bars grouped by category, one bar per series, on a linear y axis from 0.
struct BarChart {
  std::string title;
  std::string y_label;
  bool percent = true;  // values are fractions, labelled as percentages; the axis ends at 100%
  std::vector<std::string> categories;
  std::vector<Series> series;
  std::vector<std::vector<std::optional<double>>> values;  // [series][category]; empty: no bar
  int width = 430;
};
std::string bar_chart(const BarChart& c);

// One row per group on a log x axis: every value as a dot, the quartiles as a box, the median as
// a line, the extremes as whiskers, and a reference line (e.g. 1x: as fast as the baseline).
struct DistributionChart {
  struct Row {
    std::string label;
    std::string color;
    std::vector<double> values;     // positive
    std::vector<std::string> tips;  // one per value (optional)
  };
  std::string title;
  std::string x_label;
  double reference = 1;
  std::string reference_label;
  std::vector<Row> rows;
  int width = 880;
};
std::string distribution_chart(const DistributionChart& c);

// Dots, one color per series; x on a log axis or a linear one, y linear.
struct ScatterChart {
  struct Point {
    double x = 0, y = 0;
    size_t series = 0;
    std::string tip;
  };
  std::string title;
  std::string x_label, y_label;
  bool log_x = true;
  double x_reference = 1;     // a vertical line (log axis only)
  double y_lo = 0, y_hi = 1;  // the y domain at least spans these
  bool lines = false;         // join each series' points in x order (a curve)
  bool y_percent = false;     // y values are fractions, labelled as percentages
  std::vector<Series> series;
  std::vector<Point> points;
  int width = 880;
};
std::string scatter_chart(const ScatterChart& c);

// Horizontal bars of 100%, each split into parts by count (e.g. statuses).
struct StackedChart {
  struct Row {
    std::string label;
    std::vector<double> counts;  // one per part
  };
  std::string title;
  std::vector<Series> parts;
  std::vector<Row> rows;
  int width = 880;
};
std::string stacked_chart(const StackedChart& c);

// One horizontal bar per row from a center (1 on a log axis, 0 on a linear one) to its value;
// rows without a value show their note instead.
struct DeltaChart {
  struct Row {
    std::string label;
    std::optional<double> value;
    std::string color;
    std::string note;  // shown when there is no value
    std::string tip;
  };
  std::string title;
  std::string x_label;
  bool log = true;
  double lo = -1, hi = 1;  // linear axis: the domain at least spans these
  std::vector<Row> rows;
  std::vector<Series> legend;
  int width = 430;
};
std::string delta_chart(const DeltaChart& c);

}  // namespace kernrl::svg

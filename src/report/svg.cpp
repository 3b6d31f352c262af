#include "report/svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/safe_text.h"

namespace kernrl::svg {

std::string escape(std::string_view in) {
  std::string valid = is_valid_utf8(in) ? std::string(in) : escape_invalid_utf8(in);
  std::string out;
  out.reserve(valid.size());
  for (char c : valid) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      case '\t':
      case '\n':
        out += c;
        break;
      default:
        if (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f) out += c;
    }
  }
  return out;
}

std::string clip(std::string_view s, size_t max_chars) {
  size_t chars = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) continue;  // inside a character
    if (chars == max_chars) return std::string(s.substr(0, i)) + "\u2026";
    ++chars;
  }
  return std::string(s);
}

std::string number(double v) {
  if (!std::isfinite(v)) return "-";
  char b[40];
  if (v == std::floor(v) && std::abs(v) < 1e6)
    std::snprintf(b, sizeof b, "%.0f", v);  // 1000, not 1e+03
  else
    std::snprintf(b, sizeof b, "%.3g", v);
  std::string s = b;
  if (s == "-0") s = "0";
  // "1e+05" -> "1e5", "2e-07" -> "2e-7"
  size_t e = s.find('e');
  if (e != std::string::npos) {
    std::string mant = s.substr(0, e), exp = s.substr(e + 1);
    bool neg = exp[0] == '-';
    exp = exp.substr(1);
    while (exp.size() > 1 && exp[0] == '0') exp.erase(0, 1);
    s = mant + "e" + (neg ? "-" : "") + exp;
  }
  return s;
}

// ---- scales ----

double Scale::operator()(double v) const {
  double a = lo, b = hi, x = std::min(std::max(v, lo), hi);
  if (log) {
    a = std::log(lo);
    b = std::log(hi);
    x = std::log(x > 0 ? x : lo);
  }
  double t = b > a ? (x - a) / (b - a) : 0.5;
  return from + t * (to - from);
}

namespace {

const double kSteps[] = {1, 2, 5, 10};

// The 1-2-5 value at or below (down) or at or above (up) x > 0.
double snap125(double x, bool down) {
  double base = std::pow(10.0, std::floor(std::log10(x)));
  double m = x / base;
  if (down) {
    double best = 1;
    for (double s : kSteps)
      if (s <= m * (1 + 1e-9)) best = s;
    return best * base;
  }
  for (double s : kSteps)
    if (s >= m * (1 - 1e-9)) return s * base;
  return 10 * base;
}

}  // namespace

std::vector<double> Scale::ticks(size_t max_ticks) const {
  std::vector<double> out;
  if (!(hi > lo) || max_ticks < 2) return out;
  if (log) {
    int k0 = int(std::floor(std::log10(lo))), k1 = int(std::ceil(std::log10(hi)));
    auto within = [&](double v) { return v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9); };
    for (int k = k0; k <= k1; ++k)
      for (double m : {1.0, 2.0, 5.0})
        if (double v = m * std::pow(10.0, k); within(v)) out.push_back(v);
    if (out.size() <= max_ticks) return out;
    out.clear();
    int decades = 0;
    for (int k = k0; k <= k1; ++k) decades += within(std::pow(10.0, k));
    int step = std::max(1, int(std::ceil(double(decades) / double(max_ticks))));
    for (int k = k0; k <= k1; ++k)
      if (double v = std::pow(10.0, k); within(v) && ((k % step) + step) % step == 0)
        out.push_back(v);
    return out;
  }
  double step = snap125((hi - lo) / double(max_ticks - 1), false);
  for (double v = std::ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step)
    out.push_back(std::abs(v) < step * 1e-9 ? 0.0 : v);
  return out;
}

Scale log_domain(const std::vector<double>& values, double always) {
  double mn = always, mx = always;
  for (double v : values)
    if (v > 0 && std::isfinite(v)) {
      mn = std::min(mn, v);
      mx = std::max(mx, v);
    }
  mn = std::max(mn, kLogMin);
  mx = std::min(mx, kLogMax);
  Scale s;
  s.log = true;
  s.lo = std::max(snap125(mn / 1.05, true), kLogMin);
  s.hi = std::min(snap125(mx * 1.05, false), kLogMax);
  return s;
}

Scale linear_domain(const std::vector<double>& values, double lo, double hi) {
  for (double v : values)
    if (std::isfinite(v)) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  if (!(hi > lo)) hi = lo + 1;
  double step = snap125((hi - lo) / 5, false);
  Scale s;
  s.lo = std::floor(lo / step + 1e-9) * step;
  s.hi = std::ceil(hi / step - 1e-9) * step;
  return s;
}

std::string palette(size_t i) {
  static const char* const colors[] = {"#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9",
                                       "#d55e00", "#999933", "#332288", "#882255", "#44aa99"};
  return colors[i % (sizeof colors / sizeof colors[0])];
}

// ---- drawing ----

namespace {

constexpr double kCharWidth = 6.2;  // an average character at the charts' 11px font
constexpr double kTitleHeight = 22;

std::string px(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", v);
  std::string s = b;
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  return s == "-0" ? "0" : s;
}

std::string percent(double v) {
  return number(100 * v) + "%";
}

// One chart's SVG text.
class Canvas {
 public:
  Canvas(const std::string& title, double width) : width_(width) {
    if (!title.empty())
      body_ += "<text class=\"title\" x=\"0\" y=\"14\">" + escape(title) + "</text>";
    title_ = title;
  }
  double width() const { return width_; }

  void text(double x, double y, const std::string& s, const char* anchor = "start",
            const char* cls = nullptr) {
    body_ += "<text x=\"" + px(x) + "\" y=\"" + px(y) + "\"";
    if (std::string(anchor) != "start") body_ += " text-anchor=\"" + std::string(anchor) + "\"";
    if (cls) body_ += " class=\"" + std::string(cls) + "\"";
    body_ += ">" + escape(s) + "</text>";
  }
  // A row label, cut to `max_chars` (the whole label in its tooltip).
  void label(double x, double y, const std::string& s, size_t max_chars) {
    std::string shown = clip(s, max_chars);
    body_ += "<text x=\"" + px(x) + "\" y=\"" + px(y) + "\" text-anchor=\"end\">";
    if (shown != s) body_ += "<title>" + escape(s) + "</title>";
    body_ += escape(shown) + "</text>";
  }
  void line(double x1, double y1, double x2, double y2, const char* cls) {
    body_ += "<line class=\"" + std::string(cls) + "\" x1=\"" + px(x1) + "\" y1=\"" + px(y1) +
             "\" x2=\"" + px(x2) + "\" y2=\"" + px(y2) + "\"/>";
  }
  // A data mark: a rectangle (at least 1px wide so that a tiny value still shows).
  void bar(double x, double y, double w, double h, const std::string& color, const std::string& tip,
           const char* extra_cls = nullptr) {
    body_ += "<rect class=\"mark";
    if (extra_cls) body_ += std::string(" ") + extra_cls;
    body_ += "\" x=\"" + px(x) + "\" y=\"" + px(y) + "\" width=\"" + px(std::max(w, 1.0)) +
             "\" height=\"" + px(std::max(h, 1.0)) + "\" fill=\"" + color + "\">";
    body_ += "<title>" + escape(tip) + "</title></rect>";
  }
  void dot(double x, double y, double r, const std::string& color, const std::string& tip) {
    body_ += "<circle class=\"mark\" cx=\"" + px(x) + "\" cy=\"" + px(y) + "\" r=\"" + px(r) +
             "\" fill=\"" + color + "\">";
    if (!tip.empty()) body_ += "<title>" + escape(tip) + "</title>";
    body_ += "</circle>";
  }
  void raw(const std::string& s) { body_ += s; }

  // A row of colored keys wrapping at the width, starting at y; returns the height used.
  double legend(const std::vector<Series>& series, double y) {
    double x = 0, h = 16;
    for (const Series& s : series) {
      std::string name = clip(s.name, 40);
      double w = 16 + kCharWidth * double(name.size() < 40 ? name.size() : 40) + 14;
      if (x > 0 && x + w > width_) {
        x = 0;
        y += 16;
        h += 16;
      }
      body_ += "<rect class=\"key\" x=\"" + px(x) + "\" y=\"" + px(y - 9) +
               "\" width=\"10\" height=\"10\" fill=\"" + s.color + "\"/>";
      text(x + 14, y, name);
      x += w;
    }
    return series.empty() ? 0 : h + 6;
  }

  // An x axis at pixel row y over a plot spanning [top, y]: grid lines, ticks and labels.
  void x_axis(const Scale& s, double y, double top, std::string (*tick_text)(double),
              const std::string& caption) {
    for (double t : s.ticks()) {
      double x = s(t);
      line(x, top, x, y, "grid");
      text(x, y + 14, tick_text(t), "middle");
    }
    line(s.from, y, s.to, y, "axis");
    if (!caption.empty()) text((s.from + s.to) / 2, y + 30, caption, "middle", "caption");
  }
  // A y axis at pixel column x over a plot spanning [x, right].
  void y_axis(const Scale& s, double x, double right, std::string (*tick_text)(double),
              const std::string& caption) {
    for (double t : s.ticks(6)) {
      double y = s(t);
      line(x, y, right, y, "grid");
      text(x - 4, y + 4, tick_text(t), "end");
    }
    line(x, s.from, x, s.to, "axis");
    if (!caption.empty())
      body_ += "<text class=\"caption\" text-anchor=\"middle\" transform=\"translate(10 " +
               px((s.from + s.to) / 2) + ") rotate(-90)\">" + escape(caption) + "</text>";
  }

  std::string finish(double height) const {
    std::string w = px(width_), h = px(height);
    return "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" viewBox=\"0 0 " +
           w + " " + h + "\" width=\"" + w + "\" height=\"" + h + "\" aria-label=\"" +
           escape(title_) + "\">" + body_ + "</svg>\n";
  }

 private:
  double width_;
  std::string title_;
  std::string body_;
};

std::string speed_label(double v) {
  return number(v) + "x";
}
std::string plain_label(double v) {
  return number(v);
}
std::string percent_label(double v) {
  return percent(v);
}
std::string signed_percent_label(double v) {
  return (v > 0 ? "+" : "") + percent(v);
}

// The width of a label column for these labels (in characters and pixels), within bounds.
size_t label_chars(const std::vector<std::string>& labels) {
  size_t n = 4;
  for (const auto& l : labels) n = std::max(n, clip(l, 36).size());
  return std::min<size_t>(n, 36);
}

double quantile(const std::vector<double>& sorted, double q) {
  double pos = q * double(sorted.size() - 1);
  size_t i = size_t(std::floor(pos));
  if (i + 1 >= sorted.size()) return sorted.back();
  return sorted[i] + (pos - double(i)) * (sorted[i + 1] - sorted[i]);
}

}  // namespace

std::string bar_chart(const BarChart& c) {
  Canvas cv(c.title, c.width);
  double top = kTitleHeight + cv.legend(c.series, kTitleHeight + 8);
  double left = 46, right = c.width - 8, plot_h = 150, bottom = top + plot_h;
  std::vector<double> all;
  for (const auto& s : c.values)
    for (const auto& v : s)
      if (v) all.push_back(*v);
  Scale y = c.percent ? Scale{0, 1, 0, 0, false} : linear_domain(all, 0, 1);
  y.from = bottom;
  y.to = top + 8;
  cv.y_axis(y, left, right, c.percent ? percent_label : plain_label, c.y_label);
  size_t n_cat = std::max<size_t>(c.categories.size(), 1),
         n_ser = std::max<size_t>(c.series.size(), 1);
  double band = (right - left) / double(n_cat), gap = band * 0.2;
  double bw = (band - gap) / double(n_ser);
  for (size_t ci = 0; ci < c.categories.size(); ++ci) {
    double x0 = left + band * double(ci) + gap / 2;
    cv.text(x0 + (band - gap) / 2, bottom + 14, clip(c.categories[ci], size_t(band / kCharWidth)),
            "middle");
    for (size_t si = 0; si < c.series.size() && si < c.values.size(); ++si) {
      if (ci >= c.values[si].size() || !c.values[si][ci]) continue;
      double v = *c.values[si][ci], yv = y(v);
      std::string tip =
          c.series[si].name + ", " + c.categories[ci] + ": " + (c.percent ? percent(v) : number(v));
      cv.bar(x0 + bw * double(si), yv, bw * 0.92, bottom - yv, c.series[si].color, tip);
    }
  }
  return cv.finish(bottom + 24);
}

std::string distribution_chart(const DistributionChart& c) {
  Canvas cv(c.title, c.width);
  std::vector<std::string> labels;
  std::vector<double> all;
  for (const auto& r : c.rows) {
    labels.push_back(r.label);
    all.insert(all.end(), r.values.begin(), r.values.end());
  }
  size_t chars = label_chars(labels);
  double row_h = 24, top = kTitleHeight + 6, left = double(chars) * kCharWidth + 12;
  Scale x = log_domain(all, c.reference);
  x.from = left;
  x.to = c.width - 12;
  double bottom = top + row_h * double(c.rows.size());
  cv.x_axis(x, bottom, top, speed_label, c.x_label);
  double rx = x(c.reference);
  cv.line(rx, top, rx, bottom, "reference");
  if (!c.reference_label.empty()) cv.text(rx + 3, top - 2, c.reference_label, "start", "note");
  for (size_t i = 0; i < c.rows.size(); ++i) {
    const auto& r = c.rows[i];
    double cy = top + row_h * (double(i) + 0.5);
    cv.label(left - 6, cy + 4, r.label, chars);
    std::vector<double> v;
    for (double s : r.values)
      if (s > 0 && std::isfinite(s)) v.push_back(s);
    if (v.empty()) {
      cv.text(left + 4, cy + 4, "no timed correct sample", "start", "note");
      continue;
    }
    std::vector<double> sorted = v;
    std::sort(sorted.begin(), sorted.end());
    double q1 = quantile(sorted, 0.25), med = quantile(sorted, 0.5), q3 = quantile(sorted, 0.75);
    cv.line(x(sorted.front()), cy, x(sorted.back()), cy, "whisker");
    std::string tip = r.label + ": " + std::to_string(v.size()) + " sample(s), median " +
                      speed_label(med) + ", quartiles " + speed_label(q1) + " to " +
                      speed_label(q3) + ", range " + speed_label(sorted.front()) + " to " +
                      speed_label(sorted.back());
    cv.bar(x(q1), cy - 7, x(q3) - x(q1), 14, r.color, tip, "box");
    cv.line(x(med), cy - 8, x(med), cy + 8, "median");
    for (size_t j = 0; j < v.size(); ++j) {
      // A fixed, evenly spread vertical offset per dot, so that equal values stay visible.
      double jitter = (std::fmod(double(j) * 0.6180339887, 1.0) - 0.5) * 12;
      cv.dot(x(v[j]), cy + jitter, 2.2, r.color, j < r.tips.size() ? r.tips[j] : speed_label(v[j]));
    }
  }
  return cv.finish(bottom + 40);
}

namespace {

// Each series' points joined in x order by line segments in its color.
void join_series(Canvas& cv, const ScatterChart& c, const Scale& x, const Scale& y) {
  for (size_t si = 0; si < c.series.size(); ++si) {
    std::vector<std::pair<double, double>> pts;
    for (const auto& p : c.points)
      if (p.series == si) pts.push_back({p.x, p.y});
    std::sort(pts.begin(), pts.end());
    for (size_t i = 1; i < pts.size(); ++i)
      cv.raw("<line x1=\"" + px(x(pts[i - 1].first)) + "\" y1=\"" + px(y(pts[i - 1].second)) +
             "\" x2=\"" + px(x(pts[i].first)) + "\" y2=\"" + px(y(pts[i].second)) + "\" stroke=\"" +
             escape(c.series[si].color) + "\" stroke-width=\"1.5\"/>");
  }
}

}  // namespace

std::string scatter_chart(const ScatterChart& c) {
  Canvas cv(c.title, c.width);
  double top = kTitleHeight + cv.legend(c.series, kTitleHeight + 8) + 6;
  double left = 52, bottom = top + 260;
  std::vector<double> xs, ys;
  for (const auto& p : c.points) {
    xs.push_back(p.x);
    ys.push_back(p.y);
  }
  Scale x = c.log_x ? log_domain(xs, c.x_reference) : linear_domain(xs, 0, 1);
  x.from = left;
  x.to = c.width - 12;
  Scale y = linear_domain(ys, c.y_lo, c.y_hi);
  y.from = bottom;
  y.to = top;
  cv.x_axis(x, bottom, top, c.log_x ? speed_label : plain_label, c.x_label);
  cv.y_axis(y, left, x.to, c.y_percent ? percent_label : plain_label, c.y_label);
  if (c.log_x) cv.line(x(c.x_reference), top, x(c.x_reference), bottom, "reference");
  if (c.lines) join_series(cv, c, x, y);
  for (const auto& p : c.points)
    cv.dot(x(p.x), y(p.y), 3.5,
           p.series < c.series.size() ? c.series[p.series].color : palette(p.series), p.tip);
  if (c.points.empty())
    cv.text((x.from + x.to) / 2, (top + bottom) / 2, "no data", "middle", "note");
  return cv.finish(bottom + 40);
}

std::string stacked_chart(const StackedChart& c) {
  Canvas cv(c.title, c.width);
  double top = kTitleHeight + cv.legend(c.parts, kTitleHeight + 8);
  std::vector<std::string> labels;
  for (const auto& r : c.rows) labels.push_back(r.label);
  size_t chars = label_chars(labels);
  double row_h = 22, left = double(chars) * kCharWidth + 12, right = c.width - 64;
  for (size_t i = 0; i < c.rows.size(); ++i) {
    const auto& r = c.rows[i];
    double y0 = top + row_h * double(i), total = 0;
    for (double n : r.counts) total += n > 0 ? n : 0;
    cv.label(left - 6, y0 + 15, r.label, chars);
    cv.text(right + 6, y0 + 15, "n=" + number(total), "start", "note");
    if (total <= 0) continue;
    double x = left;
    for (size_t j = 0; j < r.counts.size() && j < c.parts.size(); ++j) {
      if (!(r.counts[j] > 0)) continue;
      double w = (right - left) * r.counts[j] / total;
      cv.bar(x, y0 + 3, w, row_h - 6, c.parts[j].color,
             r.label + ", " + c.parts[j].name + ": " + number(r.counts[j]) + " (" +
                 percent(r.counts[j] / total) + ")");
      x += w;
    }
  }
  return cv.finish(top + row_h * double(c.rows.size()) + 8);
}

std::string delta_chart(const DeltaChart& c) {
  Canvas cv(c.title, c.width);
  double top = kTitleHeight + cv.legend(c.legend, kTitleHeight + 8) + 6;
  std::vector<std::string> labels;
  std::vector<double> values;
  for (const auto& r : c.rows) {
    labels.push_back(r.label);
    if (r.value) values.push_back(*r.value);
  }
  size_t chars = label_chars(labels);
  double row_h = 18, left = double(chars) * kCharWidth + 12;
  Scale x = c.log ? log_domain(values, 1) : linear_domain(values, c.lo, c.hi);
  x.from = left;
  x.to = c.width - 12;
  double bottom = top + row_h * double(c.rows.size());
  double center = c.log ? 1 : 0;
  cv.x_axis(x, bottom, top, c.log ? speed_label : signed_percent_label, c.x_label);
  cv.line(x(center), top, x(center), bottom, "reference");
  for (size_t i = 0; i < c.rows.size(); ++i) {
    const auto& r = c.rows[i];
    double y0 = top + row_h * double(i);
    cv.label(left - 6, y0 + 13, r.label, chars);
    if (!r.value) {
      cv.text(x(center) + 4, y0 + 13, r.note, "start", "note");
      continue;
    }
    double a = x(center), b = x(*r.value);
    cv.bar(std::min(a, b), y0 + 3, std::abs(b - a), row_h - 6, r.color, r.tip);
  }
  return cv.finish(bottom + 40);
}

}  // namespace kernrl::svg

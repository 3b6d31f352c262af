// The html report's SVG charts (src/report/svg.h): escaping, scales, ticks and what each chart
// draws.
#include <doctest/doctest.h>

#include <cmath>
#include <regex>
#include <string>

#include "report/svg.h"

namespace svg = kernrl::svg;

namespace {

size_t occurrences(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t i = s.find(what); i != std::string::npos; i = s.find(what, i + 1)) ++n;
  return n;
}

// Every tag of the output is one the charts write: nothing from the data became markup.
void check_only_chart_tags(const std::string& out) {
  std::regex tag("<(/?)([A-Za-z!][A-Za-z0-9-]*)");
  for (auto it = std::sregex_iterator(out.begin(), out.end(), tag); it != std::sregex_iterator();
       ++it) {
    std::string name = (*it)[2];
    INFO("tag <" << name << ">");
    CHECK((name == "svg" || name == "title" || name == "text" || name == "rect" ||
           name == "circle" || name == "line"));
  }
}

}  // namespace

TEST_CASE("svg::escape: markup characters, control characters and bytes that are not UTF-8") {
  CHECK(svg::escape("a<b>&\"c'") == "a&lt;b&gt;&amp;&quot;c&#39;");
  CHECK(svg::escape("</title><script>alert(1)</script>") ==
        "&lt;/title&gt;&lt;script&gt;alert(1)&lt;/script&gt;");
  CHECK(svg::escape("tab\tnew\nline\x01\x7f") == "tab\tnew\nline");
  CHECK(svg::escape("caf\xe9") == "caf\\xe9");  // Latin-1 byte: visible, not mojibake
  CHECK(svg::escape("\xc3\xa9t\xc3\xa9") == "\xc3\xa9t\xc3\xa9");  // UTF-8 kept
  CHECK(svg::escape("") == "");
}

TEST_CASE("svg::clip: whole characters, an ellipsis when cut") {
  CHECK(svg::clip("model-a", 10) == "model-a");
  CHECK(svg::clip("model-a", 7) == "model-a");
  CHECK(svg::clip("model-abc", 7) == "model-a\u2026");
  CHECK(svg::clip("\xc3\xa9\xc3\xa9\xc3\xa9", 2) == "\xc3\xa9\xc3\xa9\u2026");  // never half of é
}

TEST_CASE("svg::number: short labels") {
  CHECK(svg::number(0.5) == "0.5");
  CHECK(svg::number(1) == "1");
  CHECK(svg::number(1000) == "1000");
  CHECK(svg::number(1.23456) == "1.23");
  CHECK(svg::number(0.0001) == "0.0001");
  CHECK(svg::number(1.5e7) == "1.5e7");
  CHECK(svg::number(2.5e-7) == "2.5e-7");
  CHECK(svg::number(-0.0) == "0");
  CHECK(svg::number(1.0 / 0.0) == "-");
}

TEST_CASE("svg::Scale: linear and log mapping, clamped to the domain") {
  svg::Scale lin{0, 10, 100, 200, false};
  CHECK(lin(0) == doctest::Approx(100));
  CHECK(lin(5) == doctest::Approx(150));
  CHECK(lin(20) == doctest::Approx(200));  // clamped
  CHECK(lin(-1) == doctest::Approx(100));
  svg::Scale lg{0.1, 10, 0, 100, true};
  CHECK(lg(1) == doctest::Approx(50));
  CHECK(lg(10) == doctest::Approx(100));
  CHECK(lg(0) == doctest::Approx(0));  // not positive: the low edge
  CHECK(lg(1e9) == doctest::Approx(100));
}

TEST_CASE("svg ticks and domains: 1-2-5 steps, powers of ten on wide log axes") {
  svg::Scale pct{0, 1, 0, 1, false};
  std::vector<double> t = pct.ticks(6);
  REQUIRE(t.size() == 6);
  CHECK(t.front() == 0);
  CHECK(t[1] == doctest::Approx(0.2));
  CHECK(t.back() == doctest::Approx(1));

  svg::Scale narrow = svg::log_domain({0.6, 1.7}, 1);
  CHECK(narrow.lo == doctest::Approx(0.5));
  CHECK(narrow.hi == doctest::Approx(2));
  CHECK(narrow.ticks() == std::vector<double>{0.5, 1, 2});

  svg::Scale none = svg::log_domain({}, 1);
  CHECK(none.lo == doctest::Approx(0.5));
  CHECK(none.hi == doctest::Approx(2));

  // An absurd value is held at the edge instead of flattening the rest.
  svg::Scale wide = svg::log_domain({1e-9, 3, 1e308}, 1);
  CHECK(wide.lo == doctest::Approx(svg::kLogMin));
  CHECK(wide.hi == doctest::Approx(svg::kLogMax));
  std::vector<double> wt = wide.ticks(7);
  CHECK(wt.size() <= 7);
  for (double v : wt) CHECK(std::abs(std::log10(v) - std::round(std::log10(v))) < 1e-9);

  svg::Scale signed_domain = svg::linear_domain({-0.25, 0.5}, -1, 1);
  CHECK(signed_domain.lo == doctest::Approx(-1));
  CHECK(signed_domain.hi == doctest::Approx(1));
  svg::Scale grown = svg::linear_domain({1.3}, 0, 1);
  CHECK(grown.hi >= 1.3);
}

TEST_CASE("bar_chart: one mark per present value, escaped names") {
  svg::BarChart c;
  c.title = "pass@1";
  c.categories = {"L1", "L2", "all"};
  c.series = {{"<b>run</b>", svg::palette(0)}, {"b", svg::palette(1)}};
  c.values = {{0.5, std::nullopt, 0.25}, {1.0, 0.0, 0.5}};
  std::string out = svg::bar_chart(c);
  CHECK(out.rfind("<svg class=\"chart\"", 0) == 0);
  CHECK(occurrences(out, "class=\"mark\"") == 5);  // the missing value draws nothing
  CHECK(out.find("<b>") == std::string::npos);
  CHECK(out.find("&lt;b&gt;run&lt;/b&gt;, L1: 50%") != std::string::npos);  // a bar's tooltip
  CHECK(out.find(">100%<") != std::string::npos);                           // the axis
  check_only_chart_tags(out);
}

TEST_CASE("distribution_chart: a dot per value, a box and a median per row, notes for empty rows") {
  svg::DistributionChart c;
  c.title = "speedups";
  c.reference_label = "1x";
  c.rows = {{"run \u00b7 L1", svg::palette(0), {0.5, 1, 2, 4}, {"a", "b", "c", "d"}},
            {"run \u00b7 L2", svg::palette(0), {}, {}},
            {"\"><script>x</script>", svg::palette(1), {1.5}, {"<tip>"}}};
  std::string out = svg::distribution_chart(c);
  CHECK(occurrences(out, "<circle class=\"mark\"") == 5);
  CHECK(occurrences(out, "class=\"mark box\"") == 2);
  CHECK(occurrences(out, "class=\"median\"") == 2);
  CHECK(out.find("no timed correct sample") != std::string::npos);
  CHECK(out.find("median 1.5x, quartiles 0.875x to 2.5x") != std::string::npos);
  CHECK(out.find("<script>") == std::string::npos);
  CHECK(out.find("&lt;tip&gt;") != std::string::npos);
  check_only_chart_tags(out);
}

TEST_CASE("scatter_chart, stacked_chart, delta_chart") {
  svg::ScatterChart s;
  s.title = "sol";
  s.series = {{"a", svg::palette(0)}};
  s.points = {{1.5, 0.5, 0, "p1"}, {0.25, 0.1, 0, "p2"}, {1e300, 2.0, 0, "far"}};
  std::string sc = svg::scatter_chart(s);
  CHECK(occurrences(sc, "<circle class=\"mark\"") == 3);
  check_only_chart_tags(sc);

  svg::StackedChart st;
  st.title = "statuses";
  st.parts = {{"correct", "#009e73"}, {"incorrect", "#e69f00"}, {"timeout", "#332288"}};
  st.rows = {{"run", {3, 1, 0}}, {"empty", {0, 0, 0}}};
  std::string sk = svg::stacked_chart(st);
  CHECK(occurrences(sk, "class=\"mark\"") == 2);  // zero counts draw nothing
  CHECK(sk.find("run, correct: 3 (75%)") != std::string::npos);
  CHECK(sk.find("n=4") != std::string::npos);
  check_only_chart_tags(sk);

  svg::DeltaChart d;
  d.title = "ratio";
  d.rows = {{"L1_1", 2.0, "#0072b2", "", "up"},
            {"L1_2", 0.5, "#d55e00", "", "down"},
            {"L1_3", std::nullopt, "#999999", "missing", ""}};
  std::string dc = svg::delta_chart(d);
  CHECK(occurrences(dc, "class=\"mark\"") == 2);
  CHECK(dc.find(">missing<") != std::string::npos);
  check_only_chart_tags(dc);
}

// kernrl report --format html (src/report/format_html.cpp): one self-contained page, and no name
// from a record can become markup (tests/fixtures/report/html/hostile.jsonl).
#include <doctest/doctest.h>

#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "record/trace_file.h"
#include "report/report.h"

using kernrl::ReportOptions;

namespace {

const std::string kDir = std::string(KERNRL_TEST_DIR) + "/fixtures/report/";

std::string html_report(ReportOptions opt) {
  opt.format = "html";
  std::ostringstream out, err;
  CHECK(kernrl::run_report(opt, out, err).empty());
  return out.str();
}

size_t occurrences(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t i = s.find(what); i != std::string::npos; i = s.find(what, i + 1)) ++n;
  return n;
}

// Only the elements the renderer writes, no event handler attribute, no reference to anything
// outside the page.
void check_markup(const std::string& page) {
  static const std::set<std::string> allowed = {
      "!DOCTYPE", "html", "head",   "meta", "title", "style", "body",   "h1",  "h2", "h3",
      "p",        "a",    "nav",    "div",  "table", "thead", "tbody",  "tr",  "th", "td",
      "ul",       "li",   "strong", "svg",  "text",  "rect",  "circle", "line"};
  std::regex tag("<(/?)([A-Za-z!][A-Za-z0-9-]*)");
  for (auto it = std::sregex_iterator(page.begin(), page.end(), tag); it != std::sregex_iterator();
       ++it) {
    INFO("tag <" << (*it)[2] << ">");
    CHECK(allowed.count((*it)[2]) == 1);
  }
  // Inside the tags (text holds no '<' or '>': both are escaped there, and in attribute values):
  // no event handler, no source, no script URL. The one URL is the SVG namespace name, which is
  // never fetched.
  std::regex handler("\\son[a-z]+\\s*=", std::regex::icase);
  std::regex whole_tag("<[^<>]*>");
  for (auto it = std::sregex_iterator(page.begin(), page.end(), whole_tag);
       it != std::sregex_iterator(); ++it) {
    std::string t = it->str();
    INFO("tag " << t);
    CHECK_FALSE(std::regex_search(t, handler));
    CHECK(t.find("src=") == std::string::npos);
    CHECK(t.find("href=\"#") == t.find("href="));  // links only within the page
    CHECK(t.find("javascript:") == std::string::npos);
    CHECK(t.find("https://") == std::string::npos);
    CHECK((t.find("http://") == std::string::npos ||
           t.find("xmlns=\"http://www.w3.org/2000/svg\"") != std::string::npos));
  }
  CHECK(page.find("<script") == std::string::npos);
}

}  // namespace

TEST_CASE("html report: a self-contained page with the tables and every chart") {
  ReportOptions opt;
  opt.inputs = {kDir + "html/runs.jsonl"};
  opt.by = "level";
  opt.ks = {1, 2};
  opt.baseline = kDir + "html/base.jsonl";
  opt.run = "model-a";
  std::string page = html_report(opt);
  CHECK(page.rfind("<!DOCTYPE html>\n", 0) == 0);
  CHECK(page.find("Content-Security-Policy\" content=\"default-src 'none'") != std::string::npos);
  CHECK(page.size() < 200000);
  // Charts: speedup distribution, pass@1, pass@2, six fast_p, SOL by level, the scatter, statuses,
  // two deltas.
  CHECK(occurrences(page, "<svg class=\"chart\"") == 14);
  CHECK(page.find("aria-label=\"Mean SOL fraction of timed samples, by level") !=
        std::string::npos);
  CHECK(page.find("<h2 id=\"levels\">Scores by level</h2>") != std::string::npos);
  CHECK(page.find("aria-label=\"Speedup of correct samples") != std::string::npos);
  CHECK(page.find("aria-label=\"pass@2") != std::string::npos);
  CHECK(page.find("aria-label=\"fast_1.5") != std::string::npos);
  CHECK(page.find("aria-label=\"Fraction of the hardware limit") != std::string::npos);
  CHECK(page.find("aria-label=\"Statuses per run and level\"") != std::string::npos);
  CHECK(page.find("aria-label=\"Speedup now / in the baseline") != std::string::npos);
  // Tables: runs, by level, statuses, the comparison.
  CHECK(page.find("<h2 id=\"groups\">By level</h2>") != std::string::npos);
  CHECK(page.find("<h2 id=\"comparison\">") != std::string::npos);
  CHECK(page.find("<td>model-a</td><td>L3</td>") != std::string::npos);
  // A sample's tooltip names its run, problem and file.
  CHECK(page.find("model-a \u00b7 L1_1_Softmax \u00b7 model-a/level_1_problem_1_sample_") !=
        std::string::npos);
  check_markup(page);
}

TEST_CASE("html report: the same bytes for the same records") {
  ReportOptions opt;
  opt.inputs = {kDir + "html/runs.jsonl"};
  CHECK(html_report(opt) == html_report(opt));
}

TEST_CASE("html report: hostile run, problem, file, status and reason names stay text") {
  ReportOptions opt;
  opt.inputs = {kDir + "html/hostile.jsonl"};
  opt.baseline = kDir + "html/hostile_base.jsonl";
  opt.by = "problem";
  std::string page = html_report(opt);
  check_markup(page);
  CHECK(page.find("&lt;/title&gt;&lt;script&gt;alert(&#39;run&#39;)&lt;/script&gt;") !=
        std::string::npos);
  CHECK(page.find("L1_1_&lt;img src=x onerror=alert(1)&gt;") != std::string::npos);
  CHECK(page.find("&quot;onmouseover=&quot;alert(4)") != std::string::npos);
  CHECK(page.find("L2_2_&amp;lt;b&amp;gt;") != std::string::npos);  // entities are not decoded
  CHECK(page.find("&lt;b&gt;bold status&lt;/b&gt;") != std::string::npos);
  CHECK(page.find("&lt;script&gt;alert(7)&lt;/script&gt;") != std::string::npos);  // a reason
  // Exactly one <title> element of the page, one <style>: the names did not close or open them.
  CHECK(occurrences(page, "<title>kernrl report</title>") == 1);
  CHECK(occurrences(page, "<style>") == 1);
  CHECK(occurrences(page, "</style>") == 1);
}

TEST_CASE("html report from the aggregate alone (render): charts of single samples left out") {
  ReportOptions opt;
  opt.format = "html";
  opt.by = "level";
  nlohmann::json a = kernrl::aggregate(kernrl::read_trace(kDir + "html/runs.jsonl", nullptr), opt);
  std::string page = kernrl::render(a, opt);
  CHECK(page.find("aria-label=\"Speedup of correct samples") == std::string::npos);
  CHECK(page.find("aria-label=\"Fraction of the hardware limit") == std::string::npos);
  // pass@1, six fast_p and the SOL fractions from the level groups, and the statuses.
  CHECK(occurrences(page, "<svg class=\"chart\"") == 9);
  CHECK(page.find("<td>model-b</td><td>L2</td>") != std::string::npos);
  check_markup(page);
}

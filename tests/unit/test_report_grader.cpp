// The report's grader-time figures: means of the records' `grader` objects, only where records
// carry them, and a Markdown section only then.
#include <doctest/doctest.h>

#include "report/report.h"

using namespace kernrl;
using nlohmann::json;

TEST_CASE("report: grader time is the mean of the records' grader objects") {
  auto rec = [](const char* file, double worker, double check) {
    return json{{"schema", "kernrl.trace.v1"},
                {"run", "r"},
                {"file", file},
                {"problem", "L1_23_Softmax"},
                {"level", 1},
                {"status", "correct"},
                {"ran", true},
                {"speedup", 1.0},
                {"grader",
                 {{"prepare_ms", 10.0},
                  {"worker_ms", worker},
                  {"phases", {{"check", check}, {"kernel", 1.0}}}}}};
  };
  std::vector<json> recs = {rec("a.cu", 100, 30), rec("b.cu", 300, 10)};
  ReportOptions opt;
  json a = aggregate(recs, opt);
  const json& g = a["runs"][0]["grader_ms"];
  CHECK(g["records"] == 2);
  CHECK(g["mean"]["worker_ms"].get<double>() == doctest::Approx(200));
  CHECK(g["mean"]["prepare_ms"].get<double>() == doctest::Approx(10));
  CHECK(g["phases_mean"]["check"].get<double>() == doctest::Approx(20));
  std::string md = render(a, opt);
  CHECK(md.find("## Grader time") != std::string::npos);
  CHECK(md.find("check 20.0") != std::string::npos);

  // Records without grader objects: no figures, no section.
  for (auto& r : recs) r.erase("grader");
  json b = aggregate(recs, opt);
  CHECK_FALSE(b["runs"][0].contains("grader_ms"));
  CHECK(render(b, opt).find("Grader time") == std::string::npos);
}

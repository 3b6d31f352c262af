// The KernelBench converter as a stage of the grading pipeline (grading/convert.h): eval,
// grade-dir and serve name it in their session options, so they grade `load_inline` modules (.py).
#include <algorithm>
#include <cctype>
#include <filesystem>

#include "extract/extract.h"
#include "import/kernelbench_import.h"

namespace kernrl {
namespace {

class KernelBenchConverter final : public SourceConverter {
 public:
  std::string name() const override { return "kernelbench"; }

  bool reads(const std::string& file) const override {
    std::string e = std::filesystem::path(file).extension().string();
    std::transform(e.begin(), e.end(), e.begin(), [](unsigned char c) { return std::tolower(c); });
    return e == ".py";
  }

  std::string needs_problem() const override {
    return "this is a KernelBench-style Python module; kernrl converts it for a known problem: "
           "give "
           "--problem, or name it as KernelBench does (level_L_problem_P_sample_S_kernel.py)";
  }

  std::string convert(const std::string& text, const std::string& file, const ProblemSpec& problem,
                      std::vector<std::string>* notes) const override {
    KernelBenchImport r =
        import_kernelbench(text, problem, std::filesystem::path(file).filename().string());
    if (!r.converted)
      throw FormatError(
          std::string("could not convert this ") +
          (looks_like_kernelbench(text) ? "KernelBench-style module" : "Python file") +
          " into a kernel file: " + r.reason + " [" + r.category +
          "] (docs/import-kernelbench.md; kernel files: docs/kernel-format.md)");
    if (notes) *notes = r.notes;
    return r.kernel_file;
  }
};

}  // namespace

std::shared_ptr<const SourceConverter> kernelbench_converter() {
  static const auto converter = std::make_shared<const KernelBenchConverter>();
  return converter;
}

}  // namespace kernrl

// KernelBench `load_inline` generations (a Python module with class ModelNew whose forward calls
// CUDA through torch.utils.cpp_extension.load_inline) converted into kernrl kernel files: the
// device code of the CUDA source without torch/extension.h and the host wrapper, and a launch block
// made from what the wrapper launches (data_ptr arguments -> the problem's tensor names, sizes ->
// the problem's size expressions, AT_DISPATCH / templates -> name expressions, <<<grid, block,
// shared>>> -> the launch). A pure function: text in, kernel-file text or a reason out.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/problem.h"
#include "grading/convert.h"

namespace kernrl {

struct KernelBenchImport {
  bool converted = false;
  std::string kernel_file;  // the kernel file (when converted)
  // When not converted: a category (src/import/import_error.h lists them) and the reason, one
  // sentence naming what is in the way, e.g. "PyTorch op `torch.nn.functional.conv2d` left in
  // forward".
  std::string category;
  std::string reason;
  std::vector<std::string> notes;  // what the conversion assumed (also written into the file)
};

// Converts `python` (the generation's text) for `problem`. `source_name` is only written into the
// kernel file's header comment. Never throws for anything in the text.
KernelBenchImport import_kernelbench(const std::string& python, const ProblemSpec& problem,
                                     const std::string& source_name = "");

// Whether `text` is a KernelBench-style module: it defines class ModelNew and builds CUDA with
// load_inline. Cheap; for callers deciding whether to convert.
bool looks_like_kernelbench(const std::string& text);

// import_kernelbench as a stage of the grading pipeline (grading/convert.h): it reads .py files,
// and a file it cannot convert is a format_error with the reason (kernelbench_stage.cpp).
std::shared_ptr<const SourceConverter> kernelbench_converter();

}  // namespace kernrl

// Why a KernelBench module cannot be converted: a short category and a sentence for people.
#pragma once

#include <stdexcept>
#include <string>

namespace kernrl::kbimport {

// Categories (stable: the corpus manifest and `kernrl import-kernelbench --json` use them).
//   not_kernelbench       no ModelNew or no load_inline CUDA source
//   python_syntax         the Python text cannot be read (unclosed string or bracket)
//   torch_op_in_forward   ModelNew.forward computes with PyTorch, not only with the extension
//   host_logic            the C++ host wrapper decides at run time (branches or loops on sizes,
//                         copies, allocations kernrl cannot express)
//   library_call          cuBLAS, cuDNN, Thrust, CUB device-wide or a PyTorch op in the wrapper
//   data_dependent_host   the host reads GPU results (.item(), copies to the host)
//   unsupported_cuda      device code or launches kernrl's contract cannot express
//   mismatch              the module does not fit the problem (inputs, outputs, shapes, dtypes)
//   in_place              the result is written into an input tensor
//   internal              the converter itself failed (a bug in kernrl, not in the file)
struct ImportError : std::runtime_error {
  ImportError(std::string category_, const std::string& message)
      : std::runtime_error(message), category(std::move(category_)) {}
  std::string category;
};

}  // namespace kernrl::kbimport

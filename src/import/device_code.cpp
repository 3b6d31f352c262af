// The device code of a load_inline module's CUDA sources, as a kernel file keeps it: the host
// code (torch, pybind11, the host API) and the includes NVRTC cannot take removed.
#include <algorithm>
#include <string>
#include <vector>

#include "import/converter.h"

namespace kernrl::kbimport {

namespace {

// PyTorch's accessor names that kernrl/tensor_accessor.h declares in at:: and torch::.
bool accessor_name(const std::string& s) {
  return s == "PackedTensorAccessor32" || s == "PackedTensorAccessor64" ||
         s == "PackedTensorAccessor" || s == "GenericPackedTensorAccessor" ||
         s == "TensorAccessor" || s == "RestrictPtrTraits" || s == "DefaultPtrTraits";
}

bool mentions_torch(const std::vector<CTok>& toks, size_t first, size_t last, std::string* what) {
  for (size_t i = first; i < last; ++i) {
    const CTok& t = toks[i];
    if (t.kind != CTok::Ident) continue;
    bool ns = i + 1 < last && toks[i + 1].text == "::";
    // torch::PackedTensorAccessor32 and the like: the kernel file includes kernrl's header of
    // them (written unqualified, through `using namespace`, they stay refused).
    if ((t.text == "torch" || t.text == "at") && ns && i + 2 < last &&
        accessor_name(toks[i + 2].text) && (i == first || toks[i - 1].text != "::")) {
      i += 2;
      continue;
    }
    if ((t.text == "torch" || t.text == "at" || t.text == "c10" || t.text == "pybind11" ||
         t.text == "py") &&
        ns) {
      if (what) *what = t.text + "::" + (i + 2 < last ? toks[i + 2].text : "");
      return true;
    }
    if (t.text == "Tensor" || starts_with(t.text, "TORCH_") || starts_with(t.text, "AT_") ||
        starts_with(t.text, "C10_") || t.text == "PYBIND11_MODULE" ||
        contains(t.text, "TensorAccessor") || contains(t.text, "PtrTraits") ||
        t.text == "IntArrayRef") {
      if (what) *what = t.text;
      return true;
    }
  }
  return false;
}

bool uses_host_api(const std::vector<CTok>& toks, size_t first, size_t last) {
  static const char* const host[] = {"cudaMalloc",
                                     "cudaMemcpy",
                                     "cudaFree",
                                     "cudaStreamCreate",
                                     "cudaDeviceSynchronize",
                                     "cudaGetLastError",
                                     "cudaEventCreate",
                                     "cudaFuncSetAttribute",
                                     "cudaGetDeviceProperties",
                                     "cudaMemset",
                                     "cublasCreate",
                                     "cudaLaunchKernel",
                                     "cudaOccupancyMaxActiveBlocksPerMultiprocessor"};
  for (size_t i = first; i < last; ++i) {
    const CTok& t = toks[i];
    if (t.kind == CTok::Punct && t.text == "<<<") return true;
    if (t.kind != CTok::Ident) continue;
    for (const char* h : host)
      if (starts_with(t.text, h)) return true;
    if (t.text == "std" && i + 2 < last &&
        (toks[i + 2].text == "vector" || toks[i + 2].text == "cout" || toks[i + 2].text == "cerr" ||
         toks[i + 2].text == "string" || toks[i + 2].text == "runtime_error" ||
         toks[i + 2].text == "map"))
      return true;
  }
  return false;
}

bool dropped_include(const std::string& directive) {
  std::string d = directive;
  size_t p = d.find("include");
  if (p == std::string::npos) return false;
  std::string target = d.substr(p + 7);
  static const char* const host[] = {"torch/",
                                     "ATen/",
                                     "c10/",
                                     "pybind11",
                                     "THC/",
                                     "<vector>",
                                     "<iostream>",
                                     "<string>",
                                     "<sstream>",
                                     "<memory>",
                                     "<map>",
                                     "<unordered_map>",
                                     "<stdexcept>",
                                     "<iomanip>",
                                     "<fstream>",
                                     "<chrono>",
                                     "<thread>",
                                     "<random>",
                                     "cublas",
                                     "cudnn",
                                     "cufft",
                                     "curand",
                                     "cusparse",
                                     "cusolver",
                                     "<thrust/",
                                     "<Python.h>",
                                     "<set>",
                                     "<list>",
                                     "<mutex>",
                                     "<optional>",
                                     "<cuda_profiler_api.h>",
                                     "<nvtx",
                                     "<iterator>",
                                     "<cuda_runtime.h>",
                                     "<cuda_runtime_api.h>"};
  for (const char* h : host)
    if (target.find(h) != std::string::npos) return true;
  return false;
}

struct Removal {
  size_t begin, end;
  std::string replacement;
};

void plan_removals(const ExtModule& m, const ExtModule::Source& s, const std::vector<CItem>& items,
                   std::vector<Removal>* out) {
  for (const CItem& it : items) {
    const CTok& first = s.toks[it.first];
    const CTok& last = s.toks[it.last - 1];
    size_t b = first.begin, e = last.end;
    switch (it.kind) {
      case CItem::Directive: {
        std::string d = first.text;
        bool define = d.find("define") != std::string::npos && d.find("define") < 8;
        std::string dummy;
        if (dropped_include(d))
          out->push_back({b, e, ""});
        else if (define &&
                 (d.find("TORCH_") != std::string::npos || d.find("AT_") != std::string::npos ||
                  d.find("torch::") != std::string::npos || d.find("at::") != std::string::npos ||
                  d.find("c10::") != std::string::npos || d.find("is_cuda") != std::string::npos ||
                  d.find("is_contiguous") != std::string::npos ||
                  d.find("C10_") != std::string::npos ||
                  d.find("cudaGetErrorString") != std::string::npos ||
                  d.find("cudaGetLastError") != std::string::npos))
          out->push_back({b, e, ""});
        break;
      }
      case CItem::Function: {
        bool device = it.is_global || it.is_device;
        bool host_only = it.is_host && !it.is_device;
        bool listed =
            std::find(m.functions.begin(), m.functions.end(), it.name) != m.functions.end();
        std::string what;
        bool torch = mentions_torch(s.toks, it.first, it.last, &what);
        bool host = host_only || listed || it.name == "PYBIND11_MODULE" || it.name.empty() ||
                    (!device && (torch || uses_host_api(s.toks, it.first, it.last)));
        if (host)
          out->push_back(
              {b, e,
               it.name.empty() || it.name == "PYBIND11_MODULE"
                   ? ""
                   : "// (host function " + it.name + ": its launches are in the launch block)"});
        break;
      }
      case CItem::Declaration:
      case CItem::Type: {
        if (mentions_torch(s.toks, it.first, it.last, nullptr) ||
            uses_host_api(s.toks, it.first, it.last))
          out->push_back({b, e, ""});
        break;
      }
      case CItem::Block:
        plan_removals(m, s, it.children, out);
        break;
    }
  }
}

void collect_kept(const ExtModule::Source& s, const std::vector<CItem>& items,
                  const std::vector<Removal>& removed, std::vector<const CItem*>* kept) {
  for (const CItem& it : items) {
    if (it.kind == CItem::Block) {
      collect_kept(s, it.children, removed, kept);
      continue;
    }
    size_t b = s.toks[it.first].begin;
    bool gone =
        std::any_of(removed.begin(), removed.end(), [&](const Removal& r) { return r.begin == b; });
    if (!gone) kept->push_back(&it);
  }
}

}  // namespace

std::string device_code(const ExtModule& m, const ExtModule::Source& s) {
  std::vector<Removal> removals;
  plan_removals(m, s, s.items, &removals);
  std::vector<const CItem*> kept;
  collect_kept(s, s.items, removals, &kept);
  for (const CItem* it : kept) {
    std::string what;
    if (it->kind != CItem::Directive && mentions_torch(s.toks, it->first, it->last, &what)) {
      std::string where = it->kind == CItem::Function ? "the device function `" + it->name + "`"
                                                      : "the device code";
      throw ImportError("unsupported_cuda",
                        where + " uses PyTorch's `" + what + "`; a kernel file is plain CUDA");
    }
  }
  std::sort(removals.begin(), removals.end(),
            [](const Removal& a, const Removal& b) { return a.begin < b.begin; });
  std::string out;
  size_t at = 0;
  for (const Removal& r : removals) {
    if (r.begin < at) continue;
    out += s.text.substr(at, r.begin - at);
    out += r.replacement;
    at = r.end;
  }
  out += s.text.substr(at);
  // Trim runs of blank lines left behind.
  std::string trimmed;
  int blank = 0;
  std::istringstream in(out);
  std::string line;
  bool started = false;
  while (std::getline(in, line)) {
    bool is_blank = line.find_first_not_of(" \t\r") == std::string::npos;
    if (is_blank) {
      if (!started) continue;
      if (++blank > 1) continue;
    } else {
      blank = 0;
      started = true;
    }
    trimmed += line + "\n";
  }
  while (trimmed.size() >= 2 && trimmed[trimmed.size() - 1] == '\n' &&
         trimmed[trimmed.size() - 2] == '\n')
    trimmed.pop_back();
  return trimmed;
}

}  // namespace kernrl::kbimport

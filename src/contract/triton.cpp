// The Triton side of the contract shown to models: the summary (`show --contract`, Triton
// prompts) and the Triton template.
#include <sstream>
#include <vector>

#include "contract/contract.h"
#include "contract/prompt.h"
#include "parse/launch_block.h"

namespace kernrl {

std::string triton_contract_summary() {
  std::string keys;
  for (const auto& k : triton_launch_keys()) keys += (keys.empty() ? "" : ", ") + k;
  return "The Triton kernel-file contract (kernrl v" + std::to_string(kContractVersion) + R"():
- A Python file with @triton.jit kernels, compiled by Triton for the grading GPU (sm_90a on
  H100/H200). Only the jit functions (with their @triton.autotune / @triton.heuristics decorators),
  imports of triton and math, and module-level constants (BLOCK = tl.constexpr(128)) are kept; any
  other top-level code (torch imports, a host wrapper, a Model class, a __main__ block) is ignored,
  never run. kernrl launches the compiled kernels itself: no host code runs.
- A module docstring that starts with `kernrl` (or a `# kernrl` line followed by `#` comment lines)
  holds YAML saying how to launch your kernels:
    problem: ID                     # optional: the problem this file is for
    launches:                       # run in order on one stream
      - kernel: name                # a @triton.jit function of this file
        grid: [expr, ...]           # 1-3 integer expressions (programs) over the sizes and num_sms
        args: [tensor, size, ...]   # the NON-constexpr parameters in order: tensors -> pointers
                                    # (typed by their dtype), sizes/expressions -> int32 (int64 when
                                    # too large), scalars and literals like 0.5 -> fp32
        constexprs: {BLOCK: 1024}   # every tl.constexpr parameter: integer expression, true/false
        num_warps: 4                # optional (default 4; a power of two, 1-32); block = 32 x num_warps
        num_stages: 3               # optional (default 3)
        num_ctas: 1                 # optional (default 1)
        repeat: {count: expr, var: i}   # optional, repeats the launch with i = 0..count-1
    scratch:                        # optional zeroed device buffers usable as args
      buf: {dtype: float32, count: cdiv(n, 256)}
  Launch keys: )" +
         keys +
         R"(. There is no block or shared_bytes: they come from the compiled kernel.
- @triton.autotune(configs=[...], key=[...]) (at most )" +
         std::to_string(kMaxTritonAutotuneConfigs) +
         R"( configs) and @triton.heuristics({...}) may supply
  constexprs, num_warps and num_stages; heuristics see the arguments' values at each size set.
- Integer arguments are specialised as Triton's JIT does (divisible by 16 or not) at each size set.
)" + limits_paragraph() +
         R"(
- Tensors are contiguous and row-major. Every output element must be written on every call; inputs
  must not be modified. Correctness is checked on fresh random inputs at several sizes (including odd
  ones), so handle any size (mask your loads and stores); then the kernel is timed against PyTorch
  at the bench size.
)";
}

std::string triton_template(const ProblemSpec& p) {
  std::vector<std::string> args, params;
  for (const auto* list : {&p.inputs, &p.parameters, &p.outputs})
    for (const auto& t : *list) {
      args.push_back(t.name);
      params.push_back(t.name + "_ptr");
    }
  for (const auto& s : p.scalars) {
    args.push_back(s.name);
    params.push_back(s.name);
  }
  for (const auto& n : p.size_names) {
    args.push_back(n);
    params.push_back(n);
  }
  const TensorSpec& first_out = p.outputs.front();
  std::string numel;
  for (const auto& d : first_out.shape)
    numel += (numel.empty() ? "" : " * ") + std::string("(") + d + ")";
  if (numel.empty()) numel = "1";
  std::ostringstream o;
  o << "\"\"\"kernrl\nproblem: " << p.id << "\nlaunches:\n  - kernel: kernel_main\n"
    << "    grid: [cdiv(" << numel << ", 1024)]\n    args: [";
  for (size_t i = 0; i < args.size(); ++i) o << (i ? ", " : "") << args[i];
  o << "]\n    constexprs: {BLOCK: 1024}\n    num_warps: 4\n\"\"\"\nimport triton\n"
    << "import triton.language as tl\n\n\n@triton.jit\ndef kernel_main(";
  for (size_t i = 0; i < params.size(); ++i) o << params[i] << ", ";
  o << "BLOCK: tl.constexpr):\n    # One program per BLOCK elements of `" << first_out.name
    << "` to start with; replace with your kernel.\n"
    << "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n";
  return o.str();
}

}  // namespace kernrl

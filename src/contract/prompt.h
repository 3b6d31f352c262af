// The task prompt a model gets for a problem (`kernrl show --prompt`, `kernrl serve`'s
// observations and prompts) and the kernel template inside it, made from the problem's spec and the
// kernel-file contract.
#pragma once

#include <string>

#include "core/problem.h"

namespace kernrl {

// The task prompt's version (docs/prompts.md): bumped whenever its text changes for a problem.
constexpr int kTaskPromptVersion = 1;
constexpr const char* kTaskPromptName = "kernrl.task.v1";

// A kernel file to start from: the launch block and one kernel taking every tensor, scalar and
// size of the problem.
std::string kernel_template(const ProblemSpec& p);

// The same for a Triton kernel file: the launch block in a docstring and one @triton.jit kernel.
std::string triton_template(const ProblemSpec& p);

// Tensors with their dtypes, shapes and roles (outputs with their tolerance), one per line.
std::string tensors_text(const ProblemSpec& p);

// The bench and test size sets, one per line.
std::string sizes_text(const ProblemSpec& p);

// The complete task prompt: the problem, its PyTorch code, tensors, sizes, the kernel-file
// contract and the template, ending with how to answer.
// `language` "triton" asks for Triton kernels (the Triton contract and template); "cuda" (the
// default) for CUDA.
std::string task_prompt(const ProblemSpec& p, const std::string& language = "cuda");

}  // namespace kernrl

// What one kernrl-nvrtc compile does, whichever process runs it: the one-shot child (main.cpp) or
// a child forked by the fork server (server.h). Both enter the sandbox before NVRTC reads the
// submission, and both print exactly what docs/protocol.md says: a CompileAnswer line, then the
// cubin's bytes.
#pragma once

#include <string>
#include <vector>

#include "protocol/compiler.h"

namespace kernrl::nvrtc {

// NVRTC's version, "13.0".
std::string nvrtc_version();

// NVRTC loads libnvrtc-builtins on its first compile; this loads it now, while the file system is
// open (before the sandbox).
void preload_nvrtc_builtins();

// Writes `answer` (and `cubin`) to file descriptor 1, whole.
void write_answer(const CompileAnswer& answer, const std::string& cubin = "");

// Compiles `req` with NVRTC, with `extra_options` after the request's own (the fork server's
// precompiled header), and writes the answer. Returns the process's exit code: 0 when a cubin was
// written, 1 otherwise. The caller has already entered the sandbox (or the request turned it off);
// `sandbox` is what the answer reports of it.
int compile_and_answer(const CompileRequest& req, const std::vector<std::string>& extra_options,
                       const std::string& sandbox);

// `--check-sandbox`: enters the sandbox with `dirs` readable, tries what it must forbid and what it
// must allow, and prints a SandboxCheckAnswer. With `pch_dir`, the fork server's folder of
// precompiled headers is among the readable directories, and writing into it must fail too; with
// `scratch`, that folder is the compile's writable scratch (sandbox.h), as the server gives it.
// Returns the exit code (0 when the sandbox holds).
int check_sandbox(const std::vector<std::string>& dirs, const std::string& pch_dir = "",
                  const std::string& scratch = "");

}  // namespace kernrl::nvrtc

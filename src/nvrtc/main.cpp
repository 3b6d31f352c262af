// kernrl-nvrtc: compiles kernel files with NVRTC. It runs as a child of kernrl, with an empty
// environment, in an empty directory, and every compile locks itself into the sandbox of
// sandbox/sandbox.h before NVRTC reads anything: a kernel file can make the preprocessor open only
// CUDA's headers and the headers kernrl serves from memory.
//
// `kernrl-nvrtc` (no argument): one compile. Request (stdin): one CompileRequest. Answer (stdout):
//   one CompileAnswer line, then exactly cubin_bytes bytes of cubin (protocol/compiler.h,
//   docs/protocol.md). Time and memory limits are kernrl's (core/subprocess.h).
// `kernrl-nvrtc --server [--pch-sets N]`: the fork server (server.h): NVRTC loaded once, one
//   sandboxed child forked per compile, with the precompiled headers the server keeps.
// `kernrl-nvrtc --version` prints a VersionAnswer: {"nvrtc": "<major>.<minor>"}.
// `kernrl-nvrtc --check-sandbox DIR...` enters the sandbox and proves it (compile_one.h),
// printing a SandboxCheckAnswer.
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "nvrtc/compile_one.h"
#include "nvrtc/server.h"
#include "protocol/compiler.h"
#include "sandbox/sandbox.h"

int main(int argc, char** argv) {
  using namespace kernrl;
  std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "--version") {
    std::cout << VersionAnswer{nvrtc::nvrtc_version()}.to_json().dump() << "\n";
    return 0;
  }
  if (mode == "--check-sandbox") return nvrtc::check_sandbox({argv + 2, argv + argc});
  if (mode == "--server") return nvrtc::run_server({argv + 2, argv + argc});
  CompileRequest req;
  try {
    req = read_compile_request(std::string(std::istreambuf_iterator<char>(std::cin), {}));
  } catch (const std::exception& e) {
    CompileAnswer res;
    res.error = std::string("bad request: ") + e.what();
    nvrtc::write_answer(res);
    return 2;
  }
  std::string sandbox = "off";
  if (req.sandbox) {
    nvrtc::preload_nvrtc_builtins();
    SandboxStatus st = enter_sandbox(req.include_dirs);
    if (!st.ok) {
      CompileAnswer res;
      res.sandbox_error = st.error;
      nvrtc::write_answer(res);
      return 3;
    }
    sandbox = st.description;
  }
  return nvrtc::compile_and_answer(req, {}, sandbox);
}

// The messages between kernrl (the compile client, src/compile) and kernrl-nvrtc (src/nvrtc): one
// child process per compile, or one fork server that forks a sandboxed child per compile
// (docs/protocol.md). Both sides include this header; each message has
// exactly one serializer (to_json) and one parser (from_json), and a round-trip test
// (tests/unit/test_protocol_compiler.cpp).
//
//   kernrl -> kernrl-nvrtc   CompileRequest: one JSON object on stdin, then EOF
//   kernrl-nvrtc -> kernrl   CompileAnswer: one JSON line on stdout, then exactly `cubin_bytes`
//                            raw bytes of cubin (write_compile_output / read_compile_output)
//   kernrl-nvrtc --version           VersionAnswer (one JSON line)
//   kernrl-nvrtc --check-sandbox DIR...   SandboxCheckAnswer (one JSON line)
//   kernrl-nvrtc --server    frames on stdin and stdout: kernrl writes a ServerJob line and then
//                            the job's body as one line (a CompileRequest, or nothing for a
//                            sandbox check); the server answers each job, in any order, with a
//                            ServerReply line and then exactly `bytes` raw bytes: the child's
//                            whole stdout (what the one-shot child would have printed)
//
// Depends on nlohmann/json only, so that kernrl-nvrtc links nothing else of kernrl's for it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kernrl {

// The version of the messages below, as docs/protocol.md describes them. It is not sent: kernrl
// and kernrl-nvrtc come from one build and are installed together. Bump it (and the document)
// whenever a message changes shape.
constexpr int kCompilerProtocol = 2;

struct CompileRequest {
  std::string source;                // the kernel file's text as NVRTC compiles it (with its #line)
  std::string filename;              // the program's name in NVRTC's diagnostics
  std::vector<std::string> options;  // NVRTC options
  std::vector<std::string> names;    // kernel names to lower (nvrtcAddNameExpression)
  std::vector<std::string> include_dirs;    // the only directories the sandbox lets NVRTC read
  bool sandbox = true;                      // false: compile without the sandbox (trusted input)
  size_t max_log_bytes = size_t{64} << 10;  // the log beyond this is cut (log_bytes says how much)
  size_t max_cubin_bytes = size_t{64} << 20;  // a larger cubin is a compile error
  nlohmann::json to_json() const;
  // Throws nlohmann::json::exception for a missing or mistyped key (the absent max_* and
  // `sandbox` take the defaults above).
  static CompileRequest from_json(const nlohmann::json& j);
};

struct CompileAnswer {
  bool ok = false;
  std::string error;                           // why not ok (absent from the JSON when empty)
  std::string log;                             // NVRTC's log, at most max_log_bytes
  std::optional<size_t> log_bytes;             // the log's full size; absent before NVRTC ran
  std::map<std::string, std::string> lowered;  // kernel name -> mangled name
  std::string sandbox;                         // what was enforced ("off" without the sandbox)
  std::string sandbox_error;  // the sandbox could not be entered (a machine's problem, not the
                              // kernel's); absent when empty
  size_t cubin_bytes = 0;     // the raw bytes following the line
  nlohmann::json to_json() const;
  // Absent keys take the defaults above; `lowered` is required when ok. Throws
  // nlohmann::json::exception or std::runtime_error for an answer that breaks these rules.
  static CompileAnswer from_json(const nlohmann::json& j);
};

// The request as kernrl writes it to kernrl-nvrtc's stdin, and as kernrl-nvrtc reads it back
// (read_compile_request throws like CompileRequest::from_json, or for text that is not JSON).
std::string write_compile_request(const CompileRequest& request);
CompileRequest read_compile_request(const std::string& text);

// kernrl-nvrtc's whole stdout for `answer` and `cubin`: the answer's JSON line (with cubin_bytes
// set to cubin.size()), then the cubin's bytes.
std::string write_compile_output(CompileAnswer answer, const std::string& cubin);
// Reads kernrl-nvrtc's whole stdout back into the answer and its cubin. Throws (std::runtime_error
// or nlohmann::json::exception) when the first line is not an answer or the cubin that follows is
// not exactly cubin_bytes long.
CompileAnswer read_compile_output(const std::string& out, std::string* cubin);

// `kernrl-nvrtc --version`.
struct VersionAnswer {
  std::string nvrtc;  // NVRTC's version, "13.0"
  nlohmann::json to_json() const;
  static VersionAnswer from_json(const nlohmann::json& j);
};

// `kernrl-nvrtc --check-sandbox DIR...`: the child entered the sandbox and tried to escape it.
struct SandboxCheckAnswer {
  bool ok = false;
  int landlock_abi = 0;
  std::string sandbox;  // what was enforced
  std::string error;    // why not ok ("" when ok)
  // What each escape attempt achieved ({"read /etc/passwd": false, ..., "environment": ""});
  // only when the sandbox was entered.
  std::optional<nlohmann::json> checks;
  nlohmann::json to_json() const;
  static SandboxCheckAnswer from_json(const nlohmann::json& j);
};

// One job for `kernrl-nvrtc --server`. Everything here is kernrl's own (its config, CUDA's include
// tree, header names from the include list); the submission is only in the body line that follows,
// which the server hands unread to a sandboxed child.
struct ServerJob {
  uint64_t id = 0;
  // Compile: the body is a CompileRequest. CheckSandbox: the child runs --check-sandbox as a
  // compile's child would be sandboxed (empty body). Prepare: no child; the server makes the PCH
  // for `options` and `pch_headers` (or finds it made) and answers once it is ready or cannot be
  // made (`pch`: "used", "failed", "full" or "none"; empty body, no bytes).
  enum Kind { Compile, CheckSandbox, Prepare } kind = Compile;
  std::vector<std::string> include_dirs;  // the sandbox's readable directories
  bool sandbox = true;
  double timeout_s = 30;        // the child is killed after this
  long memory_limit_mb = 0;     // the child's address space (RLIMIT_AS); 0: unlimited
  size_t max_output_bytes = 0;  // the child is killed once its stdout exceeds this; 0: no bound
  // Compile: the request's NVRTC options and the headers a precompiled header may cover (the
  // submission's leading #include <...> lines, compile/include_gate.h); empty: no PCH.
  std::vector<std::string> options;
  std::vector<std::string> pch_headers;
  nlohmann::json to_json() const;
  static ServerJob from_json(const nlohmann::json& j);  // throws like CompileRequest::from_json
};

// The server's word on one job, followed by `bytes` bytes of the child's stdout.
struct ServerReply {
  uint64_t id = 0;
  size_t bytes = 0;
  int exit_code = -1;            // when the child exited by itself
  int signal = 0;                // the signal that ended it, if any
  bool timed_out = false;        // killed at the job's deadline
  bool output_overflow = false;  // killed for writing more than max_output_bytes
  // The precompiled header: "used" (the compile was given one), "seen" (the first compile with
  // these headers; one is made when they come again), "building" (one is being made for these
  // headers; this compile ran without), "none" (no headers to cover, or PCHs are off),
  // "failed" (NVRTC made none for these headers), "full" (the server holds its maximum of PCHs).
  std::string pch = "none";
  nlohmann::json to_json() const;
  static ServerReply from_json(const nlohmann::json& j);
};

}  // namespace kernrl

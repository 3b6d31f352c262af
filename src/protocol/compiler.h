// The messages between kernrl (the compile client, src/compile) and kernrl-nvrtc (src/nvrtc), one
// child process per compile (docs/protocol.md). Both sides include this header; each message has
// exactly one serializer (to_json) and one parser (from_json), and a round-trip test
// (tests/unit/test_protocol_compiler.cpp).
//
//   kernrl -> kernrl-nvrtc   CompileRequest: one JSON object on stdin, then EOF
//   kernrl-nvrtc -> kernrl   CompileAnswer: one JSON line on stdout, then exactly `cubin_bytes`
//                            raw bytes of cubin (write_compile_output / read_compile_output)
//   kernrl-nvrtc --version           VersionAnswer (one JSON line)
//   kernrl-nvrtc --check-sandbox DIR...   SandboxCheckAnswer (one JSON line)
//
// Depends on nlohmann/json only, so that kernrl-nvrtc links nothing else of kernrl's for it.
#pragma once

#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kernrl {

// The version of the messages below, as docs/protocol.md describes them. It is not sent: kernrl
// and kernrl-nvrtc come from one build and are installed together. Bump it (and the document)
// whenever a message changes shape.
constexpr int kCompilerProtocol = 1;

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

}  // namespace kernrl

// The compiler protocol's messages (protocol/compiler.h): every message survives to_json ->
// from_json unchanged, the wire format is the documented one (docs/protocol.md), the cubin is
// framed after the answer's line, and malformed messages are refused.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "protocol/compiler.h"

using namespace kernrl;
using nlohmann::json;

namespace {

CompileRequest sample_request() {
  CompileRequest r;
  r.source = "#line 3 \"answer.md\"\nextern \"C\" __global__ void k(float* x) { x[0] = 1; }\n";
  r.filename = "answer.md";
  r.options = {"-arch=sm_90a", "-std=c++17", "-default-device"};
  r.names = {"k", "tiled<64>"};
  r.include_dirs = {"/usr/local/cuda/include"};
  r.sandbox = true;
  r.max_log_bytes = 1 << 20;
  r.max_cubin_bytes = 64 << 20;
  return r;
}

CompileAnswer sample_answer() {
  CompileAnswer a;
  a.ok = true;
  a.log = "answer.md(4): warning: unused variable";
  a.log_bytes = 40;
  a.lowered = {{"k", "k"}, {"tiled<64>", "_Z5tiledILi64EEvv"}};
  a.sandbox = "landlock abi 4, seccomp";
  a.cubin_bytes = 5;
  return a;
}

}  // namespace

TEST_CASE("a compile request round-trips and has the documented keys") {
  CompileRequest r = sample_request();
  json j = r.to_json();
  CHECK(
      j ==
      json::parse(
          R"({"source": "#line 3 \"answer.md\"\nextern \"C\" __global__ void k(float* x) { x[0] = 1; }\n",
                             "filename": "answer.md",
                             "options": ["-arch=sm_90a", "-std=c++17", "-default-device"],
                             "names": ["k", "tiled<64>"],
                             "include_dirs": ["/usr/local/cuda/include"],
                             "sandbox": true, "max_log_bytes": 1048576, "max_cubin_bytes": 67108864})"));
  CompileRequest back = read_compile_request(write_compile_request(r));
  CHECK(back.to_json() == j);
  CHECK(back.names == r.names);
  CHECK(back.include_dirs == r.include_dirs);
  // One line: the request is the whole of the child's stdin.
  CHECK(write_compile_request(r).find('\n') == std::string::npos);
}

TEST_CASE("a compile request takes the child's defaults for what it leaves out") {
  // What tests/compile/sandbox_test.py sends: no limits.
  CompileRequest r = CompileRequest::from_json(json{{"source", "x"},
                                                    {"filename", "k.cu"},
                                                    {"options", json::array()},
                                                    {"names", json::array()},
                                                    {"include_dirs", {"/inc"}}});
  CHECK(r.sandbox);
  CHECK(r.max_log_bytes == 65536);
  CHECK(r.max_cubin_bytes == (size_t{64} << 20));
  // Without the sandbox the include directories may be left out.
  json off = {{"source", "x"},
              {"filename", "k.cu"},
              {"options", json::array()},
              {"names", json::array()},
              {"sandbox", false}};
  CHECK(CompileRequest::from_json(off).include_dirs.empty());
  off["sandbox"] = true;
  CHECK_THROWS(CompileRequest::from_json(off));
  // Missing or mistyped keys are refused (the child answers "bad request").
  CHECK_THROWS(CompileRequest::from_json(json{{"filename", "k.cu"}}));
  json bad = sample_request().to_json();
  bad["names"] = "k";
  CHECK_THROWS(CompileRequest::from_json(bad));
  CHECK_THROWS(read_compile_request("not json"));
}

TEST_CASE("a compile answer round-trips through the child's stdout, cubin included") {
  CompileAnswer a = sample_answer();
  std::string cubin(
      "\x7f"
      "ELF\0",
      5);
  std::string out = write_compile_output(a, cubin);
  size_t nl = out.find('\n');
  REQUIRE(nl != std::string::npos);
  CHECK(out.substr(nl + 1) == cubin);
  CHECK(
      json::parse(out.substr(0, nl)) ==
      json::parse(R"({"ok": true, "log": "answer.md(4): warning: unused variable", "log_bytes": 40,
                        "lowered": {"k": "k", "tiled<64>": "_Z5tiledILi64EEvv"},
                        "sandbox": "landlock abi 4, seccomp", "cubin_bytes": 5})"));
  std::string back_cubin;
  CompileAnswer back = read_compile_output(out, &back_cubin);
  CHECK(back.to_json() == a.to_json());
  CHECK(back_cubin == cubin);
  // write_compile_output sets cubin_bytes from the cubin it frames.
  a.cubin_bytes = 999;
  CHECK(read_compile_output(write_compile_output(a, cubin), &back_cubin).cubin_bytes == 5);
}

TEST_CASE("failed compile answers carry only the keys that apply") {
  // Before NVRTC ran (a bad request): no log_bytes, no sandbox.
  CompileAnswer bad;
  bad.error = "bad request: missing source";
  CHECK(bad.to_json() == json::parse(R"({"ok": false, "log": "", "lowered": {}, "cubin_bytes": 0,
                                         "error": "bad request: missing source"})"));
  // The sandbox could not be entered.
  CompileAnswer sandbox;
  sandbox.sandbox_error = "landlock_create_ruleset: Function not implemented";
  CHECK(sandbox.to_json() ==
        json::parse(R"({"ok": false, "log": "", "lowered": {}, "cubin_bytes": 0,
                                             "sandbox_error": "landlock_create_ruleset: Function not implemented"})"));
  // NVRTC rejected the source: the log, cut, and its full size.
  CompileAnswer failed;
  failed.error = "NVRTC_ERROR_COMPILATION";
  failed.log = "k.cu(2): error: identifier \"y\" is undefined";
  failed.log_bytes = 5000;
  failed.sandbox = "off";
  std::string cubin = "left over";
  CompileAnswer back = read_compile_output(write_compile_output(failed, ""), &cubin);
  CHECK(cubin.empty());
  CHECK_FALSE(back.ok);
  CHECK(back.error == failed.error);
  CHECK(back.log == failed.log);
  CHECK(back.log_bytes == std::optional<size_t>(5000));
  CHECK(back.sandbox == "off");
  CHECK(back.sandbox_error.empty());
  CHECK(back.to_json() == failed.to_json());
}

TEST_CASE("malformed compiler output is refused") {
  std::string cubin;
  // Not JSON, or not an object.
  CHECK_THROWS(read_compile_output("", &cubin));
  CHECK_THROWS(read_compile_output("Segmentation fault\n", &cubin));
  CHECK_THROWS(read_compile_output("[1, 2]\n", &cubin));
  // A cubin shorter or longer than announced, or missing its line break.
  std::string out = write_compile_output(sample_answer(), "12345");
  CHECK_THROWS(read_compile_output(out.substr(0, out.size() - 1), &cubin));
  CHECK_THROWS(read_compile_output(out + "6", &cubin));
  CHECK_THROWS(read_compile_output(sample_answer().to_json().dump(), &cubin));
  // An ok answer must say what the kernels are called.
  json no_lowered = sample_answer().to_json();
  no_lowered.erase("lowered");
  no_lowered["cubin_bytes"] = 0;
  CHECK_THROWS(read_compile_output(no_lowered.dump() + "\n", &cubin));
  // A mistyped field.
  json typed = sample_answer().to_json();
  typed["lowered"] = json::array({"k"});
  CHECK_THROWS(CompileAnswer::from_json(typed));
}

TEST_CASE("bytes that are not UTF-8 reach the other side replaced, never as an exception") {
  CompileAnswer a;
  a.error = "NVRTC_ERROR_COMPILATION";
  a.log = "k.cu(1): error: bad byte \xff here";
  std::string cubin;
  CompileAnswer back = read_compile_output(write_compile_output(a, ""), &cubin);
  CHECK(back.log == "k.cu(1): error: bad byte \xEF\xBF\xBD here");
  CompileRequest r = sample_request();
  r.source = "// caf\xe9\n";
  CHECK(read_compile_request(write_compile_request(r)).source == "// caf\xEF\xBF\xBD\n");
}

TEST_CASE("the version and sandbox-check answers round-trip") {
  VersionAnswer v{"13.0"};
  CHECK(v.to_json() == json{{"nvrtc", "13.0"}});
  CHECK(VersionAnswer::from_json(v.to_json()).nvrtc == "13.0");
  CHECK_THROWS(VersionAnswer::from_json(json::object()));

  SandboxCheckAnswer held;
  held.ok = true;
  held.landlock_abi = 4;
  held.sandbox = "landlock abi 4, seccomp";
  held.checks = json{{"read /etc/passwd", false},
                     {"read /proc/self/environ", false},
                     {"create /tmp file", false},
                     {"socket", false},
                     {"environment", ""}};
  SandboxCheckAnswer back = SandboxCheckAnswer::from_json(json::parse(held.to_json().dump()));
  CHECK(back.to_json() == held.to_json());
  CHECK(held.to_json().at("error") == "");  // always present, as the check has always written it

  SandboxCheckAnswer failed;
  failed.error = "the sandbox did not hold";
  CHECK_FALSE(failed.to_json().contains("checks"));
  back = SandboxCheckAnswer::from_json(failed.to_json());
  CHECK_FALSE(back.ok);
  CHECK(back.error == failed.error);
  CHECK_FALSE(back.checks.has_value());
  CHECK_THROWS(SandboxCheckAnswer::from_json(json{{"error", "x"}}));
}

TEST_CASE("the fork server's job and reply frames round-trip with the documented keys") {
  ServerJob job;
  job.id = 7;
  job.kind = ServerJob::Prepare;
  job.include_dirs = {"/usr/local/cuda-13.0/include"};
  job.timeout_s = 30;
  job.memory_limit_mb = 8192;
  job.max_output_bytes = 1 << 20;
  job.options = {"-arch=sm_90a"};
  job.pch_headers = {"cub/block/block_reduce.cuh"};
  json j = job.to_json();
  CHECK(j == json::parse(R"({"id": 7, "kind": "prepare",
      "include_dirs": ["/usr/local/cuda-13.0/include"], "sandbox": true, "timeout_s": 30.0,
      "memory_limit_mb": 8192, "max_output_bytes": 1048576, "options": ["-arch=sm_90a"],
      "pch_headers": ["cub/block/block_reduce.cuh"]})"));
  CHECK(ServerJob::from_json(j).to_json() == j);
  for (const char* kind : {"compile", "check_sandbox"}) {
    j["kind"] = kind;
    CHECK(ServerJob::from_json(j).to_json()["kind"] == kind);
  }
  j["kind"] = "exec";
  CHECK_THROWS(ServerJob::from_json(j));
  CHECK_THROWS(ServerJob::from_json(json::parse(R"({"kind": "compile"})")));

  ServerReply r;
  r.id = 7;
  r.bytes = 120;
  r.signal = 9;
  r.timed_out = true;
  r.pch = "building";
  json rj = r.to_json();
  CHECK(rj == json::parse(R"({"id": 7, "bytes": 120, "exit_code": -1, "signal": 9,
      "timed_out": true, "output_overflow": false, "pch": "building"})"));
  CHECK(ServerReply::from_json(rj).to_json() == rj);
  CHECK_THROWS(ServerReply::from_json(json::parse(R"({"id": 7})")));
}

TEST_CASE("docs/protocol.md describes this version of the compiler protocol") {
  std::ifstream in(std::string(KERNRL_SOURCE_DIR) + "/docs/protocol.md");
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  CHECK(text.str().find("## kernrl ↔ kernrl-nvrtc (protocol version " +
                        std::to_string(kCompilerProtocol) + ")") != std::string::npos);
}

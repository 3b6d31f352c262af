// The contract's one source of truth: the header list, the built-in headers, the prompt and the
// docs agree.
#include <doctest/doctest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "contract/contract.h"
#include "headers/builtin_headers.h"
#include "headers/prelude.h"
#include "parse/launch_block.h"

using namespace kernrl;

TEST_CASE("every header the list serves from memory has a text, and every text is listed") {
  std::set<std::string> texts, listed;
  for (const auto& h : builtin_headers()) texts.insert(h.name);
  for (const auto& h : supported_headers()) {
    CHECK_MESSAGE(!h.probe.empty(), h.name);
    if (h.builtin) {
      listed.insert(h.name);
      CHECK_MESSAGE(texts.count(h.name), (h.name + " is listed as built in but has no text"));
    }
  }
  for (const auto& name : texts) {
    if (name == "kernrl_prelude.h" || name.rfind("kernrl/", 0) == 0) continue;
    CHECK_MESSAGE(listed.count(name), (name + " is served but not in src/headers/headers.txt"));
  }
  CHECK(supported_headers().size() >= 60);
}

TEST_CASE("the prompt names every header family and every standard header") {
  std::string prompt = contract_summary();
  for (const auto& h : supported_headers()) {
    if (h.name.rfind("kernrl/", 0) == 0) {
      // kernrl's own headers (PyTorch's tensor accessors) are for imported files: not in the
      // prompt's list of standard headers.
      CHECK_MESSAGE(prompt.find(h.name) == std::string::npos, h.name);
      continue;
    }
    std::string shown = h.builtin ? h.name : h.name.substr(0, h.name.find('/'));
    CHECK_MESSAGE(prompt.find(shown) != std::string::npos, h.name);
  }
  CHECK(prompt.find("count: cdiv(n, 256)") != std::string::npos);
}

TEST_CASE("docs/kernel-format.md carries the header table as `kernrl show --headers` prints it") {
  std::ifstream in(std::string(KERNRL_SOURCE_DIR) + "/docs/kernel-format.md");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string doc = ss.str();
  auto a = doc.find("<!-- headers:begin");
  auto b = doc.find("<!-- headers:end -->");
  REQUIRE(a != std::string::npos);
  REQUIRE(b != std::string::npos);
  a = doc.find('\n', a) + 1;
  CHECK(doc.substr(a, b - a) == headers_table_markdown());
}

TEST_CASE(
    "the prompt shows every launch key the parser accepts, and every predefined name is in the "
    "prelude") {
  std::string prompt = contract_summary();
  for (const auto& k : launch_keys()) CHECK_MESSAGE(prompt.find(k + ":") != std::string::npos, k);
  for (const char* top : {"problem", "launches", "scratch"})
    CHECK_MESSAGE(std::string(contract_summary()).find(top) != std::string::npos, top);
  for (const char* name : {"int8_t", "uint64_t", "intptr_t", "uintptr_t", "size_t", "ptrdiff_t",
                           "INFINITY", "NAN", "FLT_MAX", "FLT_MIN", "DBL_MAX", "M_PI", "M_E"}) {
    CHECK_MESSAGE(prompt.find(name) != std::string::npos, name);
    CHECK_MESSAGE(std::string(kPrelude).find(name) != std::string::npos, name);
  }
}

// Every CUDA driver call in src/worker goes through the checked layer (src/worker/cuda_check.h):
// inside CU_CHECK(...), CU_RESULT(...) or CU_CLEANUP(...). The only exceptions are the two calls
// that describe errors, in cu_error_text. A new unchecked call fails here with its file and line.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace {

// The text with comments and string and character literals blanked (newlines kept, so offsets
// and line numbers stay those of the file).
std::string code_only(const std::string& s) {
  std::string out = s;
  size_t i = 0;
  auto blank = [&](size_t from, size_t to) {
    for (size_t k = from; k < to && k < out.size(); ++k)
      if (out[k] != '\n') out[k] = ' ';
  };
  while (i < s.size()) {
    if (s.compare(i, 2, "//") == 0) {
      size_t e = s.find('\n', i);
      e = e == std::string::npos ? s.size() : e;
      blank(i, e);
      i = e;
    } else if (s.compare(i, 2, "/*") == 0) {
      size_t e = s.find("*/", i + 2);
      e = e == std::string::npos ? s.size() : e + 2;
      blank(i, e);
      i = e;
    } else if (s[i] == '"' || s[i] == '\'') {
      char q = s[i];
      size_t e = i + 1;
      while (e < s.size() && s[e] != q) e += s[e] == '\\' ? 2 : 1;
      blank(i, e + 1);
      i = e + 1;
    } else {
      ++i;
    }
  }
  return out;
}

}  // namespace

TEST_CASE("every CUDA driver call in src/worker is checked") {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(KERNRL_SOURCE_DIR) / "src" / "worker";
  REQUIRE(fs::is_directory(dir));
  const std::regex call(R"(\bcu[A-Z][A-Za-z0-9_]*\s*\()");
  const std::regex macro(R"(\b(CU_CHECK|CU_RESULT|CU_CLEANUP)\s*\()");
  int files = 0, calls = 0;
  std::vector<std::string> unchecked;
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::string ext = entry.path().extension().string();
    if (ext != ".cpp" && ext != ".h") continue;
    ++files;
    std::ifstream in(entry.path());
    std::stringstream buf;
    buf << in.rdbuf();
    std::string code = code_only(buf.str());
    // The argument spans of the checking macros.
    std::vector<std::pair<size_t, size_t>> spans;
    for (std::sregex_iterator m(code.begin(), code.end(), macro), end; m != end; ++m) {
      size_t open = static_cast<size_t>(m->position() + m->length() - 1), k = open + 1;
      for (int depth = 1; k < code.size() && depth > 0; ++k)
        depth += code[k] == '(' ? 1 : code[k] == ')' ? -1 : 0;
      spans.emplace_back(open, k);
    }
    for (std::sregex_iterator m(code.begin(), code.end(), call), end; m != end; ++m) {
      size_t at = static_cast<size_t>(m->position());
      std::string name = m->str().substr(0, m->str().find_first_of(" \t\n("));
      if (entry.path().filename() == "cuda_check.cpp" &&
          (name == "cuGetErrorName" || name == "cuGetErrorString"))
        continue;
      ++calls;
      bool inside = false;
      for (const auto& [from, to] : spans) inside |= at > from && at < to;
      if (!inside)
        unchecked.push_back(entry.path().filename().string() + ":" +
                            std::to_string(1 + std::count(code.begin(), code.begin() + at, '\n')) +
                            " " + name);
    }
  }
  CHECK(files >= 10);
  CHECK(calls >= 35);
  std::string list;
  for (const auto& u : unchecked) list += u + "\n";
  INFO("unchecked driver calls:\n" << list);
  CHECK(unchecked.empty());
}

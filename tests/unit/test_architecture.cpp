// ARCHITECTURE.md's "What runs where" table against the sources: every #include of a file under
// src/ names a folder its process may include (its own row's folders, and those of the `any` row)
// and a library its row lists ("may include"; "(`x/` only)" narrows one to those folders). A new
// include across the processes' boundary, or a library the table does not allow there, fails here
// with its file and line.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

const fs::path kRoot = fs::path(KERNRL_TEST_DIR).parent_path();

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The libraries the table may name, and the include paths that are theirs.
const std::map<std::string, std::vector<std::string>>& library_headers() {
  static const std::map<std::string, std::vector<std::string>> m = {
      {"yaml-cpp", {"yaml-cpp/"}},
      {"nlohmann/json", {"nlohmann/"}},
      {"OpenSSL", {"openssl/"}},
      {"md4c", {"md4c.h"}},
      {"CLI11", {"CLI/"}},
      {"Boost.Beast and Asio", {"boost/"}},
      {"NVRTC", {"nvrtc.h"}},
      {"libseccomp", {"seccomp.h"}},
      {"Landlock", {"linux/landlock.h"}},
      {"the CUDA driver API", {"cuda.h", "cuda_fp16.h", "cuda_bf16.h", "cuda_runtime"}},
      {"cuBLAS", {"cublas"}},
      {"libtorch", {"torch/", "ATen/", "c10/"}},
  };
  return m;
}

// The library an include path belongs to ("" for the standard library and the system's headers).
std::string library_of(const std::string& path) {
  for (const auto& [lib, prefixes] : library_headers())
    for (const auto& p : prefixes)
      if (path.rfind(p, 0) == 0) return lib;
  return "";
}

struct Row {
  std::string process;
  std::vector<std::string> folders;                      // "core", "protocol", ...
  std::map<std::string, std::set<std::string>> allowed;  // library -> only these folders (empty:
                                                         // every folder of the row)
};

std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  for (size_t i = 1; i < line.size(); ++i) {
    if (line[i] == '|') {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += line[i];
    }
  }
  return out;
}

// "(`cli/` only)" -> {"cli"}.
std::set<std::string> only_folders(const std::string& item) {
  std::set<std::string> out;
  std::regex re("`([a-z_]+)/`");
  for (auto it = std::sregex_iterator(item.begin(), item.end(), re); it != std::sregex_iterator();
       ++it)
    out.insert((*it)[1]);
  return out;
}

std::vector<Row> read_table() {
  std::istringstream in(read_text(kRoot / "ARCHITECTURE.md"));
  std::vector<Row> rows;
  std::string line;
  bool in_table = false;
  while (std::getline(in, line)) {
    if (line.rfind("| process |", 0) == 0) {
      in_table = true;
      continue;
    }
    if (!in_table) continue;
    if (line.rfind("|---", 0) == 0) continue;
    if (line.rfind("|", 0) != 0) break;
    auto c = cells(line);
    REQUIRE_MESSAGE(c.size() == 3, "ARCHITECTURE.md: a table row of 3 cells: " << line);
    Row r;
    std::smatch m;
    std::string p = c[0];
    r.process = std::regex_search(p, m, std::regex("`([^`]+)`")) ? m[1].str() : "any";
    std::string folders = c[1];
    std::regex folder_re("`([a-z_]+)/`");
    for (auto it = std::sregex_iterator(folders.begin(), folders.end(), folder_re);
         it != std::sregex_iterator(); ++it)
      r.folders.push_back((*it)[1]);
    std::string libs = c[2];
    if (size_t never = libs.find("; never"); never != std::string::npos) libs.resize(never);
    // Items separated by commas outside parentheses.
    std::vector<std::string> items;
    std::string cur;
    int depth = 0;
    for (char ch : libs) {
      depth += ch == '(' ? 1 : ch == ')' ? -1 : 0;
      if (ch == ',' && depth == 0) {
        items.push_back(cur);
        cur.clear();
      } else {
        cur += ch;
      }
    }
    items.push_back(cur);
    for (std::string item : items) {
      std::set<std::string> only = only_folders(item);
      if (size_t paren = item.find('('); paren != std::string::npos) item.resize(paren);
      item = std::regex_replace(item, std::regex("^\\s+|\\s+$"), "");
      if (item == "the standard library") continue;
      if (item == "the above") {
        for (const auto& [lib, where] : rows.front().allowed) r.allowed[lib] = where;
        continue;
      }
      CHECK_MESSAGE(library_headers().count(item),
                    "ARCHITECTURE.md names a library this test does not know: '" << item << "'");
      r.allowed[item] = only;
    }
    rows.push_back(r);
  }
  return rows;
}

}  // namespace

TEST_CASE("ARCHITECTURE.md: every #include is one its process may include") {
  std::vector<Row> rows = read_table();
  REQUIRE(rows.size() >= 4);
  REQUIRE(rows.front().process == "any");
  std::map<std::string, const Row*> row_of;  // folder -> its row
  for (const Row& r : rows)
    for (const auto& f : r.folders) row_of[f] = &r;
  const Row& any = rows.front();
  std::set<std::string> any_folders(any.folders.begin(), any.folders.end());

  std::regex include_re("^\\s*#\\s*include\\s*([<\"])([^>\"]+)[>\"]");
  size_t files = 0, includes = 0;
  for (const auto& e : fs::recursive_directory_iterator(kRoot / "src")) {
    std::string ext = e.path().extension().string();
    if (!e.is_regular_file() || (ext != ".h" && ext != ".cpp" && ext != ".cu")) continue;
    std::string folder = fs::relative(e.path(), kRoot / "src").begin()->string();
    CHECK_MESSAGE(row_of.count(folder), "src/" << folder << "/ is in no row of ARCHITECTURE.md");
    if (!row_of.count(folder)) continue;
    const Row& row = *row_of[folder];
    ++files;
    std::istringstream in(read_text(e.path()));
    std::string line;
    bool in_raw_string = false;  // text of a R"( ... )" literal (a prompt's example) is no include
    for (int n = 1; std::getline(in, line); ++n) {
      if (in_raw_string) {
        in_raw_string = line.find(")\"") == std::string::npos;
        continue;
      }
      size_t raw = line.find("R\"(");
      if (raw != std::string::npos && line.find(")\"", raw + 3) == std::string::npos) {
        in_raw_string = true;
        continue;
      }
      std::smatch m;
      if (!std::regex_search(line, m, include_re)) continue;
      ++includes;
      std::string where = "src/" + fs::relative(e.path(), kRoot / "src").string() + ":" +
                          std::to_string(n) + ": " + m[2].str();
      std::string path = m[2];
      std::string first = path.substr(0, path.find('/'));
      if (m[1] == "\"" && path.find('/') != std::string::npos && row_of.count(first)) {
        bool ok = first == folder || any_folders.count(first) ||
                  (row.process != "any" && row_of[first] == &row);
        CHECK_MESSAGE(ok, where << ": " << row.process << " code includes " << first
                                << "/, which ARCHITECTURE.md does not allow it");
        continue;
      }
      std::string lib = library_of(path);
      if (lib.empty()) continue;  // the standard library, the system's headers
      bool ok = false;
      for (const Row* r : {&any, &row}) {
        auto it = r->allowed.find(lib);
        if (it != r->allowed.end() && (it->second.empty() || it->second.count(folder))) ok = true;
      }
      CHECK_MESSAGE(ok, where << ": " << lib << " is not among what ARCHITECTURE.md lets " << folder
                              << "/ include");
    }
  }
  CHECK(files > 100);
  CHECK(includes > 500);
}

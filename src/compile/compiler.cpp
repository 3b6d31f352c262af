#include "compile/compiler.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "core/hash.h"
#include "core/paths.h"
#include "core/subprocess.h"
#include "headers/builtin_headers.h"
#include "record/safe_text.h"

namespace kernrl {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string cuda_include_dir() {
  if (const char* h = std::getenv("CUDA_HOME"); h && *h) return std::string(h) + "/include";
  return KERNRL_CUDA_INCLUDE;
}

std::vector<std::string> nvrtc_options(const std::string& arch) {
  std::string inc = cuda_include_dir();
  return {"-arch=" + arch, "-std=c++17",         "-default-device",
          "-I" + inc,      "-I" + inc + "/cccl", "--pre-include=kernrl_prelude.h",
          "-DKERNRL=1"};
}

// Atomic publish: write to a unique temporary name beside the target, then rename.
void write_atomic(const fs::path& target, const std::string& data) {
  fs::path tmp = target;
  tmp += ".tmp" + std::to_string(getpid()) + "_" +
         std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id()));
  {
    std::ofstream f(tmp, std::ios::binary);
    f.write(data.data(), static_cast<std::streamsize>(data.size()));
    if (!f.flush()) throw std::runtime_error("cannot write " + tmp.string());
  }
  fs::rename(tmp, target);
}

// A directory of this process's own, created empty, for the compiler to run in.
std::string empty_directory() {
  static std::once_flag once;
  static std::string dir;
  std::call_once(once, [] {
    std::string templ = (fs::temp_directory_path() / "kernrl-nvrtc-XXXXXX").string();
    if (mkdtemp(templ.data())) {
      dir = templ;
      std::atexit([] { rmdir(dir.c_str()); });
    }
  });
  return dir.empty() ? "/nonexistent-kernrl-dir" : dir;
}

}  // namespace

// Translation phase 2: backslash-newline splices removed, exactly as NVRTC does (no blanks
// between). The newlines a splice removed are put back after the logical line, so later lines keep
// their numbers.
static std::string splice_lines(const std::string& code) {
  std::string out;
  out.reserve(code.size());
  int pending = 0;
  for (size_t i = 0; i < code.size(); ++i) {
    if (code[i] == '\\') {
      size_t j = i + 1;
      if (j < code.size() && code[j] == '\r')
        ++j;  // NVRTC splices only a backslash right before the newline
      if (j < code.size() && code[j] == '\n') {
        i = j;
        ++pending;
        continue;
      }
    }
    out += code[i];
    if (code[i] == '\n') out.append(pending, '\n'), pending = 0;
  }
  return out;
}

namespace {
bool ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// The raw string starting at `i` (at its R), or npos: `R"delim(...)delim"` with an optional
// u8/u/U/L prefix that does not continue an identifier.
size_t raw_string_end(const std::string& s, size_t i) {
  if (s[i] != 'R' || i + 1 >= s.size() || s[i + 1] != '"') return std::string::npos;
  size_t start = i;
  if (start >= 2 && s.compare(start - 2, 2, "u8") == 0)
    start -= 2;
  else if (start >= 1 && (s[start - 1] == 'u' || s[start - 1] == 'U' || s[start - 1] == 'L'))
    start -= 1;
  if (start > 0 && ident_char(s[start - 1])) return std::string::npos;
  size_t open = s.find('(', i + 2);
  if (open == std::string::npos || open - (i + 2) > 16) return std::string::npos;
  std::string delim = s.substr(i + 2, open - (i + 2));
  if (delim.find_first_of(" ()\\\t\n") != std::string::npos) return std::string::npos;
  size_t close = s.find(")" + delim + "\"", open + 1);
  return close == std::string::npos ? s.size() : close + delim.size() + 2;
}

// A quote that is a digit separator (1'000'000) rather than the start of a character literal.
bool digit_separator(const std::string& s, size_t i) {
  size_t b = i;
  while (b > 0 && (ident_char(s[b - 1]) || s[b - 1] == '.')) --b;
  return b < i && std::isdigit(static_cast<unsigned char>(s[b]));
}
}  // namespace

// What the preprocessor sees, for scanning: splices joined, comments removed, raw-string literals
// blanked (their newlines kept), and the digraph %: spelled #. Ordinary literals stay: they cannot
// span lines, so they cannot hide or fake a directive.
static std::string preprocessor_view(const std::string& original) {
  const std::string code = splice_lines(original);
  std::string out;
  out.reserve(code.size());
  enum { Code, LineComment, BlockComment, String, Char } state = Code;
  for (size_t i = 0; i < code.size(); ++i) {
    char c = code[i], next = i + 1 < code.size() ? code[i + 1] : '\0';
    switch (state) {
      case Code: {
        size_t raw_end = c == 'R' ? raw_string_end(code, i) : std::string::npos;
        if (raw_end != std::string::npos) {
          out += "\"\"";
          for (size_t k = i; k < raw_end && k < code.size(); ++k)
            if (code[k] == '\n') out += '\n';
          i = raw_end - 1;
        } else if (c == '/' && next == '/') {
          state = LineComment, ++i;
        } else if (c == '/' && next == '*') {
          state = BlockComment, ++i, out += ' ';
        } else if (c == '%' && next == ':') {
          out += '#', ++i;
        } else {
          if (c == '"') state = String;
          if (c == '\'' && !digit_separator(code, i)) state = Char;
          out += c;
        }
        break;
      }
      case LineComment:
        if (c == '\n') state = Code, out += c;
        break;
      case BlockComment:
        if (c == '*' && next == '/')
          state = Code, ++i;
        else if (c == '\n')
          out += c;
        break;
      case String:
      case Char:
        out += c;
        if (c == '\\' && next && next != '\n')
          out += next, ++i;
        else if ((state == String && c == '"') || (state == Char && c == '\'') || c == '\n')
          state = Code;
        break;
    }
  }
  return out;
}

namespace {
bool word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}
bool blank(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}
bool plain_header_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '/' ||
         c == '+' || c == '-';
}
bool bad_header_name(const std::string& name) {
  if (name.empty() || name.size() > 200 || name[0] == '/' || name.find("..") != std::string::npos)
    return true;
  for (char c : name)
    if (!plain_header_char(c)) return true;
  return false;
}
// Reads <name> or "name" at `i` (after blanks); returns false if it is not one.
bool header_name_at(const std::string& line, size_t& i, std::string& name) {
  while (i < line.size() && blank(line[i])) ++i;
  if (i >= line.size() || (line[i] != '<' && line[i] != '"')) return false;
  char close = line[i] == '<' ? '>' : '"';
  size_t end = line.find(close, i + 1);
  if (end == std::string::npos) return false;
  name = line.substr(i + 1, end - i - 1);
  i = end + 1;
  return true;
}
}  // namespace

// A friendly early error for includes that cannot work; the boundary itself is the compiler's
// sandbox (compile/sandbox.h), which this scan does not replace. Runs on what the preprocessor
// sees, so comments, line continuations and digraphs cannot hide a directive. Plain scanning,
// linear time.
std::string disallowed_include(const std::string& code, int first_line) {
  std::istringstream in(preprocessor_view(code));
  std::string line;
  const std::string rule =
      "only CUDA's headers and the standard headers kernrl provides may be included "
      "(docs/kernel-format.md)";
  for (int n = first_line; std::getline(in, line); ++n) {
    std::string where = "line " + std::to_string(n) + ": ";
    // __has_include only as __has_include(<plain name>): any other use (a macro, a pasted token) is
    // refused.
    const std::string only =
        where + "__has_include is allowed only as __has_include(<header>) with a plain header name";
    for (size_t at = line.find("__has_"); at != std::string::npos;
         at = line.find("__has_", at + 6)) {
      size_t after = at + 6;
      if (after >= line.size() || !word_char(line[after]))
        return only;  // a pasted __has_ ## include
    }
    for (size_t at = line.find("has_include"); at != std::string::npos;
         at = line.find("has_include", at + 11)) {
      size_t end = at + 11;
      bool exact = at >= 2 && line.compare(at - 2, 2, "__") == 0 &&
                   (at == 2 || !word_char(line[at - 3])) &&
                   (end >= line.size() || !word_char(line[end]));
      if (!exact) return only;
      while (end < line.size() && blank(line[end])) ++end;
      std::string name;
      size_t j = end + 1;
      if (end >= line.size() || line[end] != '(' || !header_name_at(line, j, name)) return only;
      if (bad_header_name(name))
        return where + "__has_include of \"" + name.substr(0, 200) + "\" is not allowed";
    }
    size_t i = 0;
    while (i < line.size() && blank(line[i])) ++i;
    if (i >= line.size() || line[i] != '#') continue;
    ++i;
    while (i < line.size() && blank(line[i])) ++i;
    size_t w = i;
    while (i < line.size() && word_char(line[i])) ++i;
    std::string directive = line.substr(w, i - w);
    if (directive != "include" && directive != "include_next" && directive != "import") continue;
    std::string name;
    if (!header_name_at(line, i, name))
      return where + "#" + directive + " must name a header in <> or \"\"";
    if (directive != "include" || bad_header_name(name))
      return where + "#" + directive + " \"" + name.substr(0, 200) + "\" is not allowed: " + rule;
  }
  return "";
}

std::string nvrtc_version() {
  static std::once_flag once;
  static std::string version = "unknown";
  std::call_once(once, [] {
    auto r = run_process({helper_exe("kernrl-nvrtc").string(), "--version"}, "", 30);
    try {
      version = json::parse(r.out).at("nvrtc");
    } catch (...) {
    }
  });
  return version;
}

namespace {

constexpr size_t kMaxLogBytes = size_t{1}
                                << 20;  // NVRTC's log beyond this is cut by the compiler process
constexpr size_t kMaxCubinBytes = size_t{64}
                                  << 20;  // a larger cubin is a compile error, never cached

// The readable directories of the sandbox: CUDA's include tree, resolved (it is often a symlink).
std::vector<std::string> sandbox_dirs() {
  std::error_code ec;
  fs::path real = fs::canonical(cuda_include_dir(), ec);
  return {ec ? cuda_include_dir() : real.string()};
}

// The name diagnostics show in `#line`: the file's own name, reduced to characters that cannot end
// the directive's string or start a new line.
std::string line_directive_name(const std::string& filename) {
  std::string name = fs::path(filename).filename().string(), out;
  for (char c : name.substr(0, 200))
    out += (std::isalnum(static_cast<unsigned char>(c)) || std::strchr("._-+ ", c)) ? c : '_';
  return out.empty() ? "kernel.cu" : out;
}

SpawnOptions compiler_spawn_options(const Config& cfg) {
  SpawnOptions so;
  so.address_space_limit_mb = cfg.compile_memory_limit_mb;
  so.cwd = empty_directory();
  so.clear_env = true;  // the compiler sees none of kernrl's environment
  so.no_files = true;
  so.max_output_bytes = kMaxCubinBytes + kMaxLogBytes + (1 << 20);
  return so;
}

// Keeps the cache under cfg.cache_max_mb: least recently used entries (by the time of the cubin,
// refreshed on every hit) go first, down to 80% of the bound. Checked every 32 stores per process.
void trim_cache(const Config& cfg) {
  static std::mutex mu;
  static int stores = 0;
  std::lock_guard<std::mutex> lock(mu);
  if (++stores % 32 != 1) return;
  trim_compile_cache(cfg.resolved_cache_dir(), static_cast<uintmax_t>(cfg.cache_max_mb) << 20);
}

// The built-in headers (prelude included) are part of every compile's input.
const std::string& builtin_headers_hash() {
  static const std::string hash = [] {
    std::string all;
    for (const auto& h : builtin_headers()) all += h.name + '\0' + h.text + '\0';
    return sha256_hex(all);
  }();
  return hash;
}

}  // namespace

uintmax_t trim_compile_cache(const fs::path& dir, uintmax_t max_bytes) {
  struct Entry {
    fs::file_time_type when;
    uintmax_t bytes;
    fs::path cubin;
  };
  std::vector<Entry> entries;
  uintmax_t total = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (!it->is_regular_file(ec) || it->path().extension() != ".cubin") continue;
    uintmax_t b = it->file_size(ec);
    entries.push_back({it->last_write_time(ec), b, it->path()});
    total += b;
  }
  if (total <= max_bytes) return total;
  std::sort(entries.begin(), entries.end(),
            [](const Entry& x, const Entry& y) { return x.when < y.when; });
  for (const auto& e : entries) {
    if (total <= max_bytes / 5 * 4) break;
    fs::path meta = e.cubin;
    meta.replace_extension(".json");
    fs::remove(meta, ec);
    fs::remove(e.cubin, ec);
    total -= e.bytes;
  }
  return total;
}

std::string sandbox_check(const Config& cfg) {
  if (!cfg.compile_sandbox) return "";
  static std::mutex mu;
  static std::string verdict;
  static bool checked = false;
  std::lock_guard<std::mutex> lock(mu);
  if (checked) return verdict;
  std::vector<std::string> argv = {helper_exe("kernrl-nvrtc").string(), "--check-sandbox"};
  for (const auto& d : sandbox_dirs()) argv.push_back(d);
  ProcessResult pr = run_process(argv, "", 30, compiler_spawn_options(cfg));
  try {
    json j = json::parse(pr.out);
    if (!j.at("ok").get<bool>()) verdict = j.value("error", "unknown failure");
  } catch (...) {
    verdict = "the sandbox check of kernrl-nvrtc failed (exit " + std::to_string(pr.exit_code) +
              ", signal " + std::to_string(pr.signal) + ")";
  }
  checked = true;
  return verdict;
}

void require_sandbox(const Config& cfg) {
  std::string why = sandbox_check(cfg);
  if (!why.empty())
    throw SandboxError(
        "the compiler's sandbox cannot be set up: " + why +
        ". kernrl compiles submissions only inside it (docs/security.md); on a machine where every "
        "submission is trusted, set `compile: {sandbox: false}` in a --config file to compile "
        "without it");
}

CompileResult compile_kernel(const ExtractedSource& src, const std::string& filename,
                             const std::string& arch, const std::vector<std::string>& kernel_names,
                             const Config& cfg) {
  auto t0 = std::chrono::steady_clock::now();
  CompileResult res;
  res.arch = arch;
  res.nvrtc_version = nvrtc_version();
  auto finish = [&]() -> CompileResult {
    res.ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return res;
  };
  // Diagnostics name the submitted file and its own line numbers (markdown answers included).
  std::string display = line_directive_name(filename);
  // NVRTC reads UTF-8: bytes that are not (a Latin-1 comment) go to it as octal escapes, which keep
  // comments inert and literals the same bytes.
  std::string code = is_valid_utf8(src.code) ? src.code : octal_escape_invalid_utf8(src.code);
  std::string source = "#line " + std::to_string(src.first_line) + " \"" + display + "\"\n" + code;
  auto options = nvrtc_options(arch);
  if (std::string bad = disallowed_include(src.code, src.first_line); !bad.empty()) {
    res.status = CompileResult::Error;
    res.error = bad;
    return finish();
  }
  require_sandbox(cfg);

  json key_parts = {{"source", source},
                    {"options", options},
                    {"names", kernel_names},
                    {"nvrtc", res.nvrtc_version},
                    {"headers", builtin_headers_hash()},
                    {"kernrl_cache", 3}};
  std::string key = sha256_hex(key_parts.dump(-1, ' ', false, json::error_handler_t::replace));
  fs::path dir = cfg.resolved_cache_dir() / key.substr(0, 2);
  fs::path cubin = dir / (key + ".cubin"), meta = dir / (key + ".json");
  std::error_code ec;
  fs::create_directories(dir, ec);

  if (fs::exists(meta) && fs::exists(cubin)) {
    try {
      json m = json::parse(read_file(meta.string()));
      res.status = CompileResult::Ok;
      res.cached = true;
      res.log = m.value("log", "");
      res.log_bytes = m.value("log_bytes", res.log.size());
      res.lowered = m.at("lowered").get<std::map<std::string, std::string>>();
      res.cubin_path = cubin.string();
      fs::last_write_time(cubin, fs::file_time_type::clock::now(),
                          ec);  // recently used: kept by trim_cache
      return finish();
    } catch (...) {
      // A damaged cache entry is just a miss.
    }
  }

  json req = {{"source", source},
              {"filename", display},
              {"options", options},
              {"names", kernel_names},
              {"include_dirs", sandbox_dirs()},
              {"sandbox", cfg.compile_sandbox},
              {"max_log_bytes", kMaxLogBytes},
              {"max_cubin_bytes", kMaxCubinBytes}};
  ProcessResult pr = run_process({helper_exe("kernrl-nvrtc").string()},
                                 req.dump(-1, ' ', false, json::error_handler_t::replace),
                                 cfg.compile_timeout_s, compiler_spawn_options(cfg));
  if (pr.timed_out) {
    res.status = CompileResult::Timeout;
    res.error = "compile did not finish within " +
                std::to_string(static_cast<int>(cfg.compile_timeout_s)) + " s and was cancelled";
    return finish();
  }
  json answer;
  std::string cubin_bytes;
  try {
    size_t nl = pr.out.find('\n');
    answer = json::parse(pr.out.substr(0, nl));
    size_t n = answer.value("cubin_bytes", size_t{0});
    if (n) {
      if (nl == std::string::npos || pr.out.size() - nl - 1 != n)
        throw std::runtime_error("truncated cubin");
      cubin_bytes = pr.out.substr(nl + 1);
    }
  } catch (...) {
    res.status = CompileResult::Crashed;
    res.error =
        pr.output_overflow ? "the compiler process wrote more than the output limit and was stopped"
        : pr.signal ? "the compiler process was killed by signal " + std::to_string(pr.signal) +
                          " (out of memory under the " +
                          std::to_string(cfg.compile_memory_limit_mb) + " MB limit?)"
                    : "the compiler process failed (exit " + std::to_string(pr.exit_code) + ")";
    return finish();
  }
  if (answer.contains("sandbox_error"))
    throw SandboxError("the compiler's sandbox cannot be set up: " +
                       answer["sandbox_error"].get<std::string>());
  res.log = answer.value("log", "");
  res.log_bytes = answer.value("log_bytes", res.log.size());
  if (!answer.value("ok", false)) {
    res.status = CompileResult::Error;
    res.error = answer.value("error", "compile failed");
    return finish();
  }
  res.lowered = answer.at("lowered").get<std::map<std::string, std::string>>();
  try {
    write_atomic(cubin, cubin_bytes);
    write_atomic(meta, json{{"log", res.log},
                            {"log_bytes", res.log_bytes},
                            {"lowered", res.lowered},
                            {"arch", arch}}
                           .dump(-1, ' ', false, json::error_handler_t::replace));
  } catch (const std::exception& e) {
    res.status = CompileResult::Error;
    res.error = "cannot store the cubin in " + dir.string() + ": " + e.what();
    return finish();
  }
  trim_cache(cfg);
  res.status = CompileResult::Ok;
  res.cubin_path = cubin.string();
  return finish();
}

}  // namespace kernrl

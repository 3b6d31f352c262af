#include "triton_compile/child.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "core/paths.h"
#include "core/subprocess.h"

namespace kernrl {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr size_t kMaxAnswerBytes = size_t{64} << 20;

std::string launcher() {
  return helper_exe("kernrl-triton").string();
}
std::string helper_script() {
  return helper_exe("kernrl_triton.py").string();
}
std::string server_script() {
  return helper_exe("kernrl_triton_server.py").string();
}

// Compiles one server serves before it is replaced (whatever a compile left running ends with it).
constexpr int kServerCompiles = 64;

// How many of one file's Triton compiles (kernels, size sets, autotune configs) run at once: the
// cores, at most 8.
int compile_jobs() {
  return static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 8u));
}

// A fresh private directory for one child (removed when the child is done).
std::string private_dir() {
  std::string templ = (fs::temp_directory_path() / "kernrl-triton-XXXXXX").string();
  if (!mkdtemp(templ.data())) throw std::runtime_error("cannot create a temporary directory");
  return templ;
}

std::vector<std::string> split_path(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ':'))
    if (!item.empty()) out.push_back(item);
  return out;
}

std::string canonical_or_empty(const std::string& p) {
  std::error_code ec;
  fs::path c = fs::canonical(p, ec);
  return ec ? "" : c.string();
}

// The launcher's --setup without "tmp": what the sandbox lets Python read and execute.
json base_setup(const Config& cfg, const std::string& python, const std::string& ptxas) {
  std::vector<std::string> read_dirs, read_files, exec_files;
  auto add_dir = [&](const std::string& d) {
    std::string c = canonical_or_empty(d);
    if (!c.empty() && fs::is_directory(c)) read_dirs.push_back(c);
  };
  // The interpreter's installation (its prefix: /usr, /usr/local, a virtual environment) and the
  // system's shared libraries.
  fs::path prefix = fs::path(python).parent_path().parent_path();
  add_dir(prefix.string());
  fs::path real_prefix = fs::path(canonical_or_empty(python)).parent_path().parent_path();
  if (!real_prefix.empty()) add_dir(real_prefix.string());
  for (const char* d : {"/lib", "/lib64", "/usr/lib", "/usr/lib64", "/usr/local/lib"}) add_dir(d);
  for (const auto& d : split_path(cfg.triton_path)) add_dir(d);
  for (const char* f : {"/etc/ld.so.cache", "/dev/urandom"})
    if (fs::exists(f)) read_files.push_back(f);
  read_files.push_back(canonical_or_empty(helper_script()));
  if (std::string server = canonical_or_empty(server_script()); !server.empty())
    read_files.push_back(server);
  for (const char* module : {"wrapper_plan.py", "shape_torch.py", "shape_nn.py"})
    if (std::string c = canonical_or_empty(helper_exe(module).string()); !c.empty())
      read_files.push_back(c);
  exec_files.push_back(canonical_or_empty(python));
  for (const char* loader : {"/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1"})
    if (std::string c = canonical_or_empty(loader); !c.empty()) exec_files.push_back(c);
  if (!ptxas.empty()) exec_files.push_back(canonical_or_empty(ptxas));
  std::string pythonpath;
  for (const auto& d : split_path(cfg.triton_path))
    pythonpath += (pythonpath.empty() ? "" : ":") + canonical_or_empty(d);
  return {{"python", python},
          {"script", canonical_or_empty(helper_script())},
          {"read_dirs", read_dirs},
          {"read_files", read_files},
          {"exec_files", exec_files},
          {"pythonpath", pythonpath},
          {"ptxas", ptxas}};
}

SpawnOptions spawn_options(const Config& cfg, const std::string& tmp) {
  SpawnOptions so;
  so.address_space_limit_mb = cfg.triton_memory_limit_mb;
  so.cwd = tmp;
  so.clear_env = true;
  so.file_size_limit_mb = 256;
  so.stderr_file = tmp + "/stderr.log";
  so.max_output_bytes = kMaxAnswerBytes;
  return so;
}

std::string tail_of(const std::string& file, size_t n = 8000) {
  std::ifstream in(file, std::ios::binary);
  std::string s((std::istreambuf_iterator<char>(in)), {});
  return s.size() > n ? s.substr(s.size() - n) : s;
}

// Runs the launcher once with `mode` (--discover, --check-sandbox) in a private directory.
json run_once(const Config& cfg, json setup, const std::string& mode, std::string* log) {
  std::string tmp = private_dir();
  setup["tmp"] = tmp;
  ProcessResult pr =
      run_process({launcher(), "--setup", setup.dump(), mode}, "", 60, spawn_options(cfg, tmp));
  if (log) *log = tail_of(tmp + "/stderr.log");
  std::error_code ec;
  fs::remove_all(tmp, ec);
  size_t nl = pr.out.find('\n');
  try {
    return json::parse(pr.out.substr(0, nl));
  } catch (...) {
    return {{"ok", false},
            {"error", pr.exit_code == 127
                          ? "cannot execute " + launcher()
                          : "kernrl-triton failed (exit " + std::to_string(pr.exit_code) +
                                ", signal " + std::to_string(pr.signal) + ")"}};
  }
}

std::string how_to_point() {
  return "point kernrl at a Python that has Triton with `triton: {python: /path/to/python3}` in a "
         "--config file or KERNRL_TRITON_PYTHON=/path/to/python3 (docs/kernel-format.md, "
         "\"Triton kernels\")";
}

// A compile server (kernrl_triton_server.py in the sandbox): Triton imported and warmed up, a
// forked process per compile, one compile at a time.
struct Server {
  std::unique_ptr<LineProcess> proc = std::make_unique<LineProcess>();
  std::string tmp;
  bool ready = false;  // its ready line has been read
  int compiles = 0;
  ~Server() {
    proc.reset();  // kills its process group: the server and whatever its compiles started
    std::error_code ec;
    if (!tmp.empty()) fs::remove_all(tmp, ec);
  }
};

std::unique_ptr<Server> start_server(const Config& cfg, const TritonInstall& t, int arch) {
  auto s = std::make_unique<Server>();
  s->tmp = private_dir();
  json setup = t.setup;
  setup["tmp"] = s->tmp;
  setup["script"] = canonical_or_empty(server_script());
  json profile = {{"read_dirs", t.setup["read_dirs"]},
                  {"read_files", t.setup["read_files"]},
                  {"exec_files", t.setup["exec_files"]}};
  setup["script_args"] = {"--profile",          profile.dump(), "--arch",
                          std::to_string(arch), "--jobs",       std::to_string(compile_jobs())};
  s->proc->start({launcher(), "--setup", setup.dump()}, spawn_options(cfg, s->tmp));
  return s;
}

// Servers waiting for a compile: started as compiles need them, kept (at most triton.pool) for
// the next ones.
class Pool {
 public:
  std::unique_ptr<Server> take(const Config& cfg, const TritonInstall& t, int arch) {
    {
      std::lock_guard<std::mutex> l(mu_);
      if (!idle_.empty()) {
        std::unique_ptr<Server> s = std::move(idle_.back());
        idle_.pop_back();
        return s;
      }
    }
    return start_server(cfg, t, arch);
  }
  // A server whose compile ended as expected; one that has served kServerCompiles, or beyond
  // triton.pool idle ones, is stopped.
  void give_back(std::unique_ptr<Server> s, const Config& cfg) {
    if (s->compiles >= kServerCompiles) return;
    std::lock_guard<std::mutex> l(mu_);
    if (static_cast<int>(idle_.size()) < cfg.triton_pool) idle_.push_back(std::move(s));
  }
  void clear() {
    std::lock_guard<std::mutex> l(mu_);
    idle_.clear();
  }

 private:
  std::mutex mu_;
  std::vector<std::unique_ptr<Server>> idle_;
};

Pool& pool() {
  static Pool* p = [] {
    auto* made = new Pool;
    std::atexit([] { pool().clear(); });
    return made;
  }();
  return *p;
}

std::string how_it_ended(int status) {
  return status < 0 ? "signal " + std::to_string(-status) : "exit " + std::to_string(status);
}

}  // namespace

std::vector<std::string> triton_pythons(const Config& cfg) {
  if (!cfg.triton_python.empty()) return {cfg.triton_python};
  if (const char* e = std::getenv("KERNRL_TRITON_PYTHON"); e && *e) return {e};
  std::vector<std::string> found;
  // By the path as found, not the file it links to: a virtual environment's python3 links to
  // the system's interpreter but runs with the environment's packages.
  auto add = [&](const std::string& p) {
    if (access(p.c_str(), X_OK) != 0) return;
    std::string n = std::filesystem::path(p).lexically_normal().string();
    if (std::find(found.begin(), found.end(), n) == found.end()) found.push_back(n);
  };
  add("/usr/bin/python3");
  add("/usr/local/bin/python3");
  // Then python3 as the shell would find it (a conda or virtual environment's).
  if (const char* path = std::getenv("PATH")) {
    std::string dirs = path;
    for (size_t a = 0; a <= dirs.size();) {
      size_t b = dirs.find(':', a);
      if (b == std::string::npos) b = dirs.size();
      // Absolute folders only, and none that anyone may write into (a python3 planted there).
      std::string dir = dirs.substr(a, b > a ? b - a : 0);
      struct stat st {};
      if (!dir.empty() && dir[0] == '/' && stat(dir.c_str(), &st) == 0 && !(st.st_mode & S_IWOTH))
        add(dir + "/python3");
      a = b + 1;
    }
  }
  return found;
}

std::string triton_python(const Config& cfg) {
  auto all = triton_pythons(cfg);
  return all.empty() ? "" : all.front();
}

const TritonInstall& triton_install(const Config& cfg) {
  static std::mutex mu;
  static std::map<std::string, TritonInstall> found;
  std::vector<std::string> pythons = triton_pythons(cfg);
  std::lock_guard<std::mutex> l(mu);
  std::string key;
  for (const auto& p : pythons) key += p + "\n";
  key += cfg.triton_path;
  if (auto it = found.find(key); it != found.end()) return it->second;
  if (pythons.empty())
    throw TritonUnavailable("no Python found for Triton kernels: " + how_to_point());
  // The first Python (as configured, else of those found) that has Triton and its ptxas.
  std::string python, failures;
  json d;
  for (const auto& p : pythons) {
    if (access(p.c_str(), X_OK) != 0) {
      failures += (failures.empty() ? "" : "; ") + p + " cannot be executed";
      continue;
    }
    std::string log;
    d = run_once(cfg, base_setup(cfg, p, ""), "--discover", &log);
    if (d.contains("sandbox_error"))
      throw SandboxError("the Triton compiler's sandbox cannot be set up: " +
                         d["sandbox_error"].get<std::string>());
    if (d.contains("triton") && d.value("error", "").empty() && d.contains("ptxas")) {
      python = p;
      break;
    }
    std::string why = d.value("error", "");
    if (why.empty() && d.contains("triton")) why = "Triton has no bundled ptxas";
    if (why.empty()) why = "no answer";
    failures += (failures.empty() ? "" : "; ") + p + " cannot compile Triton kernels (" + why +
                ")" + (log.empty() ? "" : " [" + log + "]");
  }
  if (python.empty()) throw TritonUnavailable(failures + ": " + how_to_point());
  TritonInstall t;
  t.python = python;
  t.version = d["triton"];
  t.dir = d.value("triton_dir", "");
  t.ptxas = d["ptxas"];
  t.setup = base_setup(cfg, python, t.ptxas);
  if (!t.dir.empty()) {
    auto dirs = t.setup["read_dirs"].get<std::vector<std::string>>();
    dirs.push_back(canonical_or_empty(t.dir));
    t.setup["read_dirs"] = dirs;
  }
  return found.emplace(key, t).first->second;
}

json triton_sandbox_check(const Config& cfg) {
  const TritonInstall& t = triton_install(cfg);
  return run_once(cfg, t.setup, "--check-sandbox", nullptr);
}

void require_triton_sandbox(const Config& cfg) {
  static std::mutex mu;
  static std::map<std::string, std::string> verdicts;
  std::lock_guard<std::mutex> l(mu);
  std::string key = triton_install(cfg).python + "\n" + cfg.triton_path;
  auto it = verdicts.find(key);
  if (it == verdicts.end()) {
    json c = triton_sandbox_check(cfg);
    std::string why = c.value("ok", false) ? "" : c.value("error", "unknown failure");
    if (c.contains("sandbox_error")) why = c["sandbox_error"];
    it = verdicts.emplace(key, why).first;
  }
  if (!it->second.empty())
    throw SandboxError("the Triton compiler's sandbox cannot be set up: " + it->second +
                       ". kernrl compiles Triton kernels only inside it (docs/security.md)");
}

TritonChildResult run_triton(const json& request, const Config& cfg) {
  using Clock = std::chrono::steady_clock;
  TritonChildResult r;
  const TritonInstall& t = triton_install(cfg);
  auto start = Clock::now();
  std::unique_ptr<Server> s = pool().take(cfg, t, request.value("arch", 90));
  auto left = [&] {
    return cfg.triton_timeout_s - std::chrono::duration<double>(Clock::now() - start).count();
  };
  // The server is stopped (with whatever the compile started) and not used again.
  auto fail = [&](TritonChildResult::Outcome o, const std::string& why) {
    bool timed_out = s->proc->timed_out();
    s->proc->kill_and_reap();
    r.outcome = timed_out ? TritonChildResult::Timeout : o;
    r.error = timed_out ? "the Triton compile did not finish within " +
                              std::to_string(static_cast<int>(cfg.triton_timeout_s)) +
                              " s and was cancelled"
                        : why;
    if (r.log.empty()) r.log = tail_of(s->tmp + "/stderr.log");
    return r;
  };
  auto parse = [](const std::string& line) {
    json j = json::parse(line, nullptr, false);
    return j.is_object() ? j : json();
  };
  if (!s->ready) {
    std::optional<std::string> ready = s->proc->read_line(left());
    r.wait_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    if (!ready)
      return fail(TritonChildResult::Crashed, "the Triton compiler ended before it was ready");
    json j = parse(*ready);
    if (j.contains("sandbox_error")) {
      s->proc->kill_and_reap();
      throw SandboxError("the Triton compiler's sandbox cannot be set up: " +
                         j["sandbox_error"].get<std::string>());
    }
    if (!j.value("ready", false))
      return fail(TritonChildResult::Crashed,
                  j.value("error", "the Triton compiler did not start"));
    if (j.contains("import_ms") && j["import_ms"].is_number())
      r.import_ms = j["import_ms"].get<double>();
    if (j.contains("warm_up_ms") && j["warm_up_ms"].is_number())
      r.warm_up_ms = j["warm_up_ms"].get<double>();
    s->ready = true;
  }
  ++s->compiles;
  if (!s->proc->send_line(request.dump()))
    return fail(TritonChildResult::Crashed, "the Triton compiler ended before the request");
  std::optional<std::string> line = s->proc->read_line(std::max(0.0, left()));
  if (!line)
    return fail(TritonChildResult::Crashed, "the Triton compile server died during a compile");
  json first = parse(*line);
  if (first.is_null())
    return fail(TritonChildResult::Crashed, "the Triton compiler's answer is not JSON");
  if (first.value("done", false)) {  // the compile's process died without an answer
    r.log = first.value("log", "");
    r.outcome = TritonChildResult::Crashed;
    r.error = "the Triton compiler died without an answer (" +
              how_it_ended(first.value("status", 0)) + "; out of memory under the " +
              std::to_string(cfg.triton_memory_limit_mb) + " MB limit, or killed?)";
    pool().give_back(std::move(s), cfg);
    return r;
  }
  if (first.contains("sandbox_error")) {
    s->proc->kill_and_reap();
    throw SandboxError("the Triton compiler's sandbox cannot be set up: " +
                       first["sandbox_error"].get<std::string>());
  }
  r.answer = std::move(first);
  r.outcome = TritonChildResult::Answered;
  std::optional<std::string> trailer = s->proc->read_line(std::max(0.0, left()));
  json done = trailer ? parse(*trailer) : json();
  if (!done.value("done", false)) {  // the answer stands; the server is not trusted again
    s->proc->kill_and_reap();
    return r;
  }
  r.log = done.value("log", "");
  pool().give_back(std::move(s), cfg);
  return r;
}

}  // namespace kernrl

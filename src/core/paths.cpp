#include "core/paths.h"

#include <cstdlib>

#include "core/suite_paths.h"

namespace kernrl {
namespace fs = std::filesystem;

fs::path exe_dir() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::current_path() : self.parent_path();
}

fs::path data_dir() {
  if (const char* h = std::getenv("KERNRL_HOME"); h && *h) return h;
  for (const fs::path& p : {exe_dir() / ".." / "share" / "kernrl", exe_dir() / ".."})
    if (fs::exists(p / "problems") && fs::exists(p / "configs")) return fs::weakly_canonical(p);
  return KERNRL_SOURCE_DIR;
}

fs::path problems_dir() {
  if (const char* p = std::getenv("KERNRL_PROBLEMS"); p && *p) return p;
  return data_dir() / "problems";
}

fs::path baselines_dir() {
  if (const char* s = std::getenv("KERNRL_SUITE"); s && *s) return fs::path(s) / "baselines";
  return data_dir() / "baselines";
}

fs::path suites_dir() {
  if (const char* s = std::getenv("KERNRL_SUITES"); s && *s) return s;
  if (const char* x = std::getenv("XDG_DATA_HOME"); x && *x)
    return fs::path(x) / "kernrl" / "suites";
  const char* home = std::getenv("HOME");
  return fs::path(home && *home ? home : ".") / ".local" / "share" / "kernrl" / "suites";
}

fs::path find_suite(const std::string& name_or_dir) {
  if (name_or_dir.empty()) return {};
  std::error_code ec;
  fs::path dir = name_or_dir;
  if (!fs::is_directory(dir / "problems", ec)) dir = suites_dir() / name_or_dir;
  if (!fs::is_directory(dir / "problems", ec)) return {};
  return fs::absolute(dir);
}

fs::path helper_exe(const std::string& name) {
  // Beside the executable (a build tree), else an installed tree's libexec/kernrl.
  fs::path beside = exe_dir() / name;
  fs::path installed = (exe_dir() / ".." / "libexec" / "kernrl" / name).lexically_normal();
  std::error_code ec;
  if (!fs::exists(beside, ec) && fs::exists(installed, ec)) return installed;
  return beside;
}

}  // namespace kernrl

#include "core/config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <regex>
#include <set>

#include "core/paths.h"
#include "core/yaml_guard.h"

namespace kernrl {
namespace fs = std::filesystem;

namespace {

constexpr size_t kMaxConfigBytes = 1 << 20;

// The key checks of one config text. Every error is "ORIGIN:LINE: section.key: why (got 'text')".
class Reader {
 public:
  explicit Reader(const std::string& origin) : origin_(origin) {}

  [[noreturn]] void fail(const YAML::Node& n, const std::string& why) const {
    std::string where = origin_;
    if (n.IsDefined() && n.Mark().line >= 0) where += ":" + std::to_string(n.Mark().line + 1);
    throw SpecError(where + ": " + why);
  }
  [[noreturn]] void fail_at(int line, const std::string& why) const {
    throw SpecError(origin_ + (line >= 0 ? ":" + std::to_string(line + 1) : "") + ": " + why);
  }

  static std::string shown(const YAML::Node& n) {
    if (!n.IsScalar()) return n.IsNull() ? "nothing" : n.IsSequence() ? "a list" : "a mapping";
    std::string s = n.Scalar();
    if (s.size() > 40) s = s.substr(0, 40) + "...";
    return "'" + s + "'";
  }

  // An integer in [lo, hi].
  void integer(const YAML::Node& sec, const std::string& name, const char* key, int64_t lo,
               int64_t hi, int64_t& out) const {
    YAML::Node n = sec[key];
    if (!n) return;
    int64_t v = 0;
    if (!n.IsScalar()) fail(n, name + ": expected an integer, got " + shown(n));
    try {
      v = n.as<int64_t>();
    } catch (const YAML::Exception&) {
      fail(n, name + ": expected an integer from " + std::to_string(lo) + " to " +
                  std::to_string(hi) + ", got " + shown(n));
    }
    if (v < lo || v > hi)
      fail(n, name + ": must be from " + std::to_string(lo) + " to " + std::to_string(hi) +
                  " (got " + n.Scalar() + ")");
    out = v;
  }
  void integer(const YAML::Node& sec, const std::string& name, const char* key, int64_t lo,
               int64_t hi, int& out) const {
    int64_t v = out;
    integer(sec, name, key, lo, hi, v);
    out = static_cast<int>(v);
  }

  // A finite number in (lo, hi] (lo_open) or [lo, hi]. NaN and infinities never pass.
  void number(const YAML::Node& sec, const std::string& name, const char* key, double lo,
              bool lo_open, double hi, double& out) const {
    YAML::Node n = sec[key];
    if (!n) return;
    std::string range =
        std::string(lo_open ? "greater than " : "at least ") + fmt(lo) + " and at most " + fmt(hi);
    if (!n.IsScalar()) fail(n, name + ": expected a number " + range + ", got " + shown(n));
    double v = 0;
    try {
      v = n.as<double>();
    } catch (const YAML::Exception&) {
      fail(n, name + ": expected a number " + range + ", got " + shown(n));
    }
    if (!std::isfinite(v) || (lo_open ? !(v > lo) : !(v >= lo)) || !(v <= hi))
      fail(n, name + ": must be a number " + range + " (got " + n.Scalar() + ")");
    out = v;
  }

  void boolean(const YAML::Node& sec, const std::string& name, const char* key, bool& out) const {
    YAML::Node n = sec[key];
    if (!n) return;
    try {
      if (!n.IsScalar()) throw YAML::Exception(YAML::Mark::null_mark(), "");
      out = n.as<bool>();
    } catch (const YAML::Exception&) {
      fail(n, name + ": expected true or false, got " + shown(n));
    }
  }

  // A string of at most 4096 bytes without NUL; `null_is_empty`: a missing value reads as "".
  void text(const YAML::Node& sec, const std::string& name, const char* key, bool null_is_empty,
            std::string& out) const {
    YAML::Node n = sec[key];
    if (!n) return;
    if (n.IsNull() && null_is_empty) {
      out.clear();
      return;
    }
    if (!n.IsScalar()) fail(n, name + ": expected a string, got " + shown(n));
    const std::string& s = n.Scalar();
    if (s.size() > 4096 || s.find('\0') != std::string::npos)
      fail(n, name + ": expected a string of at most 4096 bytes without NUL");
    out = s;
  }

 private:
  static std::string fmt(double v) {
    char b[40];
    std::snprintf(b, sizeof b, "%g", v);
    return b;
  }
  std::string origin_;
};

bool arch_name(const std::string& s) {
  static const std::regex re("(sm|compute)_[0-9]{2,3}[a-z]?");
  return std::regex_match(s, re);
}

}  // namespace

void Config::merge_file(const fs::path& file) {
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) {
    if (fs::exists(file, ec))
      throw SpecError(file.string() + ": cannot read config file: not a regular file");
    throw SpecError(file.string() + ": cannot read config file: no such file");
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) throw SpecError(file.string() + ": cannot read config file: " + std::strerror(errno));
  std::string text;
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxConfigBytes)
      throw SpecError(file.string() + ": config file larger than 1 MiB");
  }
  if (in.bad()) throw SpecError(file.string() + ": cannot read config file");
  merge_text(text, file.string());
}

Config Config::from_yaml_text(const std::string& text, const std::string& origin) {
  Config c;
  c.merge_text(text, origin);
  return c;
}

void Config::merge_text(const std::string& text, const std::string& origin) {
  if (text.size() > kMaxConfigBytes) throw SpecError(origin + ": config larger than 1 MiB");
  Reader rd(origin);
  YAML::Node root;
  try {
    check_yaml_shape(text, YamlLimits{16, 10000});  // no aliases, bounded depth and size
    root = YAML::Load(text);
  } catch (const YamlShapeError& e) {
    rd.fail_at(e.line, e.what());
  } catch (const YAML::Exception& e) {
    rd.fail_at(e.mark.line, e.msg);
  }
  // Everything is checked on a copy first: a rejected file changes nothing.
  Config next = *this;
  try {
    if (root.IsNull()) return;
    if (!root.IsMap())
      rd.fail(root, "a config is a mapping of sections (correctness, timing, ...), got " +
                        Reader::shown(root));
    static const std::map<std::string, std::vector<std::string>> known = {
        {"correctness", {"trials"}},
        {"timing",
         {"warmup", "min_samples", "max_samples", "target_rel_stderr", "time_cap_s", "input_sets",
          "flush_l2", "kernel_baseline"}},
        {"timeouts",
         {"compile_s", "run_s", "plan_run_s", "plan_run_factor", "plan_run_floor_s",
          "fault_grace_s"}},
        {"workers", {"spare", "spares"}},
        {"compile",
         {"arch", "fallback_arch", "memory_limit_mb", "cache_dir", "cache_max_mb", "sandbox",
          "server", "pch_sets"}},
        {"triton", {"python", "path", "timeout_s", "memory_limit_mb", "pool"}},
        {"tolerance_overrides", {}},
        {"reward", {"preset"}},
        {"records", {"compile_log_bytes", "worker_log_bytes", "message_bytes"}}};
    std::set<std::string> sections;
    for (const auto& kv : root) {
      if (!kv.first.IsScalar()) rd.fail(kv.first, "a section name must be a plain word");
      const std::string& name = kv.first.Scalar();
      auto it = known.find(name);
      if (it == known.end()) rd.fail(kv.first, "unknown config section '" + name + "'");
      if (!sections.insert(name).second) rd.fail(kv.first, "section '" + name + "' appears twice");
      if (kv.second.IsNull()) continue;
      if (!kv.second.IsMap())
        rd.fail(kv.second, name + ": expected a mapping of keys, got " + Reader::shown(kv.second));
      if (name == "tolerance_overrides") continue;
      std::set<std::string> keys;
      for (const auto& k : kv.second) {
        std::string key = k.first.IsScalar() ? k.first.Scalar() : "?";
        if (std::find(it->second.begin(), it->second.end(), key) == it->second.end())
          rd.fail(k.first, "unknown key '" + key + "' in " + name);
        if (!keys.insert(key).second) rd.fail(k.first, name + "." + key + " appears twice");
      }
    }
    const YAML::Node& croot = root;  // const: lookups never add keys
    const YAML::Node none;           // an absent section reads as empty
    auto sec = [&](const char* name) -> const YAML::Node {
      return croot[name] && croot[name].IsMap() ? croot[name] : none;
    };

    const YAML::Node c = sec("correctness");
    rd.integer(c, "correctness.trials", "trials", 1, 1000, next.trials);
    const YAML::Node t = sec("timing");
    rd.integer(t, "timing.warmup", "warmup", 0, 10000, next.warmup);
    rd.integer(t, "timing.min_samples", "min_samples", 1, 1000000, next.min_samples);
    rd.integer(t, "timing.max_samples", "max_samples", 1, 1000000, next.max_samples);
    rd.number(t, "timing.target_rel_stderr", "target_rel_stderr", 0, true, 1,
              next.target_rel_stderr);
    rd.number(t, "timing.time_cap_s", "time_cap_s", 0, true, 3600, next.time_cap_s);
    rd.integer(t, "timing.input_sets", "input_sets", 1, 64, next.input_sets);
    rd.boolean(t, "timing.flush_l2", "flush_l2", next.flush_l2);
    rd.text(t, "timing.kernel_baseline", "kernel_baseline", false, next.kernel_baseline);
    if (next.kernel_baseline != "auto" && next.kernel_baseline != "always" &&
        next.kernel_baseline != "never")
      rd.fail(t["kernel_baseline"],
              "timing.kernel_baseline: expected auto, always or never, got '" +
                  next.kernel_baseline + "'");
    if (next.max_samples < next.min_samples) {
      const YAML::Node at = t["max_samples"] ? t["max_samples"] : t["min_samples"];
      std::string why = "timing.max_samples (" + std::to_string(next.max_samples) +
                        ") is below timing.min_samples (" + std::to_string(next.min_samples) + ")";
      if (at) rd.fail(at, why);
      rd.fail_at(-1, why);
    }
    const YAML::Node to = sec("timeouts");
    rd.number(to, "timeouts.compile_s", "compile_s", 0, true, 86400, next.compile_timeout_s);
    rd.number(to, "timeouts.run_s", "run_s", 0, true, 86400, next.run_timeout_s);
    rd.number(to, "timeouts.plan_run_s", "plan_run_s", 0, true, 86400, next.plan_run_timeout_s);
    rd.number(to, "timeouts.plan_run_factor", "plan_run_factor", 0, true, 1e6,
              next.plan_run_factor);
    rd.number(to, "timeouts.plan_run_floor_s", "plan_run_floor_s", 0, true, 86400,
              next.plan_run_floor_s);
    rd.number(to, "timeouts.fault_grace_s", "fault_grace_s", 0, false, 60, next.fault_grace_s);
    rd.boolean(sec("workers"), "workers.spare", "spare", next.spare_worker);
    rd.integer(sec("workers"), "workers.spares", "spares", 1, kMaxSpareWorkers, next.spare_workers);
    const YAML::Node co = sec("compile");
    rd.text(co, "compile.arch", "arch", false, next.arch);
    if (co["arch"] && next.arch != "auto" && !arch_name(next.arch))
      rd.fail(co["arch"], "compile.arch: expected auto or a GPU architecture like sm_90a, got '" +
                              next.arch + "'");
    rd.text(co, "compile.fallback_arch", "fallback_arch", false, next.fallback_arch);
    if (co["fallback_arch"] && !arch_name(next.fallback_arch))
      rd.fail(co["fallback_arch"],
              "compile.fallback_arch: expected a GPU architecture like sm_90a, got '" +
                  next.fallback_arch + "'");
    rd.integer(co, "compile.memory_limit_mb", "memory_limit_mb", 256, 1 << 20,
               next.compile_memory_limit_mb);
    rd.text(co, "compile.cache_dir", "cache_dir", true, next.cache_dir);
    rd.integer(co, "compile.cache_max_mb", "cache_max_mb", 1, 1 << 22, next.cache_max_mb);
    rd.boolean(co, "compile.sandbox", "sandbox", next.compile_sandbox);
    rd.boolean(co, "compile.server", "server", next.compile_server);
    rd.integer(co, "compile.pch_sets", "pch_sets", 0, 64, next.compile_pch_sets);
    const YAML::Node tr = sec("triton");
    rd.text(tr, "triton.python", "python", true, next.triton_python);
    rd.text(tr, "triton.path", "path", true, next.triton_path);
    rd.number(tr, "triton.timeout_s", "timeout_s", 0, true, 86400, next.triton_timeout_s);
    rd.integer(tr, "triton.memory_limit_mb", "memory_limit_mb", 256, 1 << 20,
               next.triton_memory_limit_mb);
    rd.integer(tr, "triton.pool", "pool", 0, 64, next.triton_pool);
    rd.text(sec("reward"), "reward.preset", "preset", false, next.reward_preset);
    if (next.reward_preset.empty())
      rd.fail(sec("reward")["preset"], "reward.preset: must name a preset");
    const YAML::Node rec = sec("records");
    rd.integer(rec, "records.compile_log_bytes", "compile_log_bytes", 256, 64 << 20,
               next.record_compile_log_bytes);
    rd.integer(rec, "records.worker_log_bytes", "worker_log_bytes", 256, 64 << 20,
               next.record_worker_log_bytes);
    rd.integer(rec, "records.message_bytes", "message_bytes", 256, 64 << 20,
               next.record_message_bytes);

    const YAML::Node o = sec("tolerance_overrides");
    std::set<std::string> ids;
    for (const auto& kv : o) {
      if (!kv.first.IsScalar() || kv.first.Scalar().empty() || kv.first.Scalar().size() > 200)
        rd.fail(kv.first, "tolerance_overrides: keys are problem ids");
      std::string id = kv.first.Scalar();
      std::string name = "tolerance_overrides." + id;
      if (!ids.insert(id).second) rd.fail(kv.first, name + " appears twice");
      if (!kv.second.IsMap())
        rd.fail(kv.second,
                name + ": expected {atol, rtol, rel_l2}, got " + Reader::shown(kv.second));
      for (const auto& k : kv.second) {
        std::string key = k.first.IsScalar() ? k.first.Scalar() : "?";
        if (key != "atol" && key != "rtol" && key != "rel_l2")
          rd.fail(k.first, name + ": unknown key '" + key + "' (atol, rtol, rel_l2)");
      }
      Tolerance tol;
      rd.number(kv.second, name + ".atol", "atol", 0, false, 1e30, tol.atol);
      rd.number(kv.second, name + ".rtol", "rtol", 0, false, 1e30, tol.rtol);
      rd.number(kv.second, name + ".rel_l2", "rel_l2", 0, false, 1e30, tol.rel_l2);
      next.tolerance_overrides[id] = tol;
    }
  } catch (const YAML::Exception& e) {
    rd.fail_at(e.mark.line, e.msg);
  }
  *this = std::move(next);
}

fs::path Config::resolved_cache_dir() const {
  if (!cache_dir.empty()) return cache_dir;
  if (const char* e = std::getenv("KERNRL_CACHE"); e && *e) return e;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return fs::path(x) / "kernrl";
  if (const char* h = std::getenv("HOME"); h && *h) return fs::path(h) / ".cache" / "kernrl";
  return fs::temp_directory_path() / "kernrl-cache";
}

nlohmann::json Config::to_json() const {
  nlohmann::json ov = nlohmann::json::object();
  for (const auto& [id, t] : tolerance_overrides)
    ov[id] = {{"atol", t.atol}, {"rtol", t.rtol}, {"rel_l2", t.rel_l2}};
  return {{"trials", trials},
          {"warmup", warmup},
          {"min_samples", min_samples},
          {"max_samples", max_samples},
          {"target_rel_stderr", target_rel_stderr},
          {"time_cap_s", time_cap_s},
          {"input_sets", input_sets},
          {"flush_l2", flush_l2},
          {"kernel_baseline", kernel_baseline},
          {"compile_timeout_s", compile_timeout_s},
          {"run_timeout_s", run_timeout_s},
          {"plan_run_timeout_s", plan_run_timeout_s},
          {"plan_run_factor", plan_run_factor},
          {"plan_run_floor_s", plan_run_floor_s},
          {"fault_grace_s", fault_grace_s},
          {"spare_worker", spare_worker},
          {"spare_workers", spare_workers},
          {"arch", arch},
          {"fallback_arch", fallback_arch},
          {"compile_memory_limit_mb", compile_memory_limit_mb},
          {"cache_dir", cache_dir},
          {"cache_max_mb", cache_max_mb},
          {"compile_sandbox", compile_sandbox},
          {"compile_server", compile_server},
          {"compile_pch_sets", compile_pch_sets},
          {"triton_python", triton_python},
          {"triton_path", triton_path},
          {"triton_timeout_s", triton_timeout_s},
          {"triton_memory_limit_mb", triton_memory_limit_mb},
          {"triton_pool", triton_pool},
          {"tolerance_overrides", ov},
          {"reward_preset", reward_preset},
          {"record_compile_log_bytes", record_compile_log_bytes},
          {"record_worker_log_bytes", record_worker_log_bytes},
          {"record_message_bytes", record_message_bytes}};
}

Config Config::from_json(const nlohmann::json& j) {
  Config c;
  c.trials = j.value("trials", c.trials);
  c.warmup = j.value("warmup", c.warmup);
  c.min_samples = j.value("min_samples", c.min_samples);
  c.max_samples = j.value("max_samples", c.max_samples);
  c.target_rel_stderr = j.value("target_rel_stderr", c.target_rel_stderr);
  c.time_cap_s = j.value("time_cap_s", c.time_cap_s);
  c.input_sets = j.value("input_sets", c.input_sets);
  c.flush_l2 = j.value("flush_l2", c.flush_l2);
  c.kernel_baseline = j.value("kernel_baseline", c.kernel_baseline);
  c.compile_timeout_s = j.value("compile_timeout_s", c.compile_timeout_s);
  c.run_timeout_s = j.value("run_timeout_s", c.run_timeout_s);
  c.plan_run_timeout_s = j.value("plan_run_timeout_s", c.plan_run_timeout_s);
  c.plan_run_factor = j.value("plan_run_factor", c.plan_run_factor);
  c.plan_run_floor_s = j.value("plan_run_floor_s", c.plan_run_floor_s);
  c.fault_grace_s = j.value("fault_grace_s", c.fault_grace_s);
  c.spare_worker = j.value("spare_worker", c.spare_worker);
  c.spare_workers = j.value("spare_workers", c.spare_workers);
  c.arch = j.value("arch", c.arch);
  c.fallback_arch = j.value("fallback_arch", c.fallback_arch);
  c.compile_memory_limit_mb = j.value("compile_memory_limit_mb", c.compile_memory_limit_mb);
  c.cache_dir = j.value("cache_dir", c.cache_dir);
  c.cache_max_mb = j.value("cache_max_mb", c.cache_max_mb);
  c.compile_sandbox = j.value("compile_sandbox", c.compile_sandbox);
  c.compile_server = j.value("compile_server", c.compile_server);
  c.compile_pch_sets = j.value("compile_pch_sets", c.compile_pch_sets);
  c.triton_python = j.value("triton_python", c.triton_python);
  c.triton_path = j.value("triton_path", c.triton_path);
  c.triton_timeout_s = j.value("triton_timeout_s", c.triton_timeout_s);
  c.triton_memory_limit_mb = j.value("triton_memory_limit_mb", c.triton_memory_limit_mb);
  c.triton_pool = j.value("triton_pool", c.triton_pool);
  c.reward_preset = j.value("reward_preset", c.reward_preset);
  c.record_compile_log_bytes = j.value("record_compile_log_bytes", c.record_compile_log_bytes);
  c.record_worker_log_bytes = j.value("record_worker_log_bytes", c.record_worker_log_bytes);
  c.record_message_bytes = j.value("record_message_bytes", c.record_message_bytes);
  if (j.contains("tolerance_overrides"))
    for (const auto& [id, t] : j["tolerance_overrides"].items())
      c.tolerance_overrides[id] =
          Tolerance{t.value("atol", 1e-4), t.value("rtol", 1e-4), t.value("rel_l2", 1e-2)};
  return c;
}

Config load_config(const std::string& user_file) {
  Config c;
  fs::path def = data_dir() / "configs" / "default.yaml";
  if (fs::exists(def)) c.merge_file(def);
  if (!user_file.empty()) c.merge_file(user_file);
  return c;
}

}  // namespace kernrl

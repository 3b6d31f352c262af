#include "core/config.h"

#include <yaml-cpp/yaml.h>

#include <cstdlib>

#include "core/paths.h"

namespace kernrl {
namespace fs = std::filesystem;

void Config::merge_file(const fs::path& file) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(file.string());
  } catch (const YAML::BadFile&) {
    throw SpecError(file.string() + ": cannot read config file");
  } catch (const YAML::ParserException& e) {
    throw SpecError(file.string() + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  auto fail = [&](const YAML::Node& n, const std::string& why) {
    throw SpecError(file.string() + ":" + std::to_string(n.Mark().line + 1) + ": " + why);
  };
  auto get = [&](const YAML::Node& sec, const char* key, auto& out) {
    if (!sec[key]) return;
    try {
      out = sec[key].as<std::decay_t<decltype(out)>>();
    } catch (const YAML::Exception&) {
      fail(sec[key], std::string("'") + key + "' has the wrong type");
    }
  };
  static const std::map<std::string, std::vector<std::string>> known = {
      {"correctness", {"trials"}},
      {"timing", {"warmup", "min_samples", "max_samples", "target_rel_stderr", "time_cap_s", "input_sets", "flush_l2"}},
      {"timeouts", {"compile_s", "run_s"}},
      {"compile", {"arch", "fallback_arch", "memory_limit_mb", "cache_dir", "cache_max_mb", "sandbox"}},
      {"tolerance_overrides", {}},
      {"reward", {"preset"}}};
  for (const auto& kv : root) {
    auto it = known.find(kv.first.Scalar());
    if (it == known.end()) fail(kv.first, "unknown config section '" + kv.first.Scalar() + "'");
    if (it->first == "tolerance_overrides") continue;
    for (const auto& k : kv.second) {
      const auto& keys = it->second;
      if (std::find(keys.begin(), keys.end(), k.first.Scalar()) == keys.end())
        fail(k.first, "unknown key '" + k.first.Scalar() + "' in " + it->first);
    }
  }
  get(root["correctness"], "trials", trials);
  auto t = root["timing"];
  get(t, "warmup", warmup);
  get(t, "min_samples", min_samples);
  get(t, "max_samples", max_samples);
  get(t, "target_rel_stderr", target_rel_stderr);
  get(t, "time_cap_s", time_cap_s);
  get(t, "input_sets", input_sets);
  get(t, "flush_l2", flush_l2);
  get(root["timeouts"], "compile_s", compile_timeout_s);
  get(root["timeouts"], "run_s", run_timeout_s);
  auto c = root["compile"];
  get(c, "arch", arch);
  get(c, "fallback_arch", fallback_arch);
  get(c, "memory_limit_mb", compile_memory_limit_mb);
  get(c, "cache_dir", cache_dir);
  get(c, "cache_max_mb", cache_max_mb);
  get(c, "sandbox", compile_sandbox);
  get(root["reward"], "preset", reward_preset);
  if (auto o = root["tolerance_overrides"]; o && o.IsMap()) {
    for (const auto& kv : o) {
      Tolerance tol;
      get(kv.second, "atol", tol.atol);
      get(kv.second, "rtol", tol.rtol);
      get(kv.second, "rel_l2", tol.rel_l2);
      tolerance_overrides[kv.first.Scalar()] = tol;
    }
  }
  if (trials < 1) throw SpecError(file.string() + ": correctness.trials must be at least 1");
  if (input_sets < 1 || min_samples < 1 || max_samples < min_samples)
    throw SpecError(file.string() + ": timing settings are inconsistent");
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
  for (const auto& [id, t] : tolerance_overrides) ov[id] = {{"atol", t.atol}, {"rtol", t.rtol}, {"rel_l2", t.rel_l2}};
  return {{"trials", trials},           {"warmup", warmup},
          {"min_samples", min_samples}, {"max_samples", max_samples},
          {"target_rel_stderr", target_rel_stderr}, {"time_cap_s", time_cap_s},
          {"input_sets", input_sets},   {"flush_l2", flush_l2},
          {"compile_timeout_s", compile_timeout_s}, {"run_timeout_s", run_timeout_s},
          {"arch", arch},               {"fallback_arch", fallback_arch},
          {"compile_memory_limit_mb", compile_memory_limit_mb}, {"cache_dir", cache_dir},
          {"cache_max_mb", cache_max_mb}, {"compile_sandbox", compile_sandbox},
          {"tolerance_overrides", ov},  {"reward_preset", reward_preset}};
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
  c.compile_timeout_s = j.value("compile_timeout_s", c.compile_timeout_s);
  c.run_timeout_s = j.value("run_timeout_s", c.run_timeout_s);
  c.arch = j.value("arch", c.arch);
  c.fallback_arch = j.value("fallback_arch", c.fallback_arch);
  c.compile_memory_limit_mb = j.value("compile_memory_limit_mb", c.compile_memory_limit_mb);
  c.cache_dir = j.value("cache_dir", c.cache_dir);
  c.cache_max_mb = j.value("cache_max_mb", c.cache_max_mb);
  c.compile_sandbox = j.value("compile_sandbox", c.compile_sandbox);
  c.reward_preset = j.value("reward_preset", c.reward_preset);
  if (j.contains("tolerance_overrides"))
    for (const auto& [id, t] : j["tolerance_overrides"].items())
      c.tolerance_overrides[id] = Tolerance{t.value("atol", 1e-4), t.value("rtol", 1e-4), t.value("rel_l2", 1e-2)};
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

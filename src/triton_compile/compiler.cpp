#include "triton_compile/compiler.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>

#include "compile/cache.h"
#include "core/hash.h"
#include "triton_compile/child.h"

namespace kernrl {
namespace fs = std::filesystem;
using json = nlohmann::json;

int triton_arch_number(const std::string& arch) {
  int n = 0;
  for (char c : arch)
    if (c >= '0' && c <= '9') n = n * 10 + (c - '0');
  return n;
}

namespace {

// The helper's answer for one kernel request, without the cubins, and the cubins stored in the
// compile cache; the answer is kept beside them so a later compile needs no child.
struct Stored {
  json answer;  // {"triton", "kernels": [{"key", "variants": [{name, metadata, ...}]}]}
};

fs::path answer_path(const CompileCache& cache, const std::string& key) {
  return cache.folder(key) / (key + ".triton.json");
}

// The cache entry of variant `v` of kernel request `i`.
std::string variant_key(const std::string& key, size_t i, size_t v) {
  return key + "-" + std::to_string(i) + "-" + std::to_string(v);
}

// The record's description of a compiled kernel's configuration.
json config_record(const TritonKernel& t) {
  return {{"num_warps", t.metadata.value("num_warps", 4)},
          {"num_stages", t.metadata.value("num_stages", 3)},
          {"num_ctas", t.metadata.value("num_ctas", 1)},
          {"shared", t.metadata.value("shared", 0)},
          {"constexprs", t.config.value("constexprs", json::object())}};
}

std::vector<TritonKernel> kernels_from(const json& answer, const CompileCache& cache,
                                       const std::string& key, json* record) {
  std::vector<TritonKernel> out;
  size_t i = 0;
  for (const auto& k : answer.at("kernels")) {
    if (k.contains("same_as")) {  // the same kernel as an earlier request: launched as that one
      out.push_back(out.at(k.at("same_as").get<size_t>()));
      ++i;
      continue;
    }
    // Every variant (autotune config) that compiled; the first is launched unless the worker's
    // autotuning keeps another (docs/kernel-format.md, "Autotune and heuristics").
    const auto& variants = k.at("variants");
    std::string base = k.at("key");
    std::vector<TritonKernel> compiled;
    json candidates = json::array();
    for (size_t c = 0; c < variants.size(); ++c) {
      const json& v = variants[c];
      if (v.contains("error")) {
        candidates.push_back({{"config", c}, {"error", v.at("error")}});
        continue;
      }
      auto hit = cache.find(variant_key(key, i, c));
      if (!hit) throw std::runtime_error("cache entry is gone");
      TritonKernel t;
      t.key = compiled.empty() ? base : base + "@" + std::to_string(c + 1);
      t.symbol = v.at("name");
      t.cubin_path = hit->cubin_path;
      t.metadata = v.at("metadata");
      t.ptx_params = v.at("ptx_params").size();
      t.runtime_params = v.at("runtime_params").size();
      t.config = v.value("config", json::object());
      t.autotune_config = static_cast<int>(c);
      json cand = config_record(t);
      cand["config"] = c;
      cand["key"] = t.key;
      candidates.push_back(cand);
      compiled.push_back(t);
    }
    if (compiled.empty()) throw std::runtime_error("no variant of " + base + " compiled");
    TritonKernel t = compiled.front();
    json r = {{"key", t.key}, {"kernel", t.key.substr(0, t.key.find('#'))}};
    r.update(config_record(t));
    if (variants.size() > 1) {
      t.configs = compiled;
      r["autotune"] = {{"configs", variants.size()},
                       {"chosen", t.autotune_config},
                       {"timed", false},
                       {"candidates", candidates}};
    }
    record->push_back(r);
    out.push_back(t);
    ++i;
  }
  return out;
}

// Stores the cubins of a fresh answer and the answer without them; returns the stripped answer.
json store_answer(const json& answer, const CompileCache& cache, const std::string& key,
                  const std::string& arch) {
  json stripped = answer;
  size_t i = 0;
  for (auto& k : stripped["kernels"]) {
    if (!k.contains("variants")) {
      ++i;
      continue;
    }
    for (size_t c = 0; c < k["variants"].size(); ++c) {
      json& v = k["variants"][c];
      if (!v.contains("cubin_b64")) continue;  // an autotune config that did not compile
      std::string cubin = base64_decode(v.at("cubin_b64").get<std::string>());
      cache.store(variant_key(key, i, c), cubin, "", 0,
                  {{k.at("key").get<std::string>(), v.at("name").get<std::string>()}}, arch);
      v.erase("cubin_b64");
    }
    ++i;
  }
  fs::path p = answer_path(cache, key);
  fs::create_directories(p.parent_path());
  fs::path tmp = p;
  tmp += ".tmp" + std::to_string(::getpid());
  {
    std::ofstream o(tmp, std::ios::binary);
    o << stripped.dump();
    if (!o) throw std::runtime_error("cannot write " + tmp.string());
  }
  fs::rename(tmp, p);
  cache.trim_if_due();
  return stripped;
}

// The plan the worker runs and the record's kernels, from a (stripped) answer; the tuning groups
// of autotuned launches with the record keys of their kernels.
void launch_from(const json& answer, const CompileCache& cache, const std::string& key,
                 const LaunchPlan& plan, const TritonRequest& req, const ProblemSpec& problem,
                 TritonCompileResult* res) {
  std::vector<TritonKernel> kernels = kernels_from(answer, cache, key, &res->kernels);
  res->launch = triton_launch_plan(plan, req, kernels, problem);
  for (size_t li = 0; li < res->launch.plan.launches.size(); ++li) {
    const std::string& group = res->launch.plan.launches[li].tune_group;
    if (group.empty()) continue;
    auto& keys = res->tune_groups[group];
    for (size_t ki : req.launch_kernels.at(li))
      if (std::find(keys.begin(), keys.end(), kernels.at(ki).key) == keys.end())
        keys.push_back(kernels.at(ki).key);
  }
}

json timing_of(const TritonChildResult& child) {
  json t = child.answer.is_object() ? child.answer.value("timing", json::object()) : json::object();
  if (!t.is_object()) t = json::object();
  t["wait_ms"] = child.wait_ms;
  if (child.import_ms >= 0) t["import_ms"] = child.import_ms;
  if (child.warm_up_ms >= 0) t["warm_up_ms"] = child.warm_up_ms;
  return t;
}

}  // namespace

TritonCompileResult compile_triton(const ExtractedSource& src, const std::string& filename,
                                   const LaunchPlan& plan, const ProblemSpec& problem,
                                   const std::vector<Vars>& size_sets, int64_t num_sms,
                                   const std::string& arch, const Config& cfg) {
  auto t0 = std::chrono::steady_clock::now();
  TritonCompileResult res;
  CompileResult& c = res.compile;
  c.arch = arch;
  auto finish = [&]() -> TritonCompileResult {
    c.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return res;
  };
  TritonRequest req;
  try {
    req =
        triton_request(src, filename, plan, problem, size_sets, num_sms, triton_arch_number(arch));
  } catch (const FormatError& e) {
    c.status = CompileResult::Error;
    c.error = e.what();
    res.error_line = e.line;
    res.format_error = true;
    return finish();
  }
  const TritonInstall& install = triton_install(cfg);
  res.triton_version = install.version;
  if (cfg.compile_sandbox) require_triton_sandbox(cfg);

  CompileCache cache(cfg.resolved_cache_dir(), static_cast<uintmax_t>(cfg.cache_max_mb) << 20);
  std::string key =
      sha256_hex("kernrl-triton-v2\n" + install.version + "\n" + arch + "\n" + req.json.dump());
  json answer;
  std::ifstream cached(answer_path(cache, key), std::ios::binary);
  if (cached) {
    try {
      answer = json::parse(cached);
      launch_from(answer, cache, key, plan, req, problem, &res);
      c.status = CompileResult::Ok;
      c.cached = true;
      return finish();
    } catch (const std::exception&) {
      res.kernels = json::array();  // a damaged or trimmed entry is a miss
      res.tune_groups.clear();
    }
  }
  TritonChildResult child = run_triton(req.json, cfg);
  res.timing = timing_of(child);
  c.log = child.log;
  c.log_bytes = child.log.size();
  if (child.outcome != TritonChildResult::Answered) {
    c.status = child.outcome == TritonChildResult::Timeout ? CompileResult::Timeout
                                                           : CompileResult::Crashed;
    c.error = child.error;
    return finish();
  }
  if (!child.answer.value("ok", false)) {
    c.status = CompileResult::Error;
    c.error = child.answer.value("error", "the Triton compile failed");
    res.error_line = child.answer.value("line", 0);
    if (child.answer.contains("log")) c.log = child.answer["log"].get<std::string>() + c.log;
    c.log_bytes = c.log.size();
    return finish();
  }
  try {
    json stripped = store_answer(child.answer, cache, key, arch);
    launch_from(stripped, cache, key, plan, req, problem, &res);
  } catch (const FormatError& e) {
    c.status = CompileResult::Error;
    c.error = e.what();
    res.error_line = e.line;
    res.format_error = true;
    return finish();
  } catch (const std::exception& e) {
    c.status = CompileResult::Crashed;
    c.error = std::string("the Triton compiler's answer cannot be used: ") + e.what();
    return finish();
  }
  c.status = CompileResult::Ok;
  return finish();
}

}  // namespace kernrl

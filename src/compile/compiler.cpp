#include "compile/compiler.h"

#include <chrono>
#include <cstdint>

#include "compile/cache.h"
#include "compile/include_gate.h"
#include "compile/options.h"

namespace kernrl {

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
  if (std::string bad = disallowed_include(src.code, src.first_line); !bad.empty()) {
    res.status = CompileResult::Error;
    res.error = bad;
    return finish();
  }
  require_sandbox(cfg);

  CompileRequest req = compile_request(src, filename, arch, kernel_names, cfg.compile_sandbox);
  CompileCache cache(cfg.resolved_cache_dir(), static_cast<uintmax_t>(cfg.cache_max_mb) << 20);
  std::string key = CompileCache::key(req.source, req.options, req.names, res.nvrtc_version);
  if (auto hit = cache.find(key)) {
    res.status = CompileResult::Ok;
    res.cached = true;
    res.log = hit->log;
    res.log_bytes = hit->log_bytes;
    res.lowered = hit->lowered;
    res.cubin_path = hit->cubin_path;
    return finish();
  }

  ChildCompile child = run_compiler(req, pch_headers(src.code), cfg);
  res.pch = child.pch;
  if (child.outcome == ChildCompile::Timeout) {
    res.status = CompileResult::Timeout;
    res.error = child.error;
    return finish();
  }
  if (child.outcome == ChildCompile::Crashed) {
    res.status = CompileResult::Crashed;
    res.error = child.error;
    return finish();
  }
  const CompileAnswer& answer = child.answer;
  res.log = answer.log;
  res.log_bytes = answer.log_bytes.value_or(res.log.size());
  if (!answer.ok) {
    res.status = CompileResult::Error;
    res.error = answer.error.empty() ? "compile failed" : answer.error;
    return finish();
  }
  res.lowered = answer.lowered;
  try {
    res.cubin_path =
        cache.store(key, child.cubin, res.log, res.log_bytes, res.lowered, arch).cubin_path;
  } catch (const std::exception& e) {
    res.status = CompileResult::Error;
    res.error = "cannot store the cubin in " + cache.folder(key).string() + ": " + e.what();
    return finish();
  }
  cache.trim_if_due();
  res.status = CompileResult::Ok;
  return finish();
}

}  // namespace kernrl

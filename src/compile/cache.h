// The compile cache: cubins on disk, keyed by everything that decides them (the source as NVRTC
// sees it, the options, the kernel names, NVRTC's version and kernrl's built-in headers), so a
// file graded again, by this process or another, is not compiled again. Layout:
// <dir>/<key[0:2]>/<key>.cubin and <key>.json (log, lowered names, arch). Entries are published
// atomically (a unique temporary name, then rename), so concurrent graders may share a cache.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kernrl {

// One cached compile.
struct CacheEntry {
  std::string cubin_path;
  std::string log;       // NVRTC's log (warnings), as the compiler process cut it
  size_t log_bytes = 0;  // the log's full size
  std::map<std::string, std::string> lowered;  // launch-block kernel name -> symbol
};

class CompileCache {
 public:
  // A cache in `dir`, kept to `max_bytes` of cubins by trim_if_due().
  CompileCache(std::filesystem::path dir, uintmax_t max_bytes);

  // The key of one compile (64 hex digits): a SHA-256 over the source, options, kernel names,
  // NVRTC's version, kernrl's built-in headers and the cache's format version.
  static std::string key(const std::string& source, const std::vector<std::string>& options,
                         const std::vector<std::string>& names, const std::string& nvrtc_version);

  // The folder holding `key`'s files.
  std::filesystem::path folder(const std::string& key) const;

  // The entry of `key`, or nullopt when there is none or it is damaged (a damaged entry is a
  // miss). A hit marks the entry recently used, so trimming keeps it.
  std::optional<CacheEntry> find(const std::string& key) const;

  // Publishes the cubin and its metadata under `key`; throws std::exception when they cannot be
  // written.
  CacheEntry store(const std::string& key, const std::string& cubin, const std::string& log,
                   size_t log_bytes, const std::map<std::string, std::string>& lowered,
                   const std::string& arch) const;

  // Trims the cache to its bound once every 32 calls in this process (the first call included):
  // compiles call it after every store.
  void trim_if_due() const;

 private:
  std::filesystem::path dir_;
  uintmax_t max_bytes_;
};

// Trims a compile cache to `max_bytes` of cubins: least recently used entries (cubin and its .json)
// go first, down to 80% of the bound. Returns the cubin bytes left.
uintmax_t trim_compile_cache(const std::filesystem::path& dir, uintmax_t max_bytes);

}  // namespace kernrl

#include "compile/cache.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>

#include "core/hash.h"
#include "extract/extract.h"
#include "headers/builtin_headers.h"

namespace kernrl {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Bumped when an entry's meaning changes: every older entry becomes a miss.
constexpr int kCacheFormat = 3;

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

// The built-in headers (prelude included) are part of every compile's input.
const std::string& builtin_headers_hash() {
  static const std::string hash = [] {
    std::string all;
    for (const auto& h : builtin_headers()) all += h.name + '\0' + h.text + '\0';
    return sha256_hex(all);
  }();
  return hash;
}

std::string dump(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

CompileCache::CompileCache(fs::path dir, uintmax_t max_bytes)
    : dir_(std::move(dir)), max_bytes_(max_bytes) {}

std::string CompileCache::key(const std::string& source, const std::vector<std::string>& options,
                              const std::vector<std::string>& names,
                              const std::string& nvrtc_version) {
  json key_parts = {{"source", source},
                    {"options", options},
                    {"names", names},
                    {"nvrtc", nvrtc_version},
                    {"headers", builtin_headers_hash()},
                    {"kernrl_cache", kCacheFormat}};
  return sha256_hex(dump(key_parts));
}

fs::path CompileCache::folder(const std::string& key) const {
  return dir_ / key.substr(0, 2);
}

std::optional<CacheEntry> CompileCache::find(const std::string& key) const {
  fs::path cubin = folder(key) / (key + ".cubin"), meta = folder(key) / (key + ".json");
  if (!fs::exists(meta) || !fs::exists(cubin)) return std::nullopt;
  try {
    json m = json::parse(read_file(meta.string()));
    CacheEntry e;
    e.log = m.value("log", "");
    e.log_bytes = m.value("log_bytes", e.log.size());
    e.lowered = m.at("lowered").get<std::map<std::string, std::string>>();
    e.cubin_path = cubin.string();
    std::error_code ec;
    fs::last_write_time(cubin, fs::file_time_type::clock::now(), ec);  // recently used
    return e;
  } catch (...) {
    return std::nullopt;  // a damaged entry is just a miss
  }
}

CacheEntry CompileCache::store(const std::string& key, const std::string& cubin,
                               const std::string& log, size_t log_bytes,
                               const std::map<std::string, std::string>& lowered,
                               const std::string& arch) const {
  fs::path dir = folder(key);
  std::error_code ec;
  fs::create_directories(dir, ec);
  fs::path cubin_path = dir / (key + ".cubin");
  write_atomic(cubin_path, cubin);
  write_atomic(
      dir / (key + ".json"),
      dump(json{{"log", log}, {"log_bytes", log_bytes}, {"lowered", lowered}, {"arch", arch}}));
  CacheEntry e;
  e.cubin_path = cubin_path.string();
  e.log = log;
  e.log_bytes = log_bytes;
  e.lowered = lowered;
  return e;
}

void CompileCache::trim_if_due() const {
  static std::mutex mu;
  static int stores = 0;
  std::lock_guard<std::mutex> lock(mu);
  if (++stores % 32 != 1) return;
  trim_compile_cache(dir_, max_bytes_);
}

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

}  // namespace kernrl

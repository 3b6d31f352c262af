// The compile cache (compile/cache.h): keys, hits and misses, damaged entries, the size bound, and
// compile_kernel's use of it (a compile served from the cache, failures never stored).
#include <doctest/doctest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>

#include "compile/cache.h"
#include "compile/compiler.h"
#include "test_dirs.h"

using namespace kernrl;
namespace fs = std::filesystem;

namespace {

std::string file_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

// Every file under `dir`, by name.
std::set<std::string> files_under(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) names.insert(e.path().filename().string());
  return names;
}

size_t cubins_under(const fs::path& dir) {
  size_t n = 0;
  for (const auto& name : files_under(dir)) n += fs::path(name).extension() == ".cubin";
  return n;
}

}  // namespace

TEST_CASE("trim_compile_cache removes the least recently used cubins and their metadata") {
  fs::path dir = fs::temp_directory_path() / ("kernrl-cache-test-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "ab");
  auto now = fs::file_time_type::clock::now();
  for (int i = 0; i < 10; ++i) {  // 10 entries of 100 KiB, entry 0 the oldest
    fs::path cubin = dir / "ab" / ("k" + std::to_string(i) + ".cubin");
    std::ofstream(cubin, std::ios::binary) << std::string(100 << 10, 'x');
    std::ofstream(dir / "ab" / ("k" + std::to_string(i) + ".json")) << "{}";
    fs::last_write_time(cubin, now - std::chrono::hours(10 - i));
  }
  CHECK(kernrl::trim_compile_cache(dir, 2 << 20) ==
        10 * (100 << 10));  // under the bound: nothing goes
  CHECK(fs::exists(dir / "ab" / "k0.cubin"));
  uintmax_t left = kernrl::trim_compile_cache(dir, 500 << 10);  // bound 500 KiB: down to 400 KiB
  CHECK(left == 4 * (100 << 10));
  for (int i = 0; i < 10; ++i) {
    bool kept = i >= 6;  // the four most recently used stay
    CHECK_MESSAGE(fs::exists(dir / "ab" / ("k" + std::to_string(i) + ".cubin")) == kept, i);
    CHECK_MESSAGE(fs::exists(dir / "ab" / ("k" + std::to_string(i) + ".json")) == kept, i);
  }
  fs::remove_all(dir);
}

TEST_CASE("trim_compile_cache: a missing or empty cache is nothing to trim") {
  fs::path dir = fresh_test_dir("cache-empty");
  CHECK(trim_compile_cache(dir, 0) == 0);
  CHECK(trim_compile_cache(dir / "missing", 1 << 20) == 0);
  fs::remove_all(dir);
}

TEST_CASE("a cache key covers the source, options, kernel names and NVRTC version") {
  const std::string src = "#line 1 \"k.cu\"\n__global__ void k() {}\n";
  const std::vector<std::string> opts = {"-arch=sm_90a", "-std=c++17"};
  const std::vector<std::string> names = {"k", "j"};
  std::string key = CompileCache::key(src, opts, names, "13.0");
  CHECK(key.size() == 64);
  CHECK(key.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(CompileCache::key(src, opts, names, "13.0") == key);  // deterministic
  std::set<std::string> keys = {
      key,
      CompileCache::key(src + " ", opts, names, "13.0"),
      CompileCache::key(src, {"-arch=sm_89", "-std=c++17"}, names, "13.0"),
      CompileCache::key(src, opts, {"k"}, "13.0"),
      CompileCache::key(src, opts, {"j", "k"}, "13.0"),  // the order of the names counts
      CompileCache::key(src, opts, names, "12.8"),
      // Parts are not simply concatenated.
      CompileCache::key(src, {"-arch=sm_90a-std=c++17"}, names, "13.0"),
  };
  CHECK(keys.size() == 7);
}

TEST_CASE("a cache stores an entry and finds it again") {
  fs::path dir = fresh_test_dir("cache-store");
  CompileCache cache(dir / "cache", 1 << 30);
  std::string key = CompileCache::key("source", {"-arch=sm_90a"}, {"k"}, "13.0");
  CHECK_FALSE(cache.find(key).has_value());  // a miss, even without the folder

  const std::string cubin(
      "\x7f"
      "ELF\0\1\2",
      7);
  CacheEntry stored =
      cache.store(key, cubin, "warning: x", 12345, {{"k", "_Z1kv"}, {"j", "j"}}, "sm_90a");
  CHECK(fs::path(stored.cubin_path) == cache.folder(key) / (key + ".cubin"));
  CHECK(cache.folder(key) == dir / "cache" / key.substr(0, 2));
  CHECK(file_text(stored.cubin_path) == cubin);
  // Nothing but the entry's two files: the temporary names are gone.
  CHECK(files_under(dir / "cache") == std::set<std::string>{key + ".cubin", key + ".json"});

  auto hit = cache.find(key);
  REQUIRE(hit.has_value());
  CHECK(hit->cubin_path == stored.cubin_path);
  CHECK(hit->log == "warning: x");
  CHECK(hit->log_bytes == 12345);
  CHECK(hit->lowered == std::map<std::string, std::string>{{"k", "_Z1kv"}, {"j", "j"}});

  // Another cache object on the same folder (another grader) finds it too; other keys miss.
  CompileCache again(dir / "cache", 1 << 30);
  CHECK(again.find(key).has_value());
  CHECK_FALSE(again.find(CompileCache::key("other", {}, {}, "13.0")).has_value());

  // Storing the same key again replaces the entry.
  cache.store(key, "new", "", 0, {{"k", "k"}}, "sm_90a");
  CHECK(file_text(cache.find(key)->cubin_path) == "new");
  CHECK(cache.find(key)->lowered.at("k") == "k");
  fs::remove_all(dir);
}

TEST_CASE("a hit marks the entry recently used") {
  fs::path dir = fresh_test_dir("cache-lru");
  CompileCache cache(dir, 1 << 30);
  std::string key = CompileCache::key("s", {}, {"k"}, "13.0");
  std::string path = cache.store(key, "cubin", "", 0, {{"k", "k"}}, "sm_90a").cubin_path;
  auto old = fs::file_time_type::clock::now() - std::chrono::hours(24);
  fs::last_write_time(path, old);
  REQUIRE(cache.find(key).has_value());
  CHECK(fs::last_write_time(path) > old + std::chrono::hours(23));
  fs::remove_all(dir);
}

TEST_CASE("a damaged or half-written entry is a miss") {
  fs::path dir = fresh_test_dir("cache-damaged");
  CompileCache cache(dir, 1 << 30);
  std::string key = CompileCache::key("s", {}, {"k"}, "13.0");
  cache.store(key, "cubin", "log", 3, {{"k", "k"}}, "sm_90a");
  fs::path meta = cache.folder(key) / (key + ".json"), cubin = cache.folder(key) / (key + ".cubin");
  REQUIRE(cache.find(key).has_value());

  std::ofstream(meta, std::ios::trunc) << "{\"log\": \"x\"";  // cut short
  CHECK_FALSE(cache.find(key).has_value());
  std::ofstream(meta, std::ios::trunc) << "{\"log\": \"x\"}";  // no lowered names
  CHECK_FALSE(cache.find(key).has_value());
  std::ofstream(meta, std::ios::trunc) << "{\"lowered\": [\"k\"]}";  // of the wrong type
  CHECK_FALSE(cache.find(key).has_value());
  // Old entries without log_bytes: the log's own size.
  std::ofstream(meta, std::ios::trunc) << "{\"log\": \"four\", \"lowered\": {\"k\": \"k\"}}";
  REQUIRE(cache.find(key).has_value());
  CHECK(cache.find(key)->log_bytes == 4);

  fs::remove(cubin);  // metadata without its cubin
  CHECK_FALSE(cache.find(key).has_value());
  cache.store(key, "cubin", "log", 3, {{"k", "k"}}, "sm_90a");
  fs::remove(meta);  // a cubin without its metadata
  CHECK_FALSE(cache.find(key).has_value());
  fs::remove_all(dir);
}

TEST_CASE("a cache that cannot be written throws on store") {
  fs::path dir = fresh_test_dir("cache-unwritable");
  std::ofstream(dir / "file") << "not a folder";
  CompileCache cache(dir / "file", 1 << 30);
  std::string key = CompileCache::key("s", {}, {"k"}, "13.0");
  CHECK_THROWS(cache.store(key, "cubin", "", 0, {{"k", "k"}}, "sm_90a"));
  CHECK_FALSE(cache.find(key).has_value());
  fs::remove_all(dir);
}

TEST_CASE("compile_kernel serves a repeated compile from the cache and never caches a failure") {
  fs::path dir = fresh_test_dir("cache-compile");
  Config cfg = load_config("");
  cfg.cache_dir = dir.string();
  ExtractedSource src;
  src.code = "extern \"C\" __global__ void probe(float* out) { out[0] = 1.0f; }\n";
  src.first_line = 1;

  CompileResult first = compile_kernel(src, "probe.cu", "sm_90a", {"probe"}, cfg);
  REQUIRE_MESSAGE(first.ok(), first.error << "\n" << first.log);
  CHECK_FALSE(first.cached);
  CHECK(first.lowered.at("probe") == "probe");
  CHECK(first.arch == "sm_90a");
  CHECK(fs::path(first.cubin_path).parent_path().parent_path() == dir);
  CHECK(fs::file_size(first.cubin_path) > 0);

  CompileResult second = compile_kernel(src, "probe.cu", "sm_90a", {"probe"}, cfg);
  REQUIRE(second.ok());
  CHECK(second.cached);
  CHECK(second.cubin_path == first.cubin_path);
  CHECK(second.lowered == first.lowered);
  CHECK(second.log == first.log);
  CHECK(cubins_under(dir) == 1);

  // The file's name is in the source NVRTC sees (#line): another name is another compile.
  CompileResult renamed = compile_kernel(src, "other.cu", "sm_90a", {"probe"}, cfg);
  REQUIRE(renamed.ok());
  CHECK_FALSE(renamed.cached);
  CHECK(cubins_under(dir) == 2);

  // A damaged entry is compiled again and replaced.
  fs::path meta = fs::path(first.cubin_path).replace_extension(".json");
  std::ofstream(meta, std::ios::trunc) << "garbage";
  CompileResult redone = compile_kernel(src, "probe.cu", "sm_90a", {"probe"}, cfg);
  REQUIRE(redone.ok());
  CHECK_FALSE(redone.cached);
  CHECK(redone.cubin_path == first.cubin_path);
  CHECK(compile_kernel(src, "probe.cu", "sm_90a", {"probe"}, cfg).cached);

  // Failures are not stored: NVRTC's errors, unknown kernel names, the include gate.
  ExtractedSource broken;
  broken.code = "extern \"C\" __global__ void probe(float* out) { out[0] = undefined_name; }\n";
  for (int i = 0; i < 2; ++i) {
    CompileResult r = compile_kernel(broken, "probe.cu", "sm_90a", {"probe"}, cfg);
    CHECK(r.status == CompileResult::Error);
    CHECK_FALSE(r.cached);
    CHECK(r.log.find("undefined_name") != std::string::npos);
    CHECK(r.log_bytes >= r.log.size());
  }
  CompileResult unnamed = compile_kernel(src, "probe.cu", "sm_90a", {"missing"}, cfg);
  CHECK(unnamed.status == CompileResult::Error);
  CHECK_FALSE(unnamed.cached);  // NVRTC refuses a name expression it cannot resolve
  ExtractedSource gated;
  gated.code = "#include \"/etc/passwd\"\n" + src.code;
  CompileResult refused = compile_kernel(gated, "probe.cu", "sm_90a", {"probe"}, cfg);
  CHECK(refused.status == CompileResult::Error);
  CHECK(refused.error.find("line 1") == 0);
  CHECK(cubins_under(dir) == 2);
  fs::remove_all(dir);
}

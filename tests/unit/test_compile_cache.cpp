// The compile cache's size bound: least recently used entries go first.
#include <doctest/doctest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "compile/cache.h"

namespace fs = std::filesystem;

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

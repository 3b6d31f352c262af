// Scratch folders for unit tests that touch the file system.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

// An empty folder of the system's temp directory, unique to this test process and `name`.
inline std::filesystem::path fresh_test_dir(const std::string& name) {
  namespace fs = std::filesystem;
  fs::path d = fs::temp_directory_path() / ("kernrl-test-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

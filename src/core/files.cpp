#include "core/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace kernrl {
namespace fs = std::filesystem;

std::string write_whole_file(const std::string& path, const std::string& content) {
  fs::path parent = fs::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty()) {
    fs::create_directories(parent, ec);
    if (ec) return "cannot create the folder " + parent.string() + ": " + ec.message();
  }
  struct stat st {};
  bool special = ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode);
  if (special && S_ISDIR(st.st_mode)) return "it is a folder";
  std::string target = special ? path : path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(target.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return std::strerror(errno);
  auto undo = [&](int err) {
    ::close(fd);
    if (!special) ::unlink(target.c_str());
    return std::string(std::strerror(err));
  };
  const char* p = content.data();
  size_t n = content.size();
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return undo(errno);
    p += w;
    n -= static_cast<size_t>(w);
  }
  if (!special && ::fsync(fd) != 0) return undo(errno);
  if (::close(fd) != 0) {
    int err = errno;
    if (!special) ::unlink(target.c_str());
    return std::strerror(err);
  }
  if (!special && ::rename(target.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(target.c_str());
    return std::strerror(err);
  }
  return "";
}

}  // namespace kernrl

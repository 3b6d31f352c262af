#include "record/trace_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "core/safe_text.h"

namespace kernrl {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string errno_text(int e) {
  return std::strerror(e);
}

// flock(2) for the lifetime of the object; EINTR retried.
class FileLock {
 public:
  explicit FileLock(int fd) : fd_(fd) {
    while (flock(fd_, LOCK_EX) != 0) {
      if (errno != EINTR) {
        error_ = errno;
        return;
      }
    }
    held_ = true;
  }
  ~FileLock() {
    if (held_) flock(fd_, LOCK_UN);
  }
  bool held() const { return held_; }
  int error() const { return error_; }

 private:
  int fd_;
  bool held_ = false;
  int error_ = 0;
};

// Writes all of `data` (a short write is continued; EINTR retried). False with errno set on
// failure.
bool write_all(int fd, const char* data, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, data, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

}  // namespace

std::string json_line(const json& j) {
  try {
    return j.dump(-1, ' ', false, json::error_handler_t::strict);
  } catch (const json::type_error&) {
    // Invalid UTF-8 somewhere: the same escaping as every record field (core/safe_text.h).
    json copy = j;
    escape_invalid_utf8_in(copy);
    return copy.dump(-1, ' ', false, json::error_handler_t::replace);
  }
}

TraceWriter::TraceWriter(const std::string& path) : path_(path) {
  fs::path parent = fs::path(path).parent_path();
  if (!parent.empty()) {
    std::error_code ec;
    fs::create_directories(parent, ec);
    if (ec)
      throw std::runtime_error("cannot create the folder " + parent.string() +
                               " for the trace file " + path + ": " + ec.message());
  }
  // Read access serves the repair of a cut-off last line; a write-only file is still appended to.
  fd_ = ::open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0 && errno == EACCES)
    fd_ = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0)
    throw std::runtime_error("cannot open the trace file " + path +
                             " for appending: " + errno_text(errno));
  struct stat st {};
  if (fstat(fd_, &st) == 0 && !S_ISREG(st.st_mode)) {
    ::close(fd_);
    fd_ = -1;
    throw std::runtime_error("the trace file " + path + " is not a regular file");
  }
}

TraceWriter::~TraceWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void TraceWriter::append(const TraceRecord& rec) {
  append(rec.to_json());
}

void TraceWriter::append(const json& rec) {
  std::string line = json_line(rec);
  line += '\n';
  std::lock_guard<std::mutex> guard(
      mu_);  // threads of this process share one descriptor (one flock)
  FileLock lock(fd_);
  if (!lock.held())
    throw std::runtime_error("cannot lock the trace file " + path_ + ": " +
                             errno_text(lock.error()));
  struct stat st {};
  if (fstat(fd_, &st) != 0)
    throw std::runtime_error("cannot stat the trace file " + path_ + ": " + errno_text(errno));
  // A writer killed mid-line (kill -9 can cut even a single write short) left a partial last line:
  // end it first, so this record starts on a line of its own. Under the lock, so every writer sees
  // the file between whole records.
  if (st.st_size > 0) {
    char last = '\n';
    ssize_t r;
    do r = ::pread(fd_, &last, 1, st.st_size - 1);
    while (r < 0 && errno == EINTR);
    if (r == 1 && last != '\n') line.insert(line.begin(), '\n');
  }
  if (!write_all(fd_, line.data(), line.size())) {
    int e = errno;
    // Leave the file as it was: no half record for the next writer to start after.
    if (ftruncate(fd_, st.st_size) != 0) {
      // Nothing more to do; the next append ends the partial line.
    }
    throw std::runtime_error("cannot write to the trace file " + path_ + ": " + errno_text(e));
  }
  // In the kernel's hands now: a kill -9 of kernrl loses nothing written.
}

std::vector<TraceRecord> read_trace(const std::string& path, std::vector<TraceProblem>* problems) {
  std::vector<TraceRecord> out;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (problems) problems->push_back({path, 0, "cannot read file"});
    return out;
  }
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      json j = json::parse(line);
      if (!j.is_object() || !j.contains("status") || !j.contains("problem"))
        throw std::runtime_error("not a kernrl record (no status/problem)");
      out.push_back(TraceRecord::from_json(j));
    } catch (const std::exception& e) {
      if (problems) problems->push_back({path, n, e.what()});
    }
  }
  return out;
}

}  // namespace kernrl

#include "grading/run.h"

#include <sys/stat.h>

#include <cstdio>
#include <mutex>

#include "core/errors.h"
#include "core/files.h"
#include "core/hash.h"
#include "core/safe_text.h"
#include "grading/session.h"
#include "record/trace_file.h"
#include "record/training.h"

namespace kernrl {
namespace fs = std::filesystem;

namespace {

// What --resume matches on: the run, the file (absolute and normalised, so a folder may be spelled
// differently; escaped as a record writes it), the hash of its bytes ("" when it could not be
// read).
std::string resume_key(const std::string& run, const std::string& file, const std::string& sha) {
  std::error_code ec;
  fs::path abs = fs::absolute(file, ec);
  std::string path = ec ? file : abs.lexically_normal().string();
  return run + '\x1f' + escape_invalid_utf8(path) + '\x1f' + sha;
}

// The hash of a regular file's bytes; "" when it is not one or cannot be read (as its record has).
std::string file_sha(const std::string& file) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return "";
  try {
    return sha256_hex(read_file(file));
  } catch (const std::exception&) {
    return "";
  }
}

// The parent folder of an output file, created if missing. Throws UsageError naming the option.
void make_parent(const std::string& option, const std::string& path) {
  fs::path parent = fs::path(path).parent_path();
  if (parent.empty()) return;
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec)
    throw UsageError(option + " " + path + ": cannot create the folder " + parent.string() + ": " +
                     ec.message());
}

}  // namespace

Shard Shard::parse(const std::string& text) {
  Shard s;
  if (text.empty()) return s;
  char tail = 0;
  if (std::sscanf(text.c_str(), "%d/%d%c", &s.index, &s.count, &tail) != 2 || s.count < 1 ||
      s.index < 0 || s.index >= s.count)
    throw UsageError("--shard expects I/N with 0 <= I < N, got '" + text + "'");
  return s;
}

bool Shard::holds(const std::string& rel) const {
  return count <= 1 ||
         derive_seed(0, rel) % static_cast<uint64_t>(count) == static_cast<uint64_t>(index);
}

std::string Run::name_for(const fs::path& dir) {
  fs::path abs = fs::absolute(dir).lexically_normal();
  std::string name = abs.filename().string();
  return name.empty() ? abs.parent_path().filename().string() : name;
}

Run::Run(RunOptions opt) : opt_(std::move(opt)) {
  opt_.name = escape_invalid_utf8(opt_.name);  // as every record writes it
  std::optional<uint64_t> resumed;             // a resumed run keeps its seed: its records match an
                                               // uninterrupted run's
  if (!opt_.trace.empty()) {
    make_parent(opt_.trace_option, opt_.trace);
    try {
      writer_ = std::make_unique<TraceWriter>(opt_.trace);
    } catch (const std::runtime_error& e) {
      throw UsageError(opt_.trace_option + ": " + e.what());
    }
    if (opt_.resume)
      for (const auto& r : read_trace(opt_.trace, nullptr)) {
        if (!r.run || *r.run != opt_.name) continue;
        graded_.insert(resume_key(opt_.name, r.file.value_or(""), r.source_sha256.value_or("")));
        if (r.run_seed) resumed = *r.run_seed;
      }
  }
  seed_ = opt_.seed ? *opt_.seed : resumed ? *resumed : fresh_seed();
}

Run::~Run() = default;

uint64_t Run::seed_for(const std::string& key) const {
  return (opt_.seed_key.empty() ? derive_seed(seed_, key)
                                : keyed_seed(opt_.seed_key, seed_, key)) >>
         1;
}

bool Run::graded(const std::string& file) const {
  return !graded_.empty() && graded_.count(resume_key(opt_.name, file, file_sha(file)));
}

void Run::write(TraceRecord& rec) {
  rec.run_seed = seed_;
  if (writer_) writer_->append(rec);
}

std::vector<DiscoveredFile> Run::select(const std::vector<DiscoveredFile>& all,
                                        const Selection& sel, size_t* already) const {
  std::vector<DiscoveredFile> todo;
  const std::string level_prefix = "L" + std::to_string(sel.only_level) + "_";
  for (const auto& f : all) {
    if (!sel.shard.holds(f.rel)) continue;
    if (!f.problem.empty()) {
      if (!sel.only_problem.empty() && f.problem != sel.only_problem) continue;
      if (sel.only_level && f.problem.rfind(level_prefix, 0) != 0) continue;
    }
    if (graded(f.file)) {
      ++*already;
      continue;
    }
    todo.push_back(f);
  }
  return todo;
}

RunTally Run::grade(GradingSession& session, const std::vector<DiscoveredFile>& files,
                    const Selection& sel, const Progress& progress) {
  RunTally tally;
  std::mutex mu;
  for (const DiscoveredFile& f : files) {
    Submission sub;
    sub.file = f.file;
    sub.opt.problem = f.problem;
    sub.opt.problem_from_path = true;
    sub.opt.regular_files_only = true;
    sub.opt.seed = seed_for(f.rel);
    sub.opt.run = opt_.name;
    sub.opt.sample = f.sample;
    sub.only_problem = sel.only_problem;
    sub.only_level = sel.only_level;
    TrainingTags tags;  // a turn of a trajectory layout (docs/grade-dir.md)
    tags.trajectory = f.trajectory;
    tags.turn = f.turn;
    session.submit(std::move(sub), [&, file = f.file, tags](Outcome r) {
      std::lock_guard<std::mutex> l(mu);
      switch (r.kind) {
        case Outcome::Failed:
          // The grader failed on this file, not the kernel: no record, so a resumed run retries it.
          ++tally.internal_errors;
          std::fprintf(stderr,
                       "kernrl grade-dir: %s: internal error, no record written (a --resume run "
                       "retries it): %s\n",
                       escape_invalid_utf8(file).c_str(), escape_invalid_utf8(r.error).c_str());
          return;
        case Outcome::Skipped:  // its launch block names a problem outside the selection
          progress("skipped", r.record);
          return;
        case Outcome::Graded:
          break;
        default:
          return;  // not graded: a run's submissions have no deadline and are never cancelled
      }
      if (!tally.write_error.empty()) return;
      tags.apply(r.record);
      try {
        write(r.record);
      } catch (const std::runtime_error& e) {
        tally.write_error = e.what();
        return;
      }
      ++tally.records;
      progress(r.record.status_text(), r.record);
    });
  }
  session.drain();
  return tally;
}

std::vector<TraceRecord> Run::records() const {
  std::vector<TraceRecord> mine;
  if (opt_.trace.empty()) return mine;
  for (auto& r : read_trace(opt_.trace, nullptr))
    if (r.run && *r.run == opt_.name) mine.push_back(std::move(r));
  return mine;
}

}  // namespace kernrl

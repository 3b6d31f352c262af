// One grading run: its name, its seed and every answer's seed derived from it, what an earlier
// attempt of it already graded (--resume), the slice of a folder a shard grades, and the trace
// file its records are appended to, each stamped with the run seed. `grade-dir` and `serve` both
// grade through one.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "grading/discover.h"
#include "record/trace_record.h"

namespace kernrl {

class TraceWriter;
class GradingSession;

// `--shard I/N`: the I-th (0-based) of N deterministic slices of a folder.
struct Shard {
  int index = 0, count = 1;
  // "I/N" with 0 <= I < N; empty: the whole folder. Throws UsageError naming --shard.
  static Shard parse(const std::string& text);
  // Whether this slice holds the file at `rel` (its path relative to the folder): a fixed hash of
  // the path, so the slices are the same on every machine and build.
  bool holds(const std::string& rel) const;
};

// Which of a folder's files a run grades.
struct Selection {
  Shard shard;
  std::string only_problem;  // a problem id; empty: every problem
  int only_level = 0;        // a level; 0: every level
};

// How grading a run's files went, beyond its records.
struct RunTally {
  size_t records = 0;          // records written
  size_t internal_errors = 0;  // files the grader failed on (named on stderr; no record)
  std::string write_error;     // why a record could not be written; the run stopped writing then
};

struct RunOptions {
  std::string name;              // the records' `run` (escaped as every record writes it)
  std::optional<uint64_t> seed;  // the run seed; none: the resumed run's when there is one, else
                                 // a fresh one
  std::string trace;             // the JSONL file records are appended to; empty: none
  std::string trace_option = "--out";  // the option that names `trace`, for errors
  bool resume = false;  // read `trace` for the records this run already has (and its seed)
};

class Run {
 public:
  // Creates the trace's folder and opens it for appending, then (with resume) reads what this run
  // already graded. Throws UsageError naming the option when the trace cannot be opened.
  explicit Run(RunOptions opt);
  ~Run();
  Run(const Run&) = delete;
  Run& operator=(const Run&) = delete;

  const std::string& name() const { return opt_.name; }
  uint64_t seed() const { return seed_; }
  const std::string& trace() const { return opt_.trace; }
  // The trial seed of an answer, from a key naming it within the run (a file's path relative to
  // the folder graded; a service's request label).
  uint64_t seed_for(const std::string& key) const;
  // With resume: whether the trace already holds this run's record of `file` as it is now (the
  // same path, however spelled, and the same bytes).
  bool graded(const std::string& file) const;
  size_t graded_count() const { return graded_.size(); }
  // Stamps the run seed into `rec`, then appends it to the trace as one line (when there is one).
  // Thread-safe. Throws std::runtime_error when the line cannot be written whole.
  void write(TraceRecord& rec);
  // The files of `all` this run grades: those in the selection (by the problem the layout names;
  // one whose launch block names it is checked once read) and, with resume, not yet graded.
  // *already counts those left out as graded.
  std::vector<DiscoveredFile> select(const std::vector<DiscoveredFile>& all, const Selection& sel,
                                     size_t* already) const;
  // Grades `files` on `session`, each with its seed from its path relative to the folder, and
  // writes each record as soon as it is known. A record that cannot be written stops the writing
  // (later ones would be lost too); a file the grader fails on is named on stderr and gets no
  // record (a resumed run retries it). `progress(status, record)` is called for each record
  // written, and with "skipped" for each file whose launch block names a problem outside the
  // selection. Returns once every file is done.
  using Progress = std::function<void(const std::string& status, const TraceRecord& rec)>;
  RunTally grade(GradingSession& session, const std::vector<DiscoveredFile>& files,
                 const Selection& sel, const Progress& progress);
  // This run's records in the trace as it is now.
  std::vector<TraceRecord> records() const;

  // A run named after a folder: its name ("/" and the like: its parent's).
  static std::string name_for(const std::filesystem::path& dir);

 private:
  RunOptions opt_;
  uint64_t seed_ = 0;
  std::set<std::string> graded_;  // resume keys of the records already in the trace
  std::unique_ptr<TraceWriter> writer_;
};

}  // namespace kernrl

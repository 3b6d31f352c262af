// Retrieved examples for a prompt (docs/prompts.md, "Examples"): verified kernels of the problems
// most similar to the target, from a corpus of the bundled solutions and the `correct` records of
// trace files whose source is still there with the SHA-256 the record holds. Problems are ranked
// by BM25 over the code tokens of their PyTorch code and description: offline, deterministic, the
// same examples for the same corpus.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kernrl {

// The examples section's version: bumped whenever its text changes for the same examples.
constexpr int kExamplesPromptVersion = 1;
// Example kernels larger than this are left out of the corpus.
constexpr size_t kMaxExampleBytes = 16384;

// Lower-case identifier tokens of code or prose: each identifier whole and, for snake_case and
// camelCase names, each of its parts; numbers and punctuation dropped.
std::vector<std::string> code_tokens(const std::string& text);

// Okapi BM25 (k1 1.2, b 0.75, idf log(1 + (N - n + 0.5) / (n + 0.5))) over token lists.
class Bm25 {
 public:
  Bm25() = default;
  explicit Bm25(std::vector<std::vector<std::string>> docs);
  double score(const std::vector<std::string>& query, size_t doc) const;
  size_t size() const { return docs_.size(); }

 private:
  std::vector<std::map<std::string, int>> docs_;
  std::vector<size_t> lengths_;
  std::map<std::string, int> df_;
  double avg_len_ = 0;
};

struct Example {
  std::string id;                 // "L1_26_GELU_/solution.cu" or "trace:<source_sha256>"
  std::string problem;            // its problem's id
  std::string source;             // the kernel file
  std::optional<double> speedup;  // a trace record's speedup
};

class ExampleCorpus {
 public:
  // The bundled solutions of every problem under `problems_root` and the verified kernels of
  // `traces` (files or folders of *.jsonl). What cannot be used (an unreadable trace, a changed
  // source) is counted in *warnings, one line per cause (optional).
  ExampleCorpus(const std::filesystem::path& problems_root, const std::vector<std::string>& traces,
                std::vector<std::string>* warnings);

  // The examples for `problem_id`: one per problem (its fastest trace kernel, else its bundled
  // solution), the `k` most similar problems first (ties by problem id), the target's own
  // problem left out unless `include_own`. Throws std::invalid_argument for a problem the
  // corpus's root does not have.
  std::vector<const Example*> nearest(const std::string& problem_id, size_t k,
                                      bool include_own) const;

  // The examples section of a prompt (empty for none), put before the task prompt.
  std::string section(const std::vector<const Example*>& examples) const;

  size_t size() const { return examples_.size(); }

 private:
  struct Problem {
    std::string id, torch;
    std::vector<std::string> tokens;
  };
  std::vector<Problem> problems_;
  std::map<std::string, size_t> by_id_;
  std::vector<Example> examples_;
  std::map<std::string, size_t> best_;  // problem id -> its example
  Bm25 index_;
};

// The ids of a list of examples.
std::vector<std::string> example_ids(const std::vector<const Example*>& examples);

}  // namespace kernrl

#include "contract/examples.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "core/hash.h"
#include "core/problem.h"
#include "core/problem_catalog.h"
#include "extract/extract.h"
#include "record/trace_file.h"

namespace kernrl {
namespace fs = std::filesystem;

std::vector<std::string> code_tokens(const std::string& text) {
  std::vector<std::string> out;
  auto is_word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t i = 0; i < text.size();) {
    bool starts_word = std::isalpha(static_cast<unsigned char>(text[i])) || text[i] == '_';
    if (!starts_word) {
      if (std::isdigit(static_cast<unsigned char>(text[i])))
        while (i < text.size() && is_word(text[i])) ++i;  // a number, with any suffix
      else
        ++i;
      continue;
    }
    size_t j = i;
    while (j < text.size() && is_word(text[j])) ++j;
    std::string word = text.substr(i, j - i);
    std::vector<std::string> parts;
    std::string part;
    for (size_t k = 0; k < word.size(); ++k) {
      char c = word[k];
      bool upper = std::isupper(static_cast<unsigned char>(c));
      bool after_lower = k > 0 && std::islower(static_cast<unsigned char>(word[k - 1]));
      if (c == '_' || (upper && after_lower)) {
        if (!part.empty()) parts.push_back(part);
        part.clear();
        if (c == '_') continue;
      }
      if (!std::isdigit(static_cast<unsigned char>(c)))
        part += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    if (!part.empty()) parts.push_back(part);
    std::string whole;
    for (char c : word)
      if (c != '_' && !std::isdigit(static_cast<unsigned char>(c)))
        whole += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (!whole.empty()) out.push_back(whole);
    if (parts.size() > 1)
      for (auto& p : parts) out.push_back(std::move(p));
    i = j;
  }
  return out;
}

Bm25::Bm25(std::vector<std::vector<std::string>> docs) {
  size_t total = 0;
  for (const auto& d : docs) {
    std::map<std::string, int> tf;
    for (const auto& t : d) ++tf[t];
    for (const auto& [t, n] : tf) ++df_[t];
    docs_.push_back(std::move(tf));
    lengths_.push_back(d.size());
    total += d.size();
  }
  avg_len_ = docs_.empty() ? 0 : static_cast<double>(total) / static_cast<double>(docs_.size());
}

double Bm25::score(const std::vector<std::string>& query, size_t doc) const {
  const double k1 = 1.2, b = 0.75, n_docs = static_cast<double>(docs_.size());
  const auto& tf = docs_.at(doc);
  double len_norm = avg_len_ > 0 ? static_cast<double>(lengths_[doc]) / avg_len_ : 1;
  double s = 0;
  std::set<std::string> seen;
  for (const auto& t : query) {
    if (!seen.insert(t).second) continue;
    auto f = tf.find(t);
    if (f == tf.end()) continue;
    double n = df_.at(t);
    double idf = std::log(1 + (n_docs - n + 0.5) / (n + 0.5));
    double x = f->second;
    s += idf * x * (k1 + 1) / (x + k1 * (1 - b + b * len_norm));
  }
  return s;
}

namespace {

std::optional<std::string> slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return s.str();
}

std::vector<std::string> jsonl_files(const std::string& input, std::vector<std::string>* warnings) {
  std::error_code ec;
  if (!fs::is_directory(input, ec)) return {input};
  std::vector<std::string> files;
  for (fs::recursive_directory_iterator it(input, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_regular_file(ec) && it->path().extension() == ".jsonl")
      files.push_back(it->path().string());
  if (ec && warnings) warnings->push_back(input + ": " + ec.message());
  std::sort(files.begin(), files.end());
  return files;
}

// The kernel file of a graded source: a .cu as it is, anything else through extraction.
std::optional<std::string> kernel_of(const std::string& text, const std::string& file) {
  if (fs::path(file).extension() == ".cu") return text;
  try {
    return extract_kernel(text, file).code;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace

ExampleCorpus::ExampleCorpus(const fs::path& root, const std::vector<std::string>& traces,
                             std::vector<std::string>* warnings) {
  std::vector<std::vector<std::string>> docs;
  for (const fs::path& dir : problem_dirs(root)) {
    ProblemSpec p;
    try {
      p = load_problem(dir);
    } catch (const std::exception& e) {
      if (warnings) warnings->push_back(dir.string() + ": " + e.what());
      continue;
    }
    Problem pr{p.id, p.torch, code_tokens(p.torch + "\n" + p.description + "\n" + p.name)};
    by_id_[p.id] = problems_.size();
    docs.push_back(pr.tokens);
    problems_.push_back(std::move(pr));
    if (auto s = slurp(dir / "solution.cu"); s && s->size() <= kMaxExampleBytes)
      examples_.push_back({p.id + "/solution.cu", p.id, *s, std::nullopt});
  }
  index_ = Bm25(std::move(docs));

  std::map<std::string, size_t> skipped;  // why -> records
  std::set<std::string> seen;
  for (const std::string& input : traces)
    for (const std::string& file : jsonl_files(input, warnings)) {
      std::vector<TraceProblem> bad;
      for (const TraceRecord& r : read_trace(file, &bad)) {
        if (!r.status_is(Status::Correct) || r.suspicious.value_or(false) || !r.problem ||
            !by_id_.count(*r.problem) || !r.source_sha256 || !r.file)
          continue;
        if (!seen.insert(*r.source_sha256).second) continue;
        auto text = slurp(*r.file);
        if (!text) {
          ++skipped["its file is gone"];
          continue;
        }
        if (sha256_hex(*text) != *r.source_sha256) {
          ++skipped["its file changed since it was graded"];
          continue;
        }
        auto code = kernel_of(*text, *r.file);
        if (!code || code->size() > kMaxExampleBytes) {
          ++skipped["no kernel file of at most 16384 bytes in it"];
          continue;
        }
        examples_.push_back({"trace:" + *r.source_sha256, *r.problem, *code,
                             r.speedup.get() ? std::optional<double>(*r.speedup) : std::nullopt});
      }
      if (!bad.empty() && bad.front().line == 0 && warnings)
        warnings->push_back(file + ": " + bad.front().message);
    }
  if (warnings)
    for (const auto& [why, n] : skipped)
      warnings->push_back(std::to_string(n) +
                          " correct record(s) left out of the examples: " + why);
  // One example per problem: its fastest trace kernel, else its bundled solution.
  for (size_t i = 0; i < examples_.size(); ++i) {
    const Example& e = examples_[i];
    auto it = best_.find(e.problem);
    if (it == best_.end()) {
      best_[e.problem] = i;
      continue;
    }
    const Example& cur = examples_[it->second];
    double a = e.speedup.value_or(-1), b = cur.speedup.value_or(-1);
    if (a > b || (a == b && e.id < cur.id)) it->second = i;
  }
}

std::vector<const Example*> ExampleCorpus::nearest(const std::string& problem_id, size_t k,
                                                   bool include_own) const {
  auto target = by_id_.find(problem_id);
  if (target == by_id_.end())
    throw std::invalid_argument("no problem " + problem_id + " among the corpus's problems");
  const std::vector<std::string>& query = problems_[target->second].tokens;
  std::vector<std::pair<double, const Example*>> ranked;
  for (const auto& [pid, ex] : best_) {
    if (pid == problem_id && !include_own) continue;
    ranked.push_back({index_.score(query, by_id_.at(pid)), &examples_[ex]});
  }
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first > b.first;
    return a.second->problem < b.second->problem;
  });
  std::vector<const Example*> out;
  for (size_t i = 0; i < ranked.size() && i < k; ++i) out.push_back(ranked[i].second);
  return out;
}

std::string ExampleCorpus::section(const std::vector<const Example*>& examples) const {
  if (examples.empty()) return "";
  std::ostringstream o;
  o << "# Examples\n\nVerified kernels for problems similar to yours: each is a complete kernel "
       "file that passed kernrl's checks for its own problem. They show the format and "
       "techniques; your problem, below, is a different one.\n";
  int n = 0;
  for (const Example* e : examples) {
    o << "\n## Example " << ++n << ": " << e->problem << "\n\nIts PyTorch code:\n```python\n"
      << problems_[by_id_.at(e->problem)].torch;
    if (problems_[by_id_.at(e->problem)].torch.back() != '\n') o << "\n";
    o << "```\n\nA correct kernel file for it:\n```cuda\n" << e->source;
    if (e->source.empty() || e->source.back() != '\n') o << "\n";
    o << "```\n";
  }
  o << "\n";
  return o.str();
}

std::vector<std::string> example_ids(const std::vector<const Example*>& examples) {
  std::vector<std::string> ids;
  for (const Example* e : examples) ids.push_back(e->id);
  return ids;
}

}  // namespace kernrl

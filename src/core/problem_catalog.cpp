#include "core/problem_catalog.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <tuple>

#include "core/problem.h"

namespace kernrl {
namespace fs = std::filesystem;

std::string kernelbench_problem_id(const std::string& name) {
  // level_<L>_problem_<N>_ anywhere in the name, found by plain scanning.
  auto digits_at = [&](size_t i, size_t* end) {
    size_t j = i;
    while (j < name.size() && j - i < 9 && std::isdigit(static_cast<unsigned char>(name[j]))) ++j;
    *end = j;
    return j > i && (j >= name.size() || !std::isdigit(static_cast<unsigned char>(name[j])));
  };
  for (size_t at = name.find("level_"); at != std::string::npos; at = name.find("level_", at + 1)) {
    size_t l_end, n_end;
    size_t l = at + 6;
    if (!digits_at(l, &l_end) || name.compare(l_end, 9, "_problem_") != 0) continue;
    size_t n = l_end + 9;
    if (!digits_at(n, &n_end) || n_end >= name.size() || name[n_end] != '_') continue;
    return "L" + name.substr(l, l_end - l) + "_" + name.substr(n, n_end - n);
  }
  return "";
}

std::string problem_id_of_dir(const fs::path& dir) {
  fs::path d = dir;
  if (d.filename().empty()) d = d.parent_path();
  return d.parent_path().filename().string() + "_" + d.filename().string();
}

std::vector<fs::path> problem_dirs(const fs::path& root) {
  std::vector<std::tuple<int, int, fs::path>> found;
  std::error_code ec;
  for (const auto& lvl : fs::directory_iterator(root, ec)) {
    auto ln = lvl.path().filename().string();
    if (!lvl.is_directory() || ln.size() < 2 || ln[0] != 'L') continue;
    for (const auto& p : fs::directory_iterator(lvl.path(), ec))
      if (p.is_directory() && fs::exists(p.path() / "problem.yaml"))
        found.emplace_back(std::atoi(ln.c_str() + 1), std::atoi(p.path().filename().c_str()),
                           p.path());
  }
  std::sort(found.begin(), found.end());
  std::vector<fs::path> out;
  for (auto& f : found) out.push_back(std::get<2>(f));
  return out;
}

namespace {

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string joined(const std::vector<std::string>& ids) {
  std::string names;
  for (const auto& m : ids) names += " " + m;
  return names;
}

}  // namespace

std::string match_problem_id(const std::vector<std::string>& ids, const std::string& id) {
  // Exact, then a prefix ("L1_23" names L1_23_Softmax; once the number is given, "L1_23_Soft" any
  // prefix will do), then a substring ("softmax", "gelu"); case-insensitive after the exact match.
  if (id.size() > kMaxProblemQuery)
    throw SpecError("a problem name is at most " + std::to_string(kMaxProblemQuery) +
                    " characters (this one has " + std::to_string(id.size()) + ")");
  std::vector<std::string> prefix, inside;
  std::string want = lower(id);
  bool number_given = std::count(id.begin(), id.end(), '_') >= 2;
  for (const auto& did : ids) {
    if (did == id) return did;
    std::string ld = lower(did);
    if (ld.rfind(want, 0) == 0 &&
        (number_given || ld.size() == want.size() || ld[want.size()] == '_'))
      prefix.push_back(did);
    else if (!want.empty() && ld.find(want) != std::string::npos)
      inside.push_back(did);
  }
  const std::vector<std::string>& matches = !prefix.empty() ? prefix : inside;
  if (matches.size() == 1) return matches[0];
  if (matches.size() > 1) throw SpecError("problem '" + id + "' is ambiguous:" + joined(matches));
  // Nothing matches: the closest names, by edit distance on the lower-case ids.
  std::vector<std::pair<size_t, std::string>> near;
  for (const auto& did : ids) {
    std::string ld = lower(did);
    size_t dist = std::min(edit_distance(want, ld),
                           edit_distance(want, ld.substr(ld.find('_', ld.find('_') + 1) + 1)));
    if (dist <= std::max<size_t>(3, want.size() / 3)) near.emplace_back(dist, did);
  }
  std::sort(near.begin(), near.end());
  std::string hint;
  for (size_t i = 0; i < near.size() && i < 3; ++i)
    hint += (i ? ", " : "; did you mean ") + near[i].second;
  throw SpecError("unknown problem '" + id + "'" + hint + " (kernrl list shows all problems)");
}

fs::path find_problem_dir(const fs::path& root, const std::string& id) {
  std::vector<fs::path> all = problem_dirs(root);
  std::vector<std::string> ids;
  for (const auto& d : all) ids.push_back(problem_id_of_dir(d));
  std::string found = match_problem_id(ids, id);
  return all[static_cast<size_t>(std::find(ids.begin(), ids.end(), found) - ids.begin())];
}

}  // namespace kernrl

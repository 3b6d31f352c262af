#include "grading/discover.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstring>
#include <map>
#include <regex>
#include <set>
#include <stdexcept>

#include "core/paths.h"
#include "core/problem.h"
#include "core/safe_text.h"

namespace kernrl {
namespace fs = std::filesystem;

namespace {

bool graded_extension(const fs::path& p) {
  auto ext = p.extension().string();
  return ext == ".cu" || ext == ".md" || ext == ".txt" || ext == ".py";
}

// A path for a message: valid UTF-8 whatever the bytes of its name.
std::string shown(const fs::path& p) {
  return escape_invalid_utf8(p.string());
}

// A turn number from a file name (1 to INT_MAX); false with a warning otherwise.
bool parse_turn(const std::string& s, std::optional<int>* out, std::vector<std::string>* warnings,
                const fs::path& file) {
  int v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec == std::errc() && ptr == s.data() + s.size() && v >= 1) {
    *out = v;
    return true;
  }
  warnings->push_back(shown(file) + ": the turn number " +
                      (s.size() > 30 ? s.substr(0, 30) + "..." : s) +
                      " in the name is out of range (1 to " + std::to_string(INT_MAX) +
                      "); graded as no turn of a trajectory");
  return false;
}

}  // namespace

Discovery discover_files(const fs::path& dir, const std::vector<fs::path>& exclude) {
  Discovery d;
  std::set<std::pair<dev_t, ino_t>> excluded;
  for (const auto& e : exclude) {
    struct stat st {};
    if (!e.empty() && ::stat(e.c_str(), &st) == 0) excluded.insert({st.st_dev, st.st_ino});
  }

  struct stat root_st {};
  if (::stat(dir.c_str(), &root_st) != 0)
    throw std::runtime_error("cannot read " + shown(dir) + ": " + std::strerror(errno));
  if (!S_ISDIR(root_st.st_mode)) throw std::runtime_error(shown(dir) + " is not a folder");

  // Depth-first over real folders; (device, inode) pairs guard against a folder reached twice
  // (bind mounts). Symlinks to folders are never followed, so a symlink loop cannot recurse.
  std::vector<std::string> rels;
  std::set<std::pair<dev_t, ino_t>> seen = {{root_st.st_dev, root_st.st_ino}};
  std::vector<fs::path> stack = {fs::path()};
  while (!stack.empty()) {
    fs::path rel_dir = stack.back();
    stack.pop_back();
    fs::path here = rel_dir.empty() ? dir : dir / rel_dir;
    std::error_code ec;
    fs::directory_iterator it(here, ec), end;
    if (ec) {
      if (rel_dir.empty())
        throw std::runtime_error("cannot read " + shown(dir) + ": " + ec.message());
      ++d.unreadable_folders;
      d.warnings.push_back("cannot read the folder " + shown(here) + ": " + ec.message() +
                           "; its files are not graded");
      continue;
    }
    std::vector<fs::path> subdirs;
    for (; it != end; it.increment(ec)) {
      if (ec) break;
      const fs::path& p = it->path();
      std::string name = p.filename().string();
      if (name.empty() || name[0] == '.') continue;  // hidden files and folders
      fs::path rel = rel_dir / p.filename();
      struct stat lst {};
      if (::lstat(p.c_str(), &lst) != 0) {
        if (graded_extension(p))
          rels.push_back(rel.string());  // its record says why it cannot be read
        continue;
      }
      if (S_ISDIR(lst.st_mode)) {
        if (seen.insert({lst.st_dev, lst.st_ino}).second) subdirs.push_back(rel);
        continue;
      }
      if (S_ISLNK(lst.st_mode)) {
        struct stat st {};
        if (::stat(p.c_str(), &st) != 0) {
          int e = errno;
          if (graded_extension(p)) {
            rels.push_back(rel.string());  // graded as unreadable: the record says why
            d.warnings.push_back(
                shown(p) + ": " +
                (e == ELOOP ? "a symlink loop"
                            : "a dangling symlink (" + std::string(std::strerror(e)) + ")") +
                "; recorded as unreadable");
          } else if (e == ELOOP) {
            d.warnings.push_back(shown(p) + ": a symlink loop; skipped");
          }
          continue;
        }
        if (S_ISDIR(st.st_mode)) {
          d.warnings.push_back(
              shown(p) +
              ": a symlink to a folder; not followed (give that folder to grade-dir itself)");
          continue;
        }
        if (!graded_extension(p)) continue;
        if (excluded.count({st.st_dev, st.st_ino})) {
          ++d.excluded_outputs;
          continue;
        }
        rels.push_back(rel.string());
        continue;
      }
      if (!graded_extension(p)) continue;
      if (excluded.count({lst.st_dev, lst.st_ino})) {
        ++d.excluded_outputs;
        continue;
      }
      rels.push_back(
          rel.string());  // regular or not: a FIFO or device gets a record saying it cannot be read
    }
    if (ec) {
      ++d.unreadable_folders;
      d.warnings.push_back("cannot list all of the folder " + shown(here) + ": " + ec.message() +
                           "; some of its files may not be graded");
    }
    std::sort(subdirs.rbegin(), subdirs.rend());
    for (auto& s : subdirs) stack.push_back(std::move(s));
  }

  // Path order, as before: the order of the whole relative path.
  std::vector<std::string> files;
  for (const auto& r : rels) files.push_back((dir / r).string());
  std::vector<size_t> order(rels.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return files[a] < files[b]; });

  static const std::regex kb(
      R"(level_(\d+)_problem_(\d+)_sample_(\d+)(_turn_(\d+))?_kernel\.(cu|md|txt|py)$)");
  static const std::regex folder_turn(R"(^turn_(\d+)(_[^/]*)?\.(cu|md|txt|py)$)");
  std::map<std::string, int> per_folder;
  std::map<std::string, std::map<std::string, int>> trajectory_places;
  for (size_t i : order) {
    DiscoveredFile f{files[i], rels[i], "", std::nullopt, std::nullopt, std::nullopt};
    fs::path fp(f.file);
    std::string name = fp.filename().string();
    std::string folder_key = fp.parent_path().string();
    std::smatch m;
    if (std::regex_search(name, m, kb)) {
      // Numbers are kept as text for the problem id: one with too many digits is an unknown
      // problem.
      f.problem = "L" + m[1].str() + "_" + m[2].str();
      if (m[5].matched && parse_turn(m[5].str(), &f.turn, &d.warnings, fp)) {
        std::string stem = name.substr(0, static_cast<size_t>(m.position(4)));
        fs::path rel_folder = fs::path(f.rel).parent_path();
        f.trajectory = (rel_folder.empty() ? fs::path(stem) : rel_folder / stem).string();
      }
      const std::string s = m[3].str();
      int v = 0;
      auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      if (ec == std::errc() && ptr == s.data() + s.size()) {
        f.sample = v;
      } else {
        d.warnings.push_back(shown(fp) + ": the sample number " +
                             (s.size() > 30 ? s.substr(0, 30) + "..." : s) +
                             " in the name is out of range (0 to " + std::to_string(INT_MAX) +
                             "); graded with sample null");
      }
    } else if (std::regex_match(name, m, folder_turn) &&
               parse_turn(m[1].str(), &f.turn, &d.warnings, fp)) {
      // DIR/[<problem>/]<trajectory>/turn_T.cu: the trajectory is the folder; its sample number is
      // its place among the trajectory folders beside it.
      fs::path traj = fs::path(f.rel).parent_path();
      f.trajectory = traj.empty() ? std::string(".") : traj.string();
      std::string outer = fp.parent_path().parent_path().string();
      auto& places = trajectory_places[outer];
      auto at = places.find(f.trajectory.value());
      if (at == places.end())
        at = places.emplace(*f.trajectory, static_cast<int>(places.size())).first;
      f.sample = at->second;
      // The problem: the folder holding the trajectory's folder (inside DIR), else the
      // trajectory's folder.
      std::string parent =
          traj.has_parent_path() ? fp.parent_path().parent_path().filename().string() : "";
      for (const std::string& folder : {parent, fp.parent_path().filename().string()}) {
        if (folder.empty() || folder.size() >= 256 || traj.empty() || !f.problem.empty()) continue;
        try {
          f.problem = problem_id_of_dir(find_problem_dir(problems_dir(), folder));
        } catch (const SpecError&) {
          // Not a problem folder: the launch block (or the name) must say.
        }
      }
    } else {
      f.sample = per_folder[folder_key]++;
      std::string parent = fp.parent_path().filename().string();
      if (!parent.empty() && parent.size() < 256) {
        try {
          f.problem = problem_id_of_dir(find_problem_dir(problems_dir(), parent));
        } catch (const SpecError&) {
          // Not a problem folder: the launch block (or the name) must say.
        }
      }
    }
    if (!f.problem.empty() && f.problem.size() < 256) {
      try {
        f.problem = problem_id_of_dir(find_problem_dir(problems_dir(), f.problem));
      } catch (const SpecError&) {
        // Left for the record: the file's name says it is for a problem kernrl does not have.
      }
    }
    d.files.push_back(std::move(f));
  }
  return d;
}

}  // namespace kernrl

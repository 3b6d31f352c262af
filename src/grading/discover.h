// grade-dir's view of a directory: which files are samples, of which problem, with which number.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace kernrl {

struct DiscoveredFile {
  std::string file;     // DIR joined with `rel`: the path written into the record
  std::string rel;      // the path relative to DIR (shard slices and seeds derive from it)
  std::string problem;  // what the layout names (maybe a problem kernrl does not have); empty: the
                        // launch block says
  std::optional<int> sample;  // from the name or the position in its folder; nullopt: out of range
  // A turn of a multi-turn trajectory (docs/grade-dir.md, "Trajectories"): the trajectory's id and
  // the turn, from the name (..._sample_S_turn_T_kernel.cu) or the folder (<trajectory>/turn_T.cu).
  std::optional<std::string> trajectory;
  std::optional<int> turn;
};

struct Discovery {
  std::vector<DiscoveredFile> files;  // in path order
  std::vector<std::string> warnings;  // one line each, naming the path and the cause
  size_t unreadable_folders = 0;  // folders whose files could not be listed (reported in warnings)
  size_t excluded_outputs = 0;    // kernrl's own outputs found under DIR and left out
};

// Every .cu/.md/.txt entry under `dir` (recursively; hidden entries skipped; symlinks to files
// followed, symlinks to folders not), minus the files in `exclude` (compared by device and inode,
// so any spelling of the path or a link to it matches). Never throws for what it finds: folders it
// cannot read, symlink loops, dangling links and sample numbers out of range become warnings (an
// unreadable entry is still listed, so it gets a record saying why). Throws std::runtime_error only
// when `dir` itself cannot be read.
Discovery discover_files(const std::filesystem::path& dir,
                         const std::vector<std::filesystem::path>& exclude);

}  // namespace kernrl

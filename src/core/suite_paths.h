// Where problem suites (`kernrl suite add`, `--suite`) and their baseline files live.
#pragma once

#include <filesystem>
#include <string>

namespace kernrl {

// Where baseline files are looked up: the active suite's baselines/ (KERNRL_SUITE, set by
// `--suite`), else the data directory's.
std::filesystem::path baselines_dir();
// Where `kernrl suite add` writes suites by default and `--suite NAME` finds them:
// $KERNRL_SUITES, else $XDG_DATA_HOME/kernrl/suites, else ~/.local/share/kernrl/suites.
std::filesystem::path suites_dir();
// The suite `name_or_dir` names (`--suite`, `serve --suites`): a folder holding problems/, else
// the suites folder's entry of that name; absolute. Empty when neither holds a problems/ folder.
std::filesystem::path find_suite(const std::string& name_or_dir);

}  // namespace kernrl

// Where kernrl finds its data (problems/, configs/) and its helper executables.
#pragma once

#include <filesystem>
#include <string>

namespace kernrl {

// $KERNRL_HOME, else the installed share/kernrl, else the source tree the binary was built from.
std::filesystem::path data_dir();
std::filesystem::path problems_dir();
// The directory holding the running executable.
std::filesystem::path exe_dir();
// kernrl-nvrtc or kernrl-worker: beside the executable (a build tree), else in
// <exe_dir>/../libexec/kernrl (an installed tree, wherever it was installed or moved).
std::filesystem::path helper_exe(const std::string& name);

}  // namespace kernrl

// The compile client's side of `kernrl-nvrtc --server` (src/nvrtc/server.h): one fork server per
// kernrl process, started on first use with an empty environment in an empty directory, spoken to
// in ServerJob / ServerReply frames (protocol/compiler.h) by any number of threads at once, and
// started again when it dies. The server forks a sandboxed child per job, with the job's time,
// memory and output bounds; the server's own failures (it could not start, it died) are nullopt,
// and the caller compiles in a kernrl-nvrtc process of its own instead.
#pragma once

#include <optional>
#include <string>

#include "core/config.h"
#include "core/subprocess.h"
#include "protocol/compiler.h"

namespace kernrl {

// What the server said of one job: how its child ended, and its whole stdout.
struct ServedJob {
  ProcessResult result;
  std::string pch;  // ServerReply::pch
};

// Runs `job` (its id is set here) with `body` on this process's fork server; nullopt when the
// server could not take it. After three failures of the server in a row without a job answered, the
// process stops using it.
std::optional<ServedJob> run_on_server(ServerJob job, const std::string& body, const Config& cfg);

}  // namespace kernrl

// The fork server: `kernrl-nvrtc --server [--pch-sets N]`. One long-lived process loads NVRTC and
// forks a child per compile; the child enters the same sandbox as a one-shot compile (its include
// directories, plus the server's folder of precompiled headers, readable only) before it reads the
// job's body, so the submission is only ever parsed inside the sandbox. The server itself never
// parses a submission and never compiles one.
//
// Precompiled headers (NVRTC's PCH, which only the NVRTC instance that made it can use, and so
// every child forked from the server): when a second job's leading #include lines name the same
// headers (ServerJob::pch_headers), a builder child compiles kernrl's own anchor text with those
// headers pre-included and writes a PCH into the folder (mode 0700, the server's own, removed when
// it exits); every later compile with the same options and headers pre-includes them and uses that
// PCH. At most N PCHs are kept (default 8; 0: none); one is built at a time, and
// compiles that arrive meanwhile compile without. Each child has the job's time, memory and
// output bounds; the server answers every job (docs/protocol.md) and ends when its stdin closes.
#pragma once

#include <string>
#include <vector>

namespace kernrl::nvrtc {

int run_server(const std::vector<std::string>& args);

}  // namespace kernrl::nvrtc

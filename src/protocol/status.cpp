#include "protocol/status.h"

namespace kernrl {

const char* to_string(Status s) {
  switch (s) {
    case Status::Correct:
      return "correct";
    case Status::Incorrect:
      return "incorrect";
    case Status::Compiled:
      return "compiled";
    case Status::FormatError:
      return "format_error";
    case Status::CompileError:
      return "compile_error";
    case Status::LaunchError:
      return "launch_error";
    case Status::RuntimeError:
      return "runtime_error";
    case Status::Timeout:
      return "timeout";
    case Status::InternalError:
      return "internal_error";
  }
  return "internal_error";
}

std::optional<Status> status_from_string(std::string_view name) {
  for (Status s : kAllStatuses)
    if (name == to_string(s)) return s;
  return std::nullopt;
}

}  // namespace kernrl

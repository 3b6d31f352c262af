// What became of an answer submitted to a grading session (grading/session.h): one of five kinds.
// `eval`, `grade-dir` (grading/run.h) and `serve` act on the kind.
#pragma once

#include <string>

#include "record/trace_record.h"

namespace kernrl {

struct Outcome {
  enum Kind {
    Graded,     // `record` is the complete kernrl.trace.v1 record
    Skipped,    // outside the selection (Submission::only_problem, only_level): `record` holds
                // only problem and file
    Expired,    // its deadline (Submission::deadline) would pass before it could be compiled or
                // run: nothing was graded
    Cancelled,  // cancel_queued() dropped it before it started: nothing was graded
    Failed,     // the grader failed on this answer, not the kernel (`error`): no record
  } kind = Failed;
  TraceRecord record;
  // Graded: kernrl's own input was wrong (eval exits 2), and why; the record says so too.
  std::string usage_error;
  std::string error;  // Failed: what went wrong
};

}  // namespace kernrl

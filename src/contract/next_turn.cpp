#include "contract/next_turn.h"

#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "core/safe_text.h"
#include "record/feedback.h"

namespace kernrl {

namespace {

struct Language {
  const char* name;
  const char* fence;  // the code block's info string
  const char* what;   // what an answer is
};

const Language kLanguages[] = {
    {"cuda", "cuda", "CUDA kernel file (device code and its /* kernrl launch block)"},
    {"triton", "python", "Triton kernel file (@triton.jit kernels and their kernrl launch block)"},
};

const Language& language(const std::string& name) {
  for (const Language& l : kLanguages)
    if (name == l.name) return l;
  std::string all;
  for (const Language& l : kLanguages) all += std::string(all.empty() ? "" : ", ") + l.name;
  throw std::invalid_argument("unknown prompt language '" + name + "' (languages: " + all + ")");
}

std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3g", v);
  return b;
}

std::string dims(const std::vector<int64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

// The last `n` non-empty lines of `text`.
std::string last_lines(const std::string& text, size_t n) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) lines.push_back(l);
  std::string out;
  for (size_t i = lines.size() > n ? lines.size() - n : 0; i < lines.size(); ++i)
    out += lines[i] + "\n";
  return out;
}

// What the status means, in one sentence.
std::string status_meaning(const TraceRecord& rec) {
  if (!rec.status) return "unknown";
  switch (*rec.status) {
    case Status::Correct:
      return rec.suspicious.value_or(false)
                 ? "correct, but measured faster than the hardware allows (suspicious: not counted "
                   "as correct)"
                 : "correct on every trial and every timed input set";
    case Status::Incorrect:
      return "it ran, but an output differed from the reference, an input was modified, or a timed "
             "run gave a different answer";
    case Status::FormatError:
      return "no usable kernel file could be read from the answer";
    case Status::CompileError:
      return "the compiler (NVRTC) rejected it";
    case Status::LaunchError:
      return "the launch block's plan could not be launched";
    case Status::RuntimeError:
      return "the kernel faulted on the GPU";
    case Status::Timeout:
      return "it did not finish within the time limit";
    case Status::Compiled:
      return "it compiled; nothing ran (no GPU)";
    case Status::InternalError:
      return "kernrl could not grade it (not the answer's fault)";
  }
  return "unknown";
}

// The instruction for the next answer.
std::string instruction(const TraceRecord* rec, const Language& lang) {
  std::string fix;
  if (!rec || !rec->status) {
    fix = "Review your previous answer against the problem and the contract and improve it.";
  } else {
    switch (*rec->status) {
      case Status::Correct:
        fix = rec->suspicious.value_or(false)
                  ? "Your kernel's timing is not credible: make sure every output element is "
                    "computed on every run from the current inputs (no caching between runs, no "
                    "skipped work)."
                  : "It is correct. Make it faster while keeping it correct: cut memory traffic "
                    "(fuse passes, vectorise loads, reuse data in shared memory or registers), "
                    "keep the GPU busy (enough blocks, occupancy) and avoid local-memory spills.";
        break;
      case Status::Incorrect:
        fix =
            "Find why the output differs: check the math against the PyTorch code, indexing "
            "and strides, reductions and their order, edge handling at every size set (odd "
            "sizes included), and that every output element is written and no input modified.";
        break;
      case Status::FormatError:
        fix =
            "Answer with exactly one code block holding the complete kernel file, its launch "
            "block included, as the contract above states.";
        break;
      case Status::CompileError:
        fix =
            "Fix the compile errors listed above (line numbers are lines of your file); keep "
            "the file device code only, with no host code and no includes outside the "
            "contract's list.";
        break;
      case Status::LaunchError:
        fix =
            "Fix the launch block: kernel names, the argument list and its order, grid and "
            "block limits (at most 1024 threads per block) and shared memory, at every size set.";
        break;
      case Status::RuntimeError:
        fix =
            "Fix the fault: bound every index by the tensor sizes at every size set, check the "
            "grid's coverage, alignment of vector loads and shared-memory bounds.";
        break;
      case Status::Timeout:
        fix =
            "Make it finish: look for loops that never end, barriers not every thread of a "
            "block reaches, and grids or loops far larger than the problem.";
        break;
      case Status::Compiled:
        fix = "It compiles; make sure it is correct for every size set, then make it fast.";
        break;
      case Status::InternalError:
        fix = "The grader failed on it; answer again with your best kernel.";
        break;
    }
  }
  return fix + "\n\nAnswer with the complete " + lang.what + " in one ```" + lang.fence +
         " code block.\n";
}

}  // namespace

std::vector<std::string> prompt_languages() {
  std::vector<std::string> v;
  for (const Language& l : kLanguages) v.push_back(l.name);
  return v;
}

std::string key_error_lines(const TraceRecord& rec, int max_lines) {
  const trace::Error* err = rec.error.get();
  if (!err) return "";
  std::string out;
  if (err->message && !err->message->empty())
    out += (err->line ? "line " + std::to_string(*err->line) + ": " : std::string()) +
           last_lines(*err->message, 4);
  if (err->log && !err->log->empty()) {
    if (rec.status_is(Status::CompileError)) {
      std::string key = key_log_lines(*err->log, max_lines);
      out += key.empty() ? last_lines(*err->log, static_cast<size_t>(max_lines)) : key;
    } else {
      out += last_lines(*err->log, 6);
    }
  }
  return out;
}

std::string launch_facts_text(const TraceRecord& rec) {
  if (!rec.launches) return "";
  std::string out;
  for (const trace::Launch& l : *rec.launches) {
    std::string s =
        "launch " + std::to_string(l.index.value_or(0)) + " (" + l.kernel.value_or("?") + ")";
    if (l.repeats && *l.repeats == 0) {
      out += s + ": not launched at these sizes\n";
      continue;
    }
    if (l.grid) s += ": grid " + dims(*l.grid);
    if (l.block) s += ", block " + dims(*l.block);
    if (l.registers) s += ", " + std::to_string(*l.registers) + " registers/thread";
    if (l.local_bytes && *l.local_bytes > 0)
      s += ", " + std::to_string(*l.local_bytes) + " bytes local memory/thread (spills)";
    int64_t shared = l.static_shared_bytes.value_or(0) + l.dynamic_shared_bytes.value_or(0);
    if (shared > 0) s += ", " + std::to_string(shared) + " bytes shared/block";
    if (l.occupancy && l.occupancy->fraction) {
      s += ", occupancy " + num(100 * *l.occupancy->fraction) + "%";
      if (l.occupancy->limited_by && !l.occupancy->limited_by->empty()) {
        s += " (limited by";
        for (const auto& w : *l.occupancy->limited_by) s += " " + w;
        s += ")";
      }
    }
    if (l.share) s += ", " + num(100 * *l.share) + "% of the time";
    out += s + "\n";
  }
  return out;
}

std::string next_turn_prompt(const NextTurnInput& in) {
  const Language& lang = language(in.language);
  std::ostringstream o;
  o << in.task_prompt;
  if (!in.task_prompt.empty() && in.task_prompt.back() != '\n') o << "\n";
  o << "\n# Your previous answer";
  if (in.turn > 0) o << " (turn " << in.turn << ")";
  size_t cut = 0;
  std::string prev = cap_text(escape_invalid_utf8(in.previous),
                              in.previous_bytes < 256 ? 256 : in.previous_bytes, &cut);
  o << "\n\n~~~~\n" << prev << (prev.empty() || prev.back() != '\n' ? "\n" : "") << "~~~~\n";
  if (cut) o << "(" << cut << " bytes of it are not shown.)\n";
  o << "\n# What happened\n\n";
  if (!in.record) {
    o << "Status: unknown (no record of it was given).\n";
  } else {
    const TraceRecord& r = *in.record;
    std::string status = r.status_text();
    o << "Status: " << (status.empty() ? "unknown" : status) << ": " << status_meaning(r) << ".\n";
    if (r.speedup && r.status_is(Status::Correct))
      o << "Speedup over the baseline: " << num(*r.speedup) << "x.\n";
    if (auto c = r.correctness_counts())
      o << "Correctness trials passed: " << c->first << " of " << c->second << ".\n";
    if (std::string e = key_error_lines(r, 20); !e.empty()) o << "\nKey error lines:\n" << e;
    if (std::string l = launch_facts_text(r); !l.empty()) o << "\nLaunch facts:\n" << l;
    // A compile error's feedback repeats its key error lines: left out.
    if (r.feedback && !r.feedback->empty() && !r.status_is(Status::CompileError))
      o << "\nFeedback:\n" << *r.feedback << "\n";
  }
  o << "\n# What to do now\n\n" << instruction(in.record, lang);
  return o.str();
}

}  // namespace kernrl

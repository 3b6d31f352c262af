#include "record/trace_record.h"

#include "record/record.h"
#include "record/trace_file.h"

namespace kernrl {
using nlohmann::json;

TraceRecord TraceRecord::begin(const std::string& file, const std::string& run,
                               std::optional<int> sample, uint64_t seed) {
  TraceRecord r;
  r.schema = kTraceSchema;
  r.kernel_format = kKernelFormatVersion;
  r.run = run.empty() ? Field<std::string>(nullptr) : Field<std::string>(run);
  r.sample = sample ? Field<int>(*sample) : Field<int>(nullptr);
  r.file = file;
  r.problem = nullptr;
  r.level = nullptr;
  r.source_sha256 = nullptr;
  r.status = Status::FormatError;
  r.ran = false;
  r.error = nullptr;
  r.compile = nullptr;
  r.correctness = nullptr;
  r.timing = nullptr;
  r.seed = seed;
  r.timestamp = now_iso8601();
  return r;
}

json TraceRecord::to_json() const {
  return Codec<TraceRecord>::encode(*this);
}

std::string TraceRecord::to_line() const {
  return json_line(to_json());
}

TraceRecord TraceRecord::from_json(const json& j) {
  TraceRecord r;
  Codec<TraceRecord>::decode(j, r);
  return r;
}

std::string TraceRecord::status_text() const {
  if (status) return to_string(*status);
  json raw = status.to_json();
  return raw.is_string() ? raw.get<std::string>() : "";
}

std::string TraceRecord::run_or(const std::string& none) const {
  return run ? *run : none;
}

std::optional<std::pair<int, int>> TraceRecord::correctness_counts() const {
  if (!correctness || !correctness->is_object()) return std::nullopt;
  Field<int> passed, trials;
  passed.read(*correctness, "n_passed");
  trials.read(*correctness, "n_trials");
  if (!trials) return std::nullopt;
  return std::make_pair(passed.value_or(0), *trials);
}

std::vector<TraceRecord> records_from_json(const std::vector<json>& records) {
  std::vector<TraceRecord> out;
  out.reserve(records.size());
  for (const json& j : records) out.push_back(TraceRecord::from_json(j));
  return out;
}

namespace {

// Caps a text field, noting the cut in `cut_bytes` (added to a cut noted before).
void cap_field(Field<std::string>& text, Field<uint64_t>& cut_bytes, size_t cap,
               double head_share) {
  if (!text) return;
  size_t cut = 0;
  std::string capped = cap_text(*text, cap, &cut, head_share);
  if (!cut) return;
  text = std::move(capped);
  cut_bytes = cut_bytes.value_or(0) + cut;
}

}  // namespace

void bound_record(TraceRecord& rec, const RecordLimits& lim) {
  Codec<TraceRecord>::escape(rec);
  if (rec.error) {
    // A compile error's log is NVRTC's; any other status's log is the GPU worker's output.
    trace::Error& e = *rec.error;
    if (rec.status_is(Status::CompileError))
      cap_field(e.log, e.log_cut_bytes, lim.compile_log_bytes, 0.75);
    else
      cap_field(e.log, e.log_cut_bytes, lim.worker_log_bytes, 0.25);
    cap_field(e.message, e.message_cut_bytes, lim.message_bytes, 0.75);
  }
  if (rec.compile)
    cap_field(rec.compile->log, rec.compile->log_cut_bytes, lim.compile_log_bytes, 0.75);
}

void bound_record(json& rec, const RecordLimits& lim) {
  if (!rec.is_object()) return;
  TraceRecord r = TraceRecord::from_json(rec);
  bound_record(r, lim);
  rec = r.to_json();
}

}  // namespace kernrl

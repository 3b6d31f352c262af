// Baseline files (`kernrl bench --baselines`): device ceilings and reference timings measured once
// per GPU type, reused by eval and grade-dir when the GPU and software versions match.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace kernrl {

constexpr const char* kBaselineSchema = "kernrl.baselines.v1";

// "NVIDIA H100 80GB HBM3" -> "nvidia-h100-80gb-hbm3"
std::string gpu_slug(const std::string& gpu_name);

class BaselineStore {
 public:
  // `path`: a file given with --baselines (an error if unreadable), or empty to look for
  // baselines/<gpu slug>.json in the data directory once the device is known.
  void configure(const std::string& path) { explicit_path_ = path; }
  // A baseline document already in memory (`kernrl bench` while it writes one), used instead of
  // any file; `label` is its source ("file:<label>").
  void configure_doc(nlohmann::json doc, const std::string& label) {
    doc_ = std::move(doc);
    doc_label_ = label;
  }
  // Loads the file matching `device`; remembers why it does or does not apply.
  void load_for(const nlohmann::json& device, const nlohmann::json& versions);
  // The device ceilings when the file is for this GPU (versions need not match for hardware
  // limits).
  const nlohmann::json& ceilings() const { return ceilings_; }
  // The baseline timing of `problem` at `sizes` when GPU and versions match, and the file timed
  // the reference whose reference.cpp has SHA-256 `reference_sha256` (entries written before
  // files recorded it, or an empty `reference_sha256`, are not checked).
  std::optional<nlohmann::json> baseline(const std::string& problem, const nlohmann::json& sizes,
                                         const std::string& reference_sha256 = "") const;
  // The timing of `problem`'s reference kernel (its solution.cu, kernel_baseline in the file) at
  // `sizes`, when GPU and versions match and the file timed the solution whose SHA-256 is
  // `solution_sha256` (a changed solution.cu is timed afresh).
  std::optional<nlohmann::json> kernel_baseline(const std::string& problem,
                                                const nlohmann::json& sizes,
                                                const std::string& solution_sha256) const;
  // The torch.compile timing of `problem` at `sizes` (`problems.<id>.compile_baseline.timing`,
  // written by a suite's baseline tool) when the file is for this GPU. The torch version that
  // compiled it is in the entry; the worker's versions need not match (it is not the worker's
  // measurement).
  std::optional<nlohmann::json> compile_baseline(const std::string& problem,
                                                 const nlohmann::json& sizes) const;
  const std::string& source() const { return source_; }
  const std::string& note() const { return note_; }

 private:
  void use(const nlohmann::json& device, const nlohmann::json& versions, const std::string& path);
  std::string explicit_path_, source_, note_;
  nlohmann::json file_, ceilings_;
  std::optional<nlohmann::json> doc_;
  std::string doc_label_;
  bool versions_match_ = false;
  bool same_gpu_ = false;
};

}  // namespace kernrl

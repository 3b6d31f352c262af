#include "grading/baselines.h"

#include <cctype>
#include <filesystem>

#include "core/errors.h"
#include "core/paths.h"
#include "core/suite_paths.h"
#include "extract/extract.h"

namespace kernrl {
namespace fs = std::filesystem;
using nlohmann::json;

std::string gpu_slug(const std::string& name) {
  std::string s;
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)))
      s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else if (!s.empty() && s.back() != '-')
      s += '-';
  }
  while (!s.empty() && s.back() == '-') s.pop_back();
  return s;
}

void BaselineStore::load_for(const json& device, const json& versions) {
  if (doc_) {
    file_ = *doc_;
    use(device, versions, doc_label_);
    return;
  }
  fs::path path = explicit_path_;
  if (path.empty() && device.is_object())
    path = baselines_dir() / (gpu_slug(device.value("name", "")) + ".json");
  if (path.empty() || !fs::exists(path)) {
    if (!explicit_path_.empty()) throw UsageError("cannot read baseline file " + explicit_path_);
    note_ = "no baseline file for this GPU; baselines measured";
    return;
  }
  try {
    file_ = json::parse(read_file(path.string()));
  } catch (const std::exception& e) {
    throw UsageError("baseline file " + path.string() + " is not valid JSON: " + e.what());
  }
  use(device, versions, path.string());
}

void BaselineStore::use(const json& device, const json& versions, const std::string& path_text) {
  const fs::path path = path_text;
  if (file_.value("schema", "") != kBaselineSchema)
    throw UsageError(path.string() + " is not a kernrl baseline file");
  source_ = "file:" + path.string();
  bool same_gpu =
      device.is_object() && file_["device"].value("name", "") == device.value("name", "");
  if (!same_gpu) {
    note_ = path.string() + " is for " + file_["device"].value("name", "?") +
            ", not this GPU; baselines measured";
    return;
  }
  same_gpu_ = true;
  ceilings_ = file_.value("ceilings", json::object());
  const json& fv = file_.value("versions", json::object());
  versions_match_ = fv.value("torch", "") == versions.value("torch", "") &&
                    fv.value("cuda", "") == versions.value("cuda", "") &&
                    fv.value("driver", "") == versions.value("driver", "");
  note_ = versions_match_
              ? "baselines from " + path.string()
              : path.string() +
                    " was measured with other versions (torch/CUDA/driver); baselines measured";
}

std::optional<json> BaselineStore::kernel_baseline(const std::string& problem, const json& sizes,
                                                   const std::string& solution_sha256) const {
  if (!versions_match_ || !file_.contains("problems") || !file_["problems"].contains(problem))
    return std::nullopt;
  const json& e = file_["problems"][problem];
  auto kb = e.find("kernel_baseline");
  if (kb == e.end() || !kb->is_object() || e.value("sizes", json::object()) != sizes ||
      kb->value("source_sha256", "") != solution_sha256 || !kb->contains("timing") ||
      !(*kb)["timing"].is_object())
    return std::nullopt;
  return (*kb)["timing"];
}

std::optional<json> BaselineStore::baseline(const std::string& problem, const json& sizes,
                                            const std::string& reference_sha256) const {
  if (!versions_match_ || !file_.contains("problems") || !file_["problems"].contains(problem))
    return std::nullopt;
  const json& e = file_["problems"][problem];
  if (e.value("sizes", json::object()) != sizes || !e.contains("baseline")) return std::nullopt;
  // A reference changed since the file was written (e.g. a new fused route) is timed afresh.
  if (!reference_sha256.empty() && e.contains("reference_sha256") &&
      e.value("reference_sha256", "") != reference_sha256)
    return std::nullopt;
  return e.at("baseline");
}

std::optional<json> BaselineStore::compile_baseline(const std::string& problem,
                                                    const json& sizes) const {
  if (!same_gpu_ || !file_.contains("problems") || !file_["problems"].contains(problem))
    return std::nullopt;
  const json& e = file_["problems"][problem];
  auto cb = e.find("compile_baseline");
  if (cb == e.end() || !cb->is_object() || e.value("sizes", json::object()) != sizes ||
      !cb->contains("timing") || !(*cb)["timing"].is_object() ||
      !((*cb)["timing"].value("median_ms", 0.0) > 0))
    return std::nullopt;
  return (*cb)["timing"];
}

}  // namespace kernrl

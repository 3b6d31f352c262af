#include "core/yaml_guard.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <sstream>

namespace kernrl {
namespace {

class ShapeCheck : public YAML::EventHandler {
 public:
  explicit ShapeCheck(const YamlLimits& limits) : limits_(limits) {}

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& m, YAML::anchor_t anchor) override { node(m, anchor); }
  void OnAlias(const YAML::Mark& m, YAML::anchor_t) override {
    throw YamlShapeError("YAML aliases (*name) are not allowed; write the value out", m.line);
  }
  void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t anchor,
                const std::string&) override {
    node(m, anchor);
  }
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(m, anchor);
  }
  void OnSequenceEnd() override { --depth_; }
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(m, anchor);
  }
  void OnMapEnd() override { --depth_; }
  void OnAnchor(const YAML::Mark& m, const std::string&) override { anchor_error(m); }

 private:
  [[noreturn]] static void anchor_error(const YAML::Mark& m) {
    throw YamlShapeError("YAML anchors (&name) are not allowed; write the value out", m.line);
  }
  void node(const YAML::Mark& m, YAML::anchor_t anchor) {
    if (anchor != YAML::NullAnchor) anchor_error(m);
    if (++nodes_ > limits_.max_nodes)
      throw YamlShapeError("more than " + std::to_string(limits_.max_nodes) + " YAML nodes",
                           m.line);
  }
  void open(const YAML::Mark& m, YAML::anchor_t anchor) {
    node(m, anchor);
    if (++depth_ > limits_.max_depth)
      throw YamlShapeError(
          "YAML nested more than " + std::to_string(limits_.max_depth) + " levels deep", m.line);
  }

  const YamlLimits& limits_;
  int depth_ = 0;
  size_t nodes_ = 0;
};

}  // namespace

void check_yaml_shape(const std::string& text, const YamlLimits& limits) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  ShapeCheck check(limits);
  int docs = 0;
  while (parser.HandleNextDocument(check))
    if (++docs > 1) throw YamlShapeError("more than one YAML document (a second '---')", 0);
}

}  // namespace kernrl

// A traced input generator moved to the inputs' device: every device constant of its graph, in
// nested blocks too, is pointed at the device, and the moved graph draws there.
#include <doctest/doctest.h>
#include <torch/csrc/jit/ir/irparser.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/torch.h>

#include "worker/torchscript_reference.h"

using namespace kernrl;

TEST_CASE("a traced generator's device constants move to the inputs' device") {
  // As torch.jit.trace records `torch.rand(4, 3) * 2` and a `.to(device)` inside an if-block.
  const char* ir = R"IR(
graph(%x : Tensor, %flag : bool):
  %n : int = prim::Constant[value=4]()
  %m : int = prim::Constant[value=3]()
  %two : int = prim::Constant[value=2]()
  %none : NoneType = prim::Constant()
  %dtype : int = prim::Constant[value=6]()
  %cpu : Device = prim::Constant[value="cpu"]()
  %false : bool = prim::Constant[value=0]()
  %sizes : int[] = prim::ListConstruct(%n, %m)
  %r : Tensor = aten::rand(%sizes, %dtype, %none, %cpu, %false)
  %y : Tensor = aten::mul(%r, %two)
  %z : Tensor = prim::If(%flag)
    block0():
      %cpu2 : Device = prim::Constant[value="cpu"]()
      %w : Tensor = aten::to(%y, %cpu2, %dtype, %false, %false, %none)
      -> (%w)
    block1():
      -> (%y)
  return (%z)
)IR";
  auto graph = std::make_shared<torch::jit::Graph>();
  torch::jit::parseIR(ir, graph.get());
  CHECK(move_device_constants(*graph, c10::Device(c10::kMeta)) == 2);
  int meta = 0, other = 0;
  std::function<void(torch::jit::Block*)> walk = [&](torch::jit::Block* b) {
    for (torch::jit::Node* n : b->nodes()) {
      for (torch::jit::Block* sub : n->blocks()) walk(sub);
      if (n->kind() == c10::prim::Constant &&
          n->output()->type()->kind() == c10::TypeKind::DeviceObjType) {
        auto v = torch::jit::toIValue(n->output());
        (v && v->toDevice().is_meta() ? meta : other)++;
      }
    }
  };
  walk(graph->block());
  CHECK(meta == 2);
  CHECK(other == 0);
  // Run: the draw and the conversion are made on the moved device.
  torch::jit::GraphExecutor exec(graph, "generator");
  torch::jit::Stack stack{torch::zeros({1}), true};
  exec.run(stack);
  REQUIRE(stack.size() == 1);
  torch::Tensor out = stack[0].toTensor();
  CHECK(out.is_meta());
  CHECK(out.sizes() == torch::IntArrayRef({4, 3}));
}

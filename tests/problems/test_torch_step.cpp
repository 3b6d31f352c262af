// Torch steps (docs/kernel-format.md, "PyTorch operators") on the CPU with libtorch: arguments
// converted to the operator's schema (defaults filled, an integer for a list), the result written
// into the out buffer, and what cannot be run refused with the step named.
#include <doctest/doctest.h>

#include "worker/torch_step.h"

using namespace kernrl;

namespace {

TorchStepArg tensor(const torch::Tensor& t, const std::string& name) {
  TorchStepArg a;
  a.kind = TorchStepArg::Tensor;
  a.tensor = t;
  a.text = name;
  return a;
}

TorchStepArg integer(int64_t v) {
  TorchStepArg a;
  a.kind = TorchStepArg::Int;
  a.i = v;
  a.text = std::to_string(v);
  return a;
}

TorchStepArg ints(std::vector<int64_t> v) {
  TorchStepArg a;
  a.kind = TorchStepArg::IntList;
  a.list = std::move(v);
  a.text = "[...]";
  return a;
}

TorchStepArg none() {
  TorchStepArg a;
  a.kind = TorchStepArg::None;
  a.text = "none";
  return a;
}

std::string step_error(const std::string& op, std::vector<TorchStepArg> args, torch::Tensor out,
                       bool flat = false) {
  try {
    TorchStep s(op, std::move(args), out, flat, "torch step " + op + " (line 3)");
    s.run();
  } catch (const TorchStepError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("a torch step computes its operator into the out buffer") {
  torch::manual_seed(1);
  torch::Tensor x = torch::randn({5, 7}), w = torch::randn({3, 7}), b = torch::randn({3});
  torch::Tensor out = torch::full({5, 3}, std::nan(""));
  TorchStep linear("linear", {tensor(x, "x"), tensor(w, "weight"), tensor(b, "bias")}, out, false,
                   "torch step linear (line 3)");
  CHECK(linear.result_shape() == std::vector<int64_t>{5, 3});
  linear.run();
  CHECK(torch::allclose(out, torch::linear(x, w, b)));

  // A flat scratch buffer of the same element count takes the result's shape; the bias may be
  // none; a single integer stands for a list (stride 1 is [1, 1]); missing arguments take the
  // schema's defaults (dilation, groups).
  torch::Tensor img = torch::randn({2, 3, 9, 8}), k = torch::randn({4, 3, 3, 3});
  torch::Tensor ref = torch::conv2d(img, k, {}, 2, 1);
  torch::Tensor flat = torch::zeros({ref.numel()});
  TorchStep conv("conv2d",
                 {tensor(img, "x"), tensor(k, "conv.weight"), none(), integer(2), ints({1, 1})},
                 flat, true, "torch step conv2d (line 4)");
  conv.run();
  CHECK(torch::allclose(flat.view(ref.sizes()), ref));

  // An output of the same element count takes the result's shape too ([5, 1] into [5]).
  torch::Tensor w1 = torch::randn({1, 7});
  torch::Tensor col = torch::zeros({5});
  TorchStep narrow("linear", {tensor(x, "x"), tensor(w1, "w")}, col, true,
                   "torch step linear (line 5)");
  narrow.run();
  CHECK(torch::allclose(col, torch::linear(x, w1).view({5})));

  // Running again overwrites the buffer with the operator's result on the current inputs.
  x.mul_(2);
  linear.run();
  CHECK(torch::allclose(out, torch::linear(x, w, b)));
}

TEST_CASE("transposed convolutions as torch steps, with every argument of their schema") {
  torch::manual_seed(2);
  // conv_transpose2d (ATen's .input overload): stride, padding, output_padding, groups, dilation.
  torch::Tensor x = torch::randn({2, 4, 5, 6}), w = torch::randn({4, 3, 3, 3}),
                b = torch::randn({6});
  torch::Tensor ref = torch::conv_transpose2d(x, w, b, {2, 2}, {1, 1}, {1, 1}, 2, {1, 1});
  torch::Tensor out = torch::full(ref.sizes(), std::nan(""));
  TorchStep t2(
      "conv_transpose2d",
      {tensor(x, "x"), tensor(w, "conv_transpose.weight"), tensor(b, "conv_transpose.bias"),
       ints({2, 2}), integer(1), ints({1, 1}), integer(2), ints({1, 1})},
      out, false, "torch step conv_transpose2d (line 3)");
  t2.run();
  CHECK(torch::allclose(out, ref, 1e-5, 1e-5));
  // conv_transpose1d and 3d, defaults after the bias.
  torch::Tensor x1 = torch::randn({2, 3, 7}), w1 = torch::randn({3, 5, 4});
  torch::Tensor r1 = torch::conv_transpose1d(x1, w1, {}, 3);
  torch::Tensor o1 = torch::zeros(r1.sizes());
  TorchStep t1("conv_transpose1d", {tensor(x1, "x"), tensor(w1, "w"), none(), integer(3)}, o1,
               false, "torch step conv_transpose1d (line 4)");
  t1.run();
  CHECK(torch::allclose(o1, r1, 1e-5, 1e-5));
  torch::Tensor x3 = torch::randn({1, 2, 3, 4, 5}), w3 = torch::randn({2, 2, 2, 2, 2});
  torch::Tensor r3 = torch::conv_transpose3d(x3, w3);
  torch::Tensor o3 = torch::zeros({r3.numel()});
  TorchStep t3("conv_transpose3d", {tensor(x3, "x"), tensor(w3, "w")}, o3, true,
               "torch step conv_transpose3d (line 5)");
  t3.run();
  CHECK(torch::allclose(o3.view(r3.sizes()), r3, 1e-5, 1e-5));
}

TEST_CASE("a torch step that does not fit its operator is refused, the step named") {
  torch::Tensor x = torch::randn({5, 7}), w = torch::randn({3, 7});
  // The result's shape is not the out buffer's.
  CHECK(step_error("linear", {tensor(x, "x"), tensor(w, "weight")}, torch::zeros({5, 4}))
            .find("torch step linear (line 3): the result of aten::linear has shape [5, 3]; its "
                  "out buffer has shape [5, 4]") != std::string::npos);
  // Nor its dtype.
  CHECK(step_error("linear", {tensor(x, "x"), tensor(w, "weight")},
                   torch::zeros({5, 3}, torch::kFloat64))
            .find("its out buffer is Double") != std::string::npos);
  // An integer where the schema takes a tensor; too many arguments; a shape mismatch inside.
  CHECK(step_error("linear", {tensor(x, "x"), integer(3)}, torch::zeros({5, 3}))
            .find("argument '3' for parameter 'weight' (Tensor) needs a tensor") !=
        std::string::npos);
  CHECK(step_error("relu", {tensor(x, "x"), integer(1)}, torch::zeros({5, 7}))
            .find("takes at most 1 arguments") != std::string::npos);
  CHECK(step_error("mm", {tensor(x, "x"), tensor(w, "weight")}, torch::zeros({5, 3}))
            .find("refused its arguments") != std::string::npos);
  // A list of the wrong length for a fixed-size list parameter.
  CHECK(step_error("conv2d",
                   {tensor(torch::randn({1, 3, 5, 5}), "x"),
                    tensor(torch::randn({2, 3, 3, 3}), "w"), none(), ints({1, 1, 1})},
                   torch::zeros({1, 2, 3, 3}))
            .find("needs 2 integers, not 3") != std::string::npos);
  // Operators outside kernrl's list are never looked up.
  CHECK(step_error("from_file", {}, torch::zeros({1}))
            .find("not an operator a torch step may call") != std::string::npos);
}

TEST_CASE("cat: a list of tensors as a torch step's argument") {
  torch::manual_seed(2);
  torch::Tensor a = torch::randn({2, 3}), b = torch::randn({4, 3});
  TorchStepArg list;
  list.kind = TorchStepArg::TensorList;
  list.tensors = {a, b};
  list.text = "[a, b]";
  torch::Tensor out = torch::full({6, 3}, std::nan(""));
  TorchStep cat("cat", {list, integer(0)}, out, false, "torch step cat (line 3)");
  CHECK(cat.result_shape() == std::vector<int64_t>{6, 3});
  cat.run();
  CHECK(torch::equal(out, torch::cat({a, b}, 0)));
  // Tensors whose other dimensions differ, or a list where a tensor is expected, are refused.
  TorchStepArg bad = list;
  bad.tensors = {a, torch::randn({4, 5})};
  CHECK(step_error("cat", {bad, integer(0)}, out).find("refused its arguments") !=
        std::string::npos);
  CHECK(step_error("cat", {tensor(a, "a"), integer(0)}, out).find("needs a list of tensors") !=
        std::string::npos);
}

namespace {

TorchStepArg tensors(std::vector<torch::Tensor> ts, const std::string& text) {
  TorchStepArg a;
  a.kind = TorchStepArg::TensorList;
  a.tensors = std::move(ts);
  a.text = text;
  return a;
}

TorchStepArg boolean(bool b) {
  TorchStepArg a;
  a.kind = TorchStepArg::Bool;
  a.b = b;
  a.text = b ? "true" : "false";
  return a;
}

TorchStepArg real(double f) {
  TorchStepArg a;
  a.kind = TorchStepArg::Float;
  a.f = f;
  a.text = std::to_string(f);
  return a;
}

}  // namespace

TEST_CASE("lstm and gru: the result a step's `result` picks goes to its out buffer") {
  torch::manual_seed(3);
  // A 2-layer bidirectional LSTM, batch first, as nn.LSTM computes it: its parameters in
  // PyTorch's flat-weights order (per layer and direction: weight_ih, weight_hh, bias_ih,
  // bias_hh; the reverse direction after the forward one).
  const int64_t B = 3, T = 5, I = 4, H = 6, L = 2;
  torch::nn::LSTM lstm(
      torch::nn::LSTMOptions(I, H).num_layers(L).batch_first(true).bidirectional(true));
  std::vector<torch::Tensor> params;
  for (int64_t l = 0; l < L; ++l)
    for (const std::string sfx : {"", "_reverse"})
      for (const char* w : {"weight_ih", "weight_hh", "bias_ih", "bias_hh"})
        params.push_back(
            lstm->named_parameters()[std::string(w) + "_l" + std::to_string(l) + sfx].detach());
  torch::Tensor x = torch::randn({B, T, I}), h0 = torch::randn({2 * L, B, H}),
                c0 = torch::randn({2 * L, B, H});
  auto [ref_out, ref_state] = lstm->forward(x, std::make_tuple(h0, c0));
  const torch::Tensor refs[] = {ref_out.detach(), std::get<0>(ref_state).detach(),
                                std::get<1>(ref_state).detach()};
  auto args = [&] {
    return std::vector<TorchStepArg>{tensor(x, "x"),
                                     tensors({h0, c0}, "[h0, c0]"),
                                     tensors(params, "[...]"),
                                     boolean(true),
                                     integer(L),
                                     real(0.0),
                                     boolean(true),
                                     boolean(true),
                                     boolean(true)};
  };
  for (int r = 0; r < 3; ++r) {
    CAPTURE(r);
    torch::Tensor out = torch::full(refs[r].sizes(), std::nan(""));
    TorchStep step("lstm", args(), out, false, "torch step lstm (line 3)", r);
    CHECK(step.result_shape() == refs[r].sizes().vec());
    step.run();
    CHECK(torch::allclose(out, refs[r], 1e-5, 1e-5));
  }
  // A flat scratch buffer takes the result's shape, as for any step.
  torch::Tensor flat = torch::zeros({refs[2].numel()});
  TorchStep c_n("lstm", args(), flat, true, "torch step lstm (line 4)", 2);
  c_n.run();
  CHECK(torch::allclose(flat.view(refs[2].sizes()), refs[2], 1e-5, 1e-5));
  // Result 0 is the default; the out buffer must have the picked result's shape.
  CHECK(step_error("lstm", args(), torch::zeros({2 * L, B, H}))
            .find("the result of aten::lstm has shape [3, 5, 12]; its out buffer has shape "
                  "[4, 3, 6]") != std::string::npos);

  // A GRU without biases, sequence first: hx is one tensor.
  torch::nn::GRU gru(torch::nn::GRUOptions(I, H).num_layers(1).bias(false));
  torch::Tensor xs = torch::randn({T, B, I}), g0 = torch::randn({1, B, H});
  auto [g_out, g_n] = gru->forward(xs, g0);
  std::vector<TorchStepArg> gargs = {tensor(xs, "x"),
                                     tensor(g0, "h0"),
                                     tensors({gru->named_parameters()["weight_ih_l0"].detach(),
                                              gru->named_parameters()["weight_hh_l0"].detach()},
                                             "[...]"),
                                     boolean(false),
                                     integer(1),
                                     real(0.0),
                                     boolean(true),
                                     boolean(false),
                                     boolean(false)};
  torch::Tensor go = torch::zeros({T, B, H}), gh = torch::zeros({1, B, H});
  TorchStep("gru", gargs, go, false, "torch step gru (line 5)").run();
  TorchStep("gru", gargs, gh, false, "torch step gru (line 6)", 1).run();
  CHECK(torch::allclose(go, g_out.detach(), 1e-5, 1e-5));
  CHECK(torch::allclose(gh, g_n.detach(), 1e-5, 1e-5));
}

TEST_CASE("a torch step's result must be a tensor among its operator's results") {
  torch::Tensor x = torch::randn({5, 7}), w = torch::randn({3, 7});
  // linear returns one tensor: result 1 does not exist.
  std::string why;
  try {
    TorchStep s("linear", {tensor(x, "x"), tensor(w, "weight")}, torch::zeros({5, 3}), false,
                "torch step linear (line 3)", 1);
  } catch (const TorchStepError& e) {
    why = e.what();
  }
  CHECK(why == "torch step linear (line 3): result 1 of aten::linear, which returns 1 result");
  why.clear();
  try {
    TorchStep s("gru", {}, torch::zeros({1}), false, "torch step gru (line 4)", 2);
  } catch (const TorchStepError& e) {
    why = e.what();
  }
  CHECK(why == "torch step gru (line 4): result 2 of aten::gru, which returns 2 results");
}

TEST_CASE("mul and div: a tensor by a number, as PyTorch computes Python's `x * s` and `x / s`") {
  torch::manual_seed(3);
  torch::Tensor x = torch::randn({4, 5, 6});
  // `w * (1.0 / D_out)`: Python computes the number in double; PyTorch holds it as a wrapped
  // double scalar and multiplies float32 by it rounded to float, each product rounded once.
  const double s = 1.0 / 7;
  torch::Tensor out = torch::full({4, 5, 6}, std::nan(""));
  TorchStep mul("mul", {tensor(x, "w"), real(s)}, out, false, "torch step mul (line 3)");
  CHECK(mul.result_shape() == std::vector<int64_t>{4, 5, 6});
  mul.run();
  CHECK((out.scalar_type() == torch::kFloat32));
  CHECK(torch::equal(out, x * s));  // libtorch's Tensor * double: Python's path
  const float* px = x.data_ptr<float>();
  const float* po = out.data_ptr<float>();
  bool each = true;
  for (int64_t i = 0; i < x.numel(); ++i) each = each && po[i] == px[i] * static_cast<float>(s);
  CHECK(each);
  // An integer stays an integer scalar (`x * 3`); the result keeps the tensor's dtype.
  torch::Tensor three = torch::full({4, 5, 6}, std::nan(""));
  TorchStep("mul", {tensor(x, "w"), integer(3)}, three, false, "torch step mul (line 4)").run();
  CHECK(torch::equal(three, x * 3));
  // div: `x / s` and `x / n`, PyTorch's true division.
  torch::Tensor q = torch::full({4, 5, 6}, std::nan(""));
  TorchStep("div", {tensor(x, "w"), real(s)}, q, false, "torch step div (line 5)").run();
  CHECK(torch::equal(q, x / s));
  TorchStep("div", {tensor(x, "w"), integer(4)}, q, false, "torch step div (line 6)").run();
  CHECK(torch::equal(q, x / 4));
  // float64 stays float64: the product in double.
  torch::Tensor xd = x.to(torch::kFloat64), od = torch::zeros({4, 5, 6}, torch::kFloat64);
  TorchStep("mul", {tensor(xd, "w"), real(s)}, od, false, "torch step mul (line 7)").run();
  CHECK(torch::equal(od, xd * s));
  // A view's strides do not matter: the result lands in the out buffer in order.
  torch::Tensor xt = x.transpose(0, 2), ot = torch::zeros({6, 5, 4});
  TorchStep("mul", {tensor(xt, "wt"), real(s)}, ot, false, "torch step mul (line 8)").run();
  CHECK(torch::equal(ot, xt * s));
}

TEST_CASE("mul and div take a number, not a tensor; the out buffer has the result's dtype") {
  torch::Tensor x = torch::randn({2, 3}), y = torch::randn({2, 3});
  CHECK(step_error("mul", {tensor(x, "x"), tensor(y, "y")}, torch::zeros({2, 3}))
            .find("argument 'y' for parameter 'other' (Scalar) needs a number") !=
        std::string::npos);
  CHECK(step_error("div", {tensor(x, "x"), boolean(true)}, torch::zeros({2, 3}))
            .find("needs a number") != std::string::npos);
  // An integer tensor times a float is promoted to float32 by PyTorch: an int64 out buffer is
  // refused.
  torch::Tensor n = torch::arange(6).view({2, 3});
  CHECK(step_error("mul", {tensor(n, "n"), real(0.5)}, torch::zeros({2, 3}, torch::kInt64))
            .find("gives Float but its out buffer is Long") != std::string::npos);
}

TEST_CASE("unfold: windows along a dimension, copied in order into the out buffer") {
  // A vision transformer's patches: img.unfold(2, p, p).unfold(3, p, p).reshape(B, -1, p*p*C).
  // aten::unfold is a view with PyTorch's strides; the step copies it into a contiguous buffer,
  // and a `reshape` of that buffer gives what PyTorch's reshape of the view (a copy in row-major
  // order, the view not being viewable) gives.
  torch::manual_seed(5);
  const int64_t B = 2, C = 3, H = 8, W = 12, p = 4;
  torch::Tensor img = torch::randn({B, C, H, W});
  torch::Tensor u2 = torch::full({B, C, H / p, W, p}, std::nan(""));
  TorchStep first("unfold", {tensor(img, "img"), integer(2), integer(p), integer(p)}, u2, false,
                  "torch step unfold (line 3)");
  CHECK(first.result_shape() == std::vector<int64_t>{B, C, H / p, W, p});
  first.run();
  CHECK(torch::equal(u2, img.unfold(2, p, p)));
  CHECK(u2.is_contiguous());
  torch::Tensor u3 = torch::full({B, C, H / p, W / p, p, p}, std::nan(""));
  TorchStep("unfold", {tensor(u2, "u2"), integer(3), integer(p), integer(p)}, u3, false,
            "torch step unfold (line 4)")
      .run();
  torch::Tensor view = img.unfold(2, p, p).unfold(3, p, p);
  CHECK_FALSE(view.is_contiguous());
  CHECK(torch::equal(u3, view));
  torch::Tensor patches = torch::zeros({B, (H / p) * (W / p), p * p * C});
  TorchStep("reshape", {tensor(u3, "u3"), ints({B, -1, p * p * C})}, patches, false,
            "torch step reshape (line 5)")
      .run();
  CHECK(torch::equal(patches, view.reshape({B, -1, p * p * C})));
  // Overlapping windows (step < size) and a size that leaves a remainder: (10 - 3) / 2 + 1 = 4.
  torch::Tensor x = torch::randn({10, 5});
  torch::Tensor o = torch::zeros({4, 5, 3});
  TorchStep("unfold", {tensor(x, "x"), integer(0), integer(3), integer(2)}, o, false,
            "torch step unfold (line 6)")
      .run();
  CHECK(torch::equal(o, x.unfold(0, 3, 2)));
  CHECK(torch::equal(o.select(2, 1), x.narrow(0, 1, 7).slice(0, 0, 7, 2)));
  // A window larger than the dimension: PyTorch refuses it, and so does the step.
  CHECK(step_error("unfold", {tensor(x, "x"), integer(1), integer(6), integer(1)},
                   torch::zeros({0, 10, 6}))
            .find("refused its arguments") != std::string::npos);
}

TEST_CASE("select: x[:, i] and x[i], the dimension dropped, copied into the out buffer") {
  torch::manual_seed(6);
  torch::Tensor x = torch::randn({4, 5, 6});
  torch::Tensor cls = torch::full({4, 6}, std::nan(""));
  TorchStep sel("select", {tensor(x, "x"), integer(1), integer(0)}, cls, false,
                "torch step select (line 3)");
  CHECK(sel.result_shape() == std::vector<int64_t>{4, 6});
  sel.run();
  CHECK(torch::equal(cls, x.index({torch::indexing::Slice(), 0})));
  // A negative index counts from the end, as PyTorch does.
  TorchStep("select", {tensor(x, "x"), integer(1), integer(-1)}, cls, false,
            "torch step select (line 4)")
      .run();
  CHECK(torch::equal(cls, x.index({torch::indexing::Slice(), 4})));
  torch::Tensor row = torch::zeros({5, 6});
  TorchStep("select", {tensor(x, "x"), integer(0), integer(2)}, row, false,
            "torch step select (line 5)")
      .run();
  CHECK(torch::equal(row, x[2]));
  torch::Tensor last = torch::zeros({4, 5});
  TorchStep("select", {tensor(x, "x"), integer(-1), integer(3)}, last, false,
            "torch step select (line 6)")
      .run();
  CHECK(torch::equal(last, x.index({torch::indexing::Ellipsis, 3})));
  // An index out of range: PyTorch raises, the step refuses.
  CHECK(step_error("select", {tensor(x, "x"), integer(1), integer(5)}, torch::zeros({4, 6}))
            .find("refused its arguments") != std::string::npos);
  // The out buffer must have the result's shape.
  CHECK(step_error("select", {tensor(x, "x"), integer(1), integer(0)}, torch::zeros({4, 5}))
            .find("has shape [4, 6]") != std::string::npos);
}

// A call of an nn.LSTM or nn.GRU layer in forward, on a suite built from KernelBench: one torch
// step (`lstm`, `gru`; docs/kernel-format.md, "PyTorch operators") whose `result` is the one
// forward uses (docs/import-kernelbench.md).
#include <algorithm>

#include "import/py_side.h"

namespace kernrl::kbimport::py {

namespace {

// The names a target of an assignment binds, `_` left out.
void target_names(const PyExprP& t, std::set<std::string>* names) {
  if (t->kind == PyExpr::Name && t->text != "_") names->insert(t->text);
  if (t->kind == PyExpr::Tuple || t->kind == PyExpr::List)
    for (const auto& k : t->kids) target_names(k, names);
}

}  // namespace

void PySide::rnn_unpacking(const std::vector<PyTok>& t, size_t from, size_t eq, int line,
                           const PyExprP& target, const PyExprP& value) {
  rnn_use_ = RnnUse{};
  if (value->kind != PyExpr::Call ||
      (target->kind != PyExpr::Tuple && target->kind != PyExpr::List))
    return;
  rnn_use_.call = value;
  rnn_use_.target = target;
  std::set<std::string> names;
  target_names(target, &names);
  if (names.empty()) return;
  // The function whose body holds the statement: the `def` above it at a smaller indentation.
  // (The statement's line: `t` is its tokens; otherwise its targets count as reads.)
  size_t at = lines_.size();
  for (size_t i = 0; i < lines_.size() && at == lines_.size(); ++i)
    if (&lines_[i].toks == &t && lines_[i].line == line) at = i;
  size_t begin = 0, end = lines_.size();
  if (at < lines_.size()) {
    int indent = lines_[at].indent;
    for (size_t j = at; j-- > 0;) {
      if (lines_[j].toks.empty() || lines_[j].indent >= indent) continue;
      indent = lines_[j].indent;
      if (tok_is(lines_[j].toks[0], "def") ||
          (lines_[j].toks.size() > 1 && tok_is(lines_[j].toks[0], "async") &&
           tok_is(lines_[j].toks[1], "def"))) {
        Block b = body_of(lines_, j);
        begin = b.begin;
        end = b.end;
        break;
      }
    }
  }
  // A name is used where the body reads it: anywhere but the statement's own targets, an
  // attribute (`.out`), a keyword argument or a plain rebinding (`out = ...`). Anything else
  // counts as a read, so that a result forward may need is never taken for unused.
  for (size_t i = begin; i < end; ++i) {
    const auto& toks = lines_[i].toks;
    for (size_t k = 0; k < toks.size(); ++k) {
      if (i == at && k >= from && k < eq) continue;
      if (toks[k].kind != PyTok::Name || !names.count(toks[k].text)) continue;
      if (k > 0 && tok_is(toks[k - 1], ".")) continue;
      if (k + 1 < toks.size() && toks[k + 1].kind == PyTok::Op && toks[k + 1].text == "=") continue;
      rnn_use_.used.insert(toks[k].text);
    }
  }
}

std::optional<std::map<std::string, Val>> PySide::rnn_config(const Val& layer,
                                                             const std::string& text) {
  // torch.nn.LSTM / GRU(input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
  // dropout=0.0, bidirectional=False[, proj_size=0]) by position or keyword.
  static const std::vector<std::pair<std::string, std::string>> params = {
      {"input_size", ""},         {"hidden_size", ""},      {"num_layers", "1"},
      {"bias", "True"},           {"batch_first", "False"}, {"dropout", "0"},
      {"bidirectional", "False"}, {"proj_size", "0"}};
  const bool lstm = layer.elem == "LSTM";
  const size_t count = lstm ? params.size() : params.size() - 1;
  PyExprP call = layer_ctor(layer.name);
  if (!call || call->kind != PyExpr::Call) return std::nullopt;
  const std::string named = resolve(py_dotted(call->kids[0]));
  if (named != "torch.nn." + layer.elem && named != "nn." + layer.elem) return std::nullopt;
  const std::string ctor = "`self." + layer.name + "` (`" + py_text(call) + "`)";
  if (call->kids.size() > count + 1)
    fail("torch_op_in_forward", ctor + " is built with more positional arguments than kernrl " +
                                    "maps for nn." + layer.elem + " (`" + text + "`)");
  std::map<std::string, Val> cfg;
  for (size_t i = 0; i < count; ++i)
    if (i + 1 < call->kids.size()) cfg[params[i].first] = init_expr(call->kids[i + 1]);
  for (const auto& [k, v] : call->kwargs) {
    const std::string& key = k;  // (a lambda may not capture a structured binding in C++17)
    auto p = std::find_if(params.begin(), params.begin() + static_cast<long>(count),
                          [&](const auto& q) { return q.first == key; });
    if (p == params.begin() + static_cast<long>(count))
      fail("torch_op_in_forward",
           ctor + " is built with `" + k + "`, which kernrl does not map (`" + text + "`)");
    if (cfg.count(k))
      fail("mismatch", ctor + " gives `" + k + "` twice (PyTorch raises a TypeError)");
    cfg[k] = init_expr(v);
  }
  for (size_t i = 0; i < count; ++i) {
    const auto& [name, def] = params[i];
    if (cfg.count(name)) continue;
    if (def.empty())
      fail("mismatch", ctor + " is built without `" + name + "` (PyTorch raises a TypeError)");
    cfg[name] = def == "True" || def == "False" ? make_bool(def == "True") : number(def);
  }
  return cfg;
}

Val PySide::rnn_call(Env& env, const Val& layer, const PyExprP& e) {
  const std::string text = py_text(e);
  const std::string cls = "nn." + layer.elem;
  const bool lstm = layer.elem == "LSTM";
  auto refuse = [&](const std::string& category, const std::string& why) {
    fail(category, "`" + text + "` (" + cls + "): " + why);
  };
  // Which result forward uses: the assignment that unpacks the call, or the index that picks one.
  const RnnUse use = rnn_use_;
  rnn_use_ = RnnUse{};
  if (use.call.get() != e.get())
    refuse("torch_op_in_forward",
           std::string("kernrl maps a call whose results forward unpacks by an assignment (") +
               (lstm ? "`out, _ = self.lstm(x, (h0, c0))`, `_, (h_n, c_n) = ...`"
                     : "`out, _ = self.gru(x, h0)`, `_, h_n = ...`") +
               ") or indexes (`" + (lstm ? "self.lstm" : "self.gru") + "(...)[0]`)");
  // The names of each result (output, h_n[, c_n]) in the assignment's target.
  std::vector<std::string> leaf(lstm ? 3 : 2);
  int chosen = -1;
  if (use.target) {
    const PyExprP& tg = use.target;
    auto name_of = [&](const PyExprP& k, std::string* out) {
      if (k->kind != PyExpr::Name)
        refuse("torch_op_in_forward",
               "forward unpacks its results into `" + py_text(tg) +
                   "`; kernrl maps names there (`out, _ = ...`, `_, (h_n, c_n) = ...`)");
      *out = k->text == "_" ? "" : k->text;
    };
    if (tg->kids.size() != 2)
      refuse("mismatch", "forward unpacks it into " + std::to_string(tg->kids.size()) +
                             " names, but it returns 2 values (PyTorch raises a ValueError)");
    name_of(tg->kids[0], &leaf[0]);
    const PyExprP& second = tg->kids[1];
    if (lstm && (second->kind == PyExpr::Tuple || second->kind == PyExpr::List)) {
      if (second->kids.size() != 2)
        refuse("mismatch", "forward unpacks (h_n, c_n) into " +
                               std::to_string(second->kids.size()) +
                               " names (PyTorch raises a ValueError)");
      name_of(second->kids[0], &leaf[1]);
      name_of(second->kids[1], &leaf[2]);
    } else {
      std::string pair;
      name_of(second, &pair);
      if (lstm && use.used.count(pair))
        refuse("torch_op_in_forward",
               "forward uses `" + pair +
                   "`, the tuple (h_n, c_n); kernrl maps one result of a call as one torch step "
                   "(unpack it: `_, (h_n, c_n) = ...`)");
      leaf[1] = lstm ? "" : pair;
    }
    std::vector<std::string> used;
    for (size_t r = 0; r < leaf.size(); ++r)
      if (!leaf[r].empty() && use.used.count(leaf[r])) {
        used.push_back("`" + leaf[r] + "`");
        if (chosen < 0) chosen = static_cast<int>(r);
      }
    if (used.size() > 1)
      refuse("torch_op_in_forward",
             "forward uses " + std::to_string(used.size()) + " of its results (" + used[0] +
                 " and " + used[1] +
                 "); kernrl maps one result of a call as one torch step, and two steps would run "
                 "the RNN twice and time twice its work");
    if (chosen < 0) chosen = 0;  // none used: the output, which nothing reads
  } else {
    chosen = use.index;
    if (chosen < 0 || chosen > 1)
      refuse("mismatch", "forward indexes its results at " + std::to_string(use.index) +
                             "; it returns 2 values (PyTorch raises an IndexError)");
    if (lstm && chosen == 1)
      refuse("torch_op_in_forward",
             "forward takes its result 1, the tuple (h_n, c_n); kernrl maps one tensor result "
             "(unpack it: `_, (h_n, c_n) = ...`)");
  }

  // The layer's settings, from its constructor.
  auto cfg = rnn_config(layer, text);
  if (!cfg)
    refuse("torch_op_in_forward",
           "kernrl maps an " + cls +
               " that __init__ builds with a constructor call it reads (`self." + layer.name +
               " = " + cls + "(...)`)");
  auto flag = [&](const char* k) {
    auto b = truth((*cfg)[k]);
    if (!b) refuse("torch_op_in_forward", std::string("its `") + k + "` kernrl cannot decide");
    return *b;
  };
  auto integer = [&](const char* k) {
    auto v = C.one_value((*cfg)[k]);
    if (!v)
      refuse("torch_op_in_forward",
             std::string("its `") + k + "` is not one integer at every size set of the problem");
    return *v;
  };
  const bool bias = flag("bias"), batch_first = flag("batch_first"),
             bidirectional = flag("bidirectional");
  const int64_t num_layers = integer("num_layers");
  if (num_layers < 1 || num_layers > 64)
    refuse("torch_op_in_forward", "kernrl maps 1 to 64 layers, not " + std::to_string(num_layers));
  if (lstm && integer("proj_size") != 0)
    refuse("torch_op_in_forward",
           "it is built with proj_size (an LSTM with projections), which kernrl does not map");
  const Val& dropout = (*cfg)["dropout"];
  std::optional<double> p;
  if (dropout.kind == Val::Float && dropout.f) p = *dropout.f;
  if (dropout.kind == Val::Int && dropout.k) p = static_cast<double>(*dropout.k);
  if (!p) refuse("torch_op_in_forward", "its dropout kernrl cannot compute");
  Val training = training_mode("self." + layer.name + ".training");
  if (training.kind != Val::Bool || !training.k) refuse("host_logic", "it reads " + training.why);
  if (*p != 0)
    refuse("torch_op_in_forward",
           "it is built with dropout " + float_literal(*p) +
               ", which makes its output random in training mode (KernelBench runs modules in "
               "training mode); kernrl maps dropout 0 only");

  // Its arguments: the input, and hx ((h_0, c_0) for an LSTM, h_0 for a GRU) or None.
  PyExprP x_expr, hx_expr;
  if (e->kids.size() > 1) x_expr = e->kids[1];
  if (e->kids.size() > 2) hx_expr = e->kids[2];
  if (e->kids.size() > 3) refuse("mismatch", "it takes an input and hx only");
  for (const auto& [k, v] : e->kwargs) {
    if (k == "hx" && !hx_expr)
      hx_expr = v;
    else if (k == "input" && !x_expr)
      x_expr = v;
    else
      refuse("torch_op_in_forward", "kernrl maps its arguments input and hx, not `" + k + "`");
  }
  if (!x_expr) refuse("mismatch", "it is called without an input");
  Val x = eval(env, x_expr);
  Val hx = hx_expr ? eval(env, hx_expr) : Val{};
  const TensorInfo xi = tensor_of(x, text);
  if (xi.shape.size() != 3)
    refuse("torch_op_in_forward", "kernrl maps a batched input (3 dimensions), not one of " +
                                      std::to_string(xi.shape.size()));
  const std::string dtype = xi.dtype;
  const int64_t dirs = bidirectional ? 2 : 1;
  const int64_t gates = lstm ? 4 : 3;
  const Val batch = xi.shape[batch_first ? 0 : 1], steps = xi.shape[batch_first ? 1 : 0];
  const Val& input_size = (*cfg)["input_size"];
  const Val& hidden = (*cfg)["hidden_size"];
  for (const char* k : {"input_size", "hidden_size"})
    if ((*cfg)[k].kind != Val::Int)
      refuse("torch_op_in_forward", std::string("its `") + k + "` kernrl cannot compute");
  // A shape that must hold at every size set (PyTorch raises otherwise).
  auto same = [&](const std::vector<Val>& have, const std::vector<Val>& want,
                  const std::string& what) {
    bool ok = have.size() == want.size();
    for (size_t d = 0; ok && d < have.size(); ++d) {
      auto a = C.per_set(have[d]), b = C.per_set(want[d]);
      if (!a || !b)
        refuse("host_logic", "the shape of " + what + " depends on the GPU or a repeat variable");
      ok = *a == *b;
    }
    if (!ok) {
      std::vector<std::string> h, w;
      for (const Val& d : have) h.push_back(int_text(d));
      for (const Val& d : want) w.push_back(int_text(d));
      auto list = [](const std::vector<std::string>& v) {
        std::string s;
        for (const auto& d : v) s += (s.empty() ? "" : ", ") + d;
        return "[" + s + "]";
      };
      refuse("mismatch", what + " has shape " + list(h) + " where " + cls + " takes " + list(w) +
                             " at some size set (PyTorch raises)");
    }
  };
  same({xi.shape[2]}, {input_size}, "the input's last dimension");
  const Val gh = int_binop("*", make_int(gates), hidden, text);
  const Val dh = int_binop("*", make_int(dirs), hidden, text);
  const Val layers_dirs = make_int(dirs * num_layers);
  const std::vector<Val> state = {layers_dirs, batch, hidden};

  // The parameters in PyTorch's flat-weights order: per layer and direction weight_ih,
  // weight_hh, bias_ih, bias_hh; `_reverse` after the forward direction. No other parameter of
  // the layer may exist: the problem's are the reference's, built with these settings.
  Val params;
  params.kind = Val::List;
  params.seq = 'l';
  std::set<std::string> expected;
  for (int64_t l = 0; l < num_layers; ++l)
    for (int64_t d = 0; d < dirs; ++d) {
      const std::string sfx = "_l" + std::to_string(l) + (d ? "_reverse" : "");
      std::vector<std::pair<std::string, std::vector<Val>>> ws = {
          {"weight_ih" + sfx, {gh, l == 0 ? input_size : dh}}, {"weight_hh" + sfx, {gh, hidden}}};
      if (bias) {
        ws.push_back({"bias_ih" + sfx, {gh}});
        ws.push_back({"bias_hh" + sfx, {gh}});
      }
      for (const auto& [n, shape] : ws) {
        const std::string path = layer.name + "." + n;
        expected.insert(path);
        Val w = problem_param(path, "self." + path);
        const TensorInfo wi = tensor_of(w, text);
        if (wi.dtype != dtype)
          refuse("mismatch",
                 "its parameter `" + path + "` is " + wi.dtype + ", its input " + dtype);
        same(wi.shape, shape, "its parameter `" + path + "`");
        params.items.push_back(w);
      }
    }
  for (const auto& q : C.P.parameters)
    if (starts_with(q.name, (layer.name + ".").c_str()) && !expected.count(q.name))
      refuse("mismatch", "the problem's parameter `" + q.name + "` is not one of `self." +
                             layer.name + "` as ModelNew builds it (num_layers " +
                             std::to_string(num_layers) + ", bias " + (bias ? "True" : "False") +
                             ", bidirectional " + (bidirectional ? "True" : "False") +
                             "): the reference's layer is another");

  // hx: given tensors of the state's shape, or zeros (a scratch buffer, which kernrl zeroes before
  // every run and nothing else writes).
  std::vector<Val> hs;
  if (hx.kind == Val::Void) {
    Val zeros = C.alloc(state, dtype, "0", text, layer.name + "_h0");
    hs.assign(lstm ? 2 : 1, zeros);
  } else if (lstm) {
    if (hx.kind != Val::List || hx.items.size() != 2)
      refuse("torch_op_in_forward", "kernrl maps hx as a tuple (h_0, c_0) of two tensors");
    hs = hx.items;
  } else {
    hs = {hx};
  }
  for (size_t i = 0; i < hs.size(); ++i) {
    const std::string what = hs.size() == 1 ? "h_0" : i == 0 ? "h_0" : "c_0";
    const TensorInfo hi = tensor_of(hs[i], text);
    if (hi.dtype != dtype) refuse("mismatch", what + " is " + hi.dtype + ", its input " + dtype);
    same(hi.shape, state, what);
    // PyTorch's cuDNN path refuses a state that is not contiguous ("rnn: hx is not contiguous");
    // nn.LSTM and nn.GRU do not make it so.
    if (hs[i].kind == Val::Tensor && !hs[i].elem.empty() && hs[i].elem != "reshaped" &&
        C.contiguous(hs[i].tensor) != std::optional<bool>(true))
      refuse("mismatch", what +
                             " is not contiguous at every size set, which PyTorch's RNN "
                             "refuses (`rnn: hx is not contiguous`)");
  }
  Val hx_arg = hs[0];
  if (lstm) {
    hx_arg = Val{};
    hx_arg.kind = Val::List;
    hx_arg.seq = 't';
    hx_arg.items = hs;
  }

  // aten::lstm.input / aten::gru.input (input, hx, params, has_biases, num_layers, dropout,
  // train, bidirectional, batch_first).
  // With batch_first, PyTorch computes the output time-major and returns it transposed: shape
  // (B, T, D*H), strides (D*H, B*D*H, 1), not contiguous. So that a kernel given it reads the
  // memory PyTorch's would, the step runs time-major on the input transposed (the copy PyTorch
  // makes too) into a (T, B, D*H) buffer, and the output is that buffer's transposed view.
  const bool time_major_out = batch_first && chosen == 0;
  const std::string category = "torch_op_in_forward";
  Val input = time_major_out
                  ? C.reorder_view("transpose", x, {make_int(0), make_int(1)}, text, category)
                  : x;
  std::vector<Val> args = {input,
                           hx_arg,
                           params,
                           make_bool(bias),
                           make_int(num_layers),
                           make_float(0.0),
                           make_bool(true),
                           make_bool(bidirectional),
                           make_bool(batch_first && !time_major_out)};
  std::vector<Val> shape = chosen == 0 ? std::vector<Val>{steps, batch, dh} : state;
  Val out = torch_step(lstm ? "lstm" : "gru", args, shape, dtype, text);
  C.launches.back().result = chosen;
  if (time_major_out)
    out = C.reorder_view("transpose", out, {make_int(0), make_int(1)}, text, category);

  // The call's value: output, (h_n, c_n) (LSTM) or output, h_n (GRU), the result forward uses
  // its step's; reading another refuses.
  static const char* names[] = {"output", "h_n", "c_n"};
  auto result = [&](int r) {
    return r == chosen ? out
                       : make_unknown(std::string("`") + names[r] + "` of `" + text +
                                      "`, a result of the call other than the one its torch step "
                                      "gives (kernrl maps one result of a call of " +
                                      cls + ")");
  };
  Val v;
  v.kind = Val::List;
  v.seq = 't';
  v.items.push_back(result(0));
  if (lstm) {
    Val pair;
    pair.kind = Val::List;
    pair.seq = 't';
    pair.items = {result(1), result(2)};
    v.items.push_back(pair);
  } else {
    v.items.push_back(result(1));
  }
  return v;
}

}  // namespace kernrl::kbimport::py

// The C++ autograd node of a replayed training-mode call (autograd_node.h). It is wired as ATen's generated
// nodes are: edges from the call's tensor inputs (gradient_edge, as collect_next_edges), saved tensors as
// SavedVariables (their version counters checked on unpack, released after a backward that does not retain the
// graph), the results' history set to it, and on backward one call of the declared backward operator through the
// dispatcher (so that operator's own plans replay), its results viewed to the inputs' shapes. Its backward is once
// differentiable, as the Python Function's (`@once_differentiable`): under create_graph its gradients lead to an
// error node, so a second derivative through it raises instead of coming out silently wrong.

#include "autograd_node.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/Dtype.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/basic_ops.h>
#include <torch/csrc/autograd/functions/utils.h>
#include <torch/csrc/autograd/saved_variable.h>

#include <optional>
#include <string>
#include <type_traits>
#include <utility>

namespace gems_autograd {

using torch::autograd::Node;
using torch::autograd::variable_list;

enum ArgKind : uint8_t { kGrad = 0, kSaved = 1, kConstant = 2 };

struct Arg {
  ArgKind kind;
  int index;  // kGrad: the forward output; kSaved: the saved tensor
  bool optional;  // kGrad: a Tensor? argument (an undefined gradient is None, not zeros)
  c10::IValue value;  // kConstant
};

struct SavedSpec {
  bool defined;
  int kind;  // 0 an input, 1 a result, 2 a temporary buffer of the replay
  int index;
  int64_t delta;  // bytes from the base's data
  at::ScalarType dtype;
  std::vector<int64_t> sizes, strides;
  bool exact;  // the input itself (saved as it is, not as a view)
};

struct NodeSpec {
  std::string name;
  std::optional<c10::OperatorHandle> op;
  std::vector<int> edges;  // per tensor input of the Function: the call's tensor
  std::vector<Arg> args;
  std::vector<SavedSpec> saved;
  std::vector<int> grads;  // per edge: the operator's result, or -1
  std::vector<std::pair<int, std::vector<int>>> undefined;  // output j's gradient undefined: per edge, grad m or -1
};

// torch 2.8-2.12 hold nodes in std::shared_ptr, later ones in c10::intrusive_ptr: whichever Node::getptr gives.
using NodePtr = decltype(std::declval<Node&>().getptr());

template <typename T, typename... A>
NodePtr make_node(A&&... args) {
  if constexpr (std::is_same_v<NodePtr, std::shared_ptr<Node>>) {
    return std::shared_ptr<T>(new T(std::forward<A>(args)...));
  } else {
    return c10::make_intrusive<T>(std::forward<A>(args)...);
  }
}

// The message of torch.autograd.function.once_differentiable: the Python path raises it too.
const char* const kTwice = "trying to differentiate twice a function that was marked with @once_differentiable";

struct GemsNode : public Node {
  GemsNode(const NodeSpec* spec, torch::autograd::edge_list&& edges) : Node(std::move(edges)), spec(spec) {}
  const NodeSpec* spec;
  std::vector<torch::autograd::SavedVariable> saved;
  std::vector<std::vector<int64_t>> sizes;  // per edge: the input's sizes, which its gradient takes

  std::string name() const override { return spec->name; }

  void release_variables() override {
    for (auto& s : saved) s.reset_data();
  }

  variable_list apply(variable_list&& grads) override {
    const NodeSpec& s = *spec;
    const size_t n = num_outputs();
    variable_list out(n);
    for (const auto& rule : s.undefined) {
      if (grads[rule.first].defined()) continue;
      for (size_t e = 0; e < n; ++e)
        if (rule.second[e] >= 0 && should_compute_output(e)) out[e] = grads[rule.second[e]];
      return once_differentiable(std::move(out), grads);
    }
    torch::jit::Stack stack;
    stack.reserve(s.op->schema().arguments().size());
    for (const Arg& a : s.args) {
      if (a.kind == kConstant) {
        stack.push_back(a.value);
        continue;
      }
      // unpack checks the version counter (a saved tensor modified in place) and that the graph was retained
      at::Tensor t = a.kind == kSaved ? saved[a.index].unpack() : grads[a.index];
      if (!t.defined() && a.kind == kGrad && !a.optional) t = input_metadata(a.index).zeros_like();
      t.defined() ? stack.emplace_back(std::move(t)) : stack.emplace_back();
    }
    const auto& arguments = s.op->schema().arguments();
    for (size_t i = stack.size(); i < arguments.size(); ++i) stack.push_back(*arguments[i].default_value());
    {
      at::NoGradGuard no_grad;  // as once_differentiable runs the Python backward
      s.op->callBoxed(&stack);
    }
    for (size_t e = 0; e < n; ++e) {
      const int k = s.grads[e];
      if (k < 0 || !should_compute_output(e) || !stack[k].isTensor()) continue;
      at::Tensor g = stack[k].toTensor();
      if (g.defined() && !g.sizes().equals(sizes[e])) g = g.view(sizes[e]);
      out[e] = std::move(g);
    }
    return once_differentiable(std::move(out), grads);
  }

  // Under create_graph, gradients that lead to an error node (what once_differentiable does in Python).
  static variable_list once_differentiable(variable_list&& out, const variable_list& grads) {
    if (!at::GradMode::is_enabled()) return std::move(out);
    bool requires_grad = false;
    for (const auto& g : grads) requires_grad = requires_grad || (g.defined() && g.requires_grad());
    if (!requires_grad) return std::move(out);
    for (auto& t : out) {
      if (!t.defined()) continue;
      t = t.detach();
      t.set_requires_grad(true);
    }
    NodePtr error = make_node<torch::autograd::DelayedError>(kTwice, int64_t(out.size()));
    return (*error)(std::move(out));
  }
};

const NodeSpec* build_node_spec(const pybind11::object& py_spec, size_t n_inputs, size_t n_outputs, size_t n_temps) {
  namespace py = pybind11;
  auto spec = std::make_unique<NodeSpec>();
  auto t = py_spec.cast<py::tuple>();
  spec->name = t[0].cast<std::string>();
  auto op = t[1].cast<py::tuple>();
  spec->op = c10::Dispatcher::singleton().findSchemaOrThrow(op[0].cast<std::string>().c_str(),
                                                            op[1].cast<std::string>().c_str());
  const auto& arguments = spec->op->schema().arguments();
  spec->edges = t[2].cast<std::vector<int>>();
  for (auto item : t[3].cast<py::list>()) {
    auto a = item.cast<py::tuple>();
    const std::string kind = a[0].cast<std::string>();
    Arg arg{kConstant, 0, false, c10::IValue()};
    if (kind == "g" || kind == "s") {
      arg.kind = kind == "g" ? kGrad : kSaved;
      arg.index = a[1].cast<int>();
      arg.optional = arguments.at(spec->args.size()).type()->kind() == c10::TypeKind::OptionalType;
    } else if (py::isinstance<py::bool_>(a[1])) {
      arg.value = a[1].cast<bool>();
    } else if (py::isinstance<py::int_>(a[1])) {
      arg.value = a[1].cast<int64_t>();
    } else if (py::isinstance<py::float_>(a[1])) {
      arg.value = a[1].cast<double>();
    } else {
      TORCH_CHECK(a[1].is_none(), "gems native: a backward constant that is not a bool, int, float or None");
    }
    spec->args.push_back(std::move(arg));
  }
  for (auto item : t[4].cast<py::list>()) {
    SavedSpec saved{false, 0, 0, 0, at::kFloat, {}, {}, false};
    if (!item.is_none()) {
      auto s = item.cast<py::tuple>();
      saved = {true, s[0].cast<int>(), s[1].cast<int>(), s[2].cast<int64_t>(),
               reinterpret_cast<THPDtype*>(s[3].ptr())->scalar_type, s[4].cast<std::vector<int64_t>>(),
               s[5].cast<std::vector<int64_t>>(), s[6].cast<bool>()};
    }
    spec->saved.push_back(std::move(saved));
  }
  spec->grads = t[5].cast<std::vector<int>>();
  for (auto item : t[6].cast<py::list>()) {
    auto rule = item.cast<py::tuple>();
    spec->undefined.emplace_back(rule[0].cast<int>(), rule[1].cast<std::vector<int>>());
  }
  // Indices are trusted on the hot path: check them here, once.
  bool fits = spec->grads.size() == spec->edges.size() && spec->args.size() <= arguments.size();
  for (int t : spec->edges) fits = fits && t >= 0 && size_t(t) < n_inputs;
  for (const Arg& a : spec->args)
    fits = fits && (a.kind == kConstant || (a.kind == kGrad ? size_t(a.index) < n_outputs : size_t(a.index) <
                                                                                                spec->saved.size()));
  for (const SavedSpec& s : spec->saved)
    fits = fits && (!s.defined || size_t(s.index) < (s.kind == 0 ? n_inputs : s.kind == 1 ? n_outputs : n_temps));
  for (int k : spec->grads) fits = fits && k < int(spec->op->schema().returns().size());
  for (const auto& rule : spec->undefined) {
    fits = fits && size_t(rule.first) < n_outputs && rule.second.size() == spec->edges.size();
    for (int m : rule.second) fits = fits && m < int(n_outputs);
  }
  TORCH_CHECK(fits, "gems native: a backward node spec that does not fit its call or its operator ", spec->name);
  return spec.release();  // kept for the process, as plans are
}

// A saved tensor of the replay, under no_grad as the Function's forward made it: an input itself, a view of an input
// (as the Function's rows view of x), or a tensor over a result's or a buffer's memory. One over a result's memory is
// no view of it (a view would hold the result, which holds the node: a cycle) but shares its version counter, so
// changing the result in place before backward raises as it does on the Python path.
at::Tensor saved_tensor(const SavedSpec& s, const std::vector<at::Tensor>& inputs, const std::vector<at::Tensor>& outs,
                        const std::vector<at::Tensor>& temps) {
  if (s.exact) return inputs[s.index];
  const int64_t item = int64_t(c10::elementSize(s.dtype));
  if (s.kind == 0) {
    const at::Tensor& base = inputs[s.index];
    return base.as_strided(s.sizes, s.strides, base.storage_offset() + s.delta / item);
  }
  const at::Tensor& base = s.kind == 1 ? outs[s.index] : temps[s.index];
  at::Tensor t = at::empty({0}, base.options().dtype(s.dtype))
                     .set_(base.storage(), base.storage_offset() + s.delta / item, s.sizes, s.strides);
  if (s.kind == 1) torch::autograd::impl::set_version_counter(t, torch::autograd::impl::version_counter(base));
  return t;
}

void attach_node(const NodeSpec& spec, const std::vector<at::Tensor>& inputs, const std::vector<at::Tensor>& outs,
                 const std::vector<at::Tensor>& temps) {
  torch::autograd::edge_list edges;
  edges.reserve(spec.edges.size());
  for (int t : spec.edges) edges.push_back(torch::autograd::impl::gradient_edge(inputs[t]));
  NodePtr ptr = make_node<GemsNode>(&spec, std::move(edges));
  auto* node = static_cast<GemsNode*>(ptr.get());
  node->sizes.reserve(spec.edges.size());
  for (int t : spec.edges) node->sizes.push_back(inputs[t].sizes().vec());
  node->saved.reserve(spec.saved.size());
  {
    at::NoGradGuard no_grad;
    for (const SavedSpec& s : spec.saved) {
      if (!s.defined) {
        node->saved.emplace_back();
      } else {
        node->saved.emplace_back(saved_tensor(s, inputs, outs, temps), false);
      }
    }
  }
  for (const at::Tensor& out : outs) torch::autograd::set_history(out, ptr);
}

}  // namespace gems_autograd

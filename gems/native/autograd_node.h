// The autograd node a training-mode replay builds in C++ (autograd_node.cpp; docs/native.md, "Autograd-level
// operators"): the recorded call's Function declared its backward as one call of a registered backward operator
// (gems/runtime/native_backward.py), so the node saves the tensors that Function saved and calls that operator
// through the dispatcher, as ATen's generated nodes call theirs.
#pragma once

#include <torch/extension.h>

#include <vector>

namespace gems_autograd {

struct NodeSpec;  // what one plan's node saves and calls (autograd_node.cpp)

// From the recorder's spec (gems/native/autograd_record.py `Graph.spec`) of a plan with these numbers of tensor
// inputs, results and temporary buffers; raises on one that does not fit them.
const NodeSpec* build_node_spec(const pybind11::object& spec, size_t n_inputs, size_t n_outputs, size_t n_temps);

// After a plan's forward launches: the node saving the declared tensors (inputs, views of inputs or results, or
// temporary buffers of the replay), with the call's tensor inputs as its edges, set as the results' history.
void attach_node(const NodeSpec& spec, const std::vector<at::Tensor>& inputs, const std::vector<at::Tensor>& outs,
                 const std::vector<at::Tensor>& temps);

}  // namespace gems_autograd

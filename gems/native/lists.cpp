// gems native lists: the host work of a multi-tensor launch (gems/ops/optim/multi_tensor.py) over an optimizer's
// lists, which hold hundreds of tensors: checking that they are uniform and writing the launch's table, one C++
// loop per call where Python took a frame per tensor. Bound in dispatch.cpp's module.

#include <torch/extension.h>
#include <torch/csrc/autograd/python_variable.h>

#include <vector>

namespace py = pybind11;

namespace {

bool floating(at::ScalarType t) {
  return t == at::kHalf || t == at::kBFloat16 || t == at::kFloat || t == at::kDouble;
}

// The tensors of Python lists of equal length, checked as the uniform path needs them: one floating dtype, one
// device, contiguous, and row i's sizes equal in every list. False (nothing thrown) for anything else, and for
// lists of unequal length: the per-row Python path checks those calls and raises ATen's errors.
bool uniform(const py::list& lists, std::vector<std::vector<const at::Tensor*>>& out) {
  if (lists.empty()) return false;
  const size_t n = py::len(lists[0]);
  const at::Tensor* first = nullptr;
  out.reserve(lists.size());
  for (py::handle list : lists) {
    if (!PyList_Check(list.ptr()) || size_t(PyList_GET_SIZE(list.ptr())) != n) return false;
    std::vector<const at::Tensor*> tensors(n);
    for (size_t i = 0; i < n; ++i) {
      PyObject* item = PyList_GET_ITEM(list.ptr(), i);
      if (!THPVariable_Check(item)) return false;
      const at::Tensor& t = THPVariable_Unpack(item);
      if (first == nullptr) {
        first = &t;
        if (!floating(t.scalar_type())) return false;
      }
      if (t.scalar_type() != first->scalar_type() || t.device() != first->device() || !t.is_contiguous()) return false;
      if (!out.empty() && t.sizes() != out[0][i]->sizes()) return false;
      tensors[i] = &t;
    }
    out.push_back(std::move(tensors));
  }
  return n > 0;
}

}  // namespace

// Whether lists (a Python list of lists of tensors) are uniform (see `uniform`).
bool lists_uniform(const py::list& lists) {
  std::vector<std::vector<const at::Tensor*>> tensors;
  return uniform(lists, tensors);
}

// The table of a uniform launch (see uniform_table below) written into `table`: the first program of each row,
// then the rows. Returns the programs; `n_rows` and `aligned` (every operand address 16-byte aligned) are set.
// `words`: one word per row, or nullptr. Shared by the Python path and the native replay of list plans.
int64_t write_table(const std::vector<std::vector<const at::Tensor*>>& operands,
                    const std::vector<std::vector<const at::Tensor*>>& tails, const int64_t* words, int64_t chunk,
                    bool flat_flag, std::vector<int64_t>& table, int64_t& n_rows, bool& aligned) {
  const size_t n = operands[0].size(), lists = operands.size();
  std::vector<int64_t> rows;
  table.clear();
  table.reserve(n);
  rows.reserve(n * (lists + tails.size() + 3));
  int64_t programs = 0;
  uint64_t address_bits = 0;
  for (size_t i = 0; i < n; ++i) {
    for (size_t l = 0; l < lists; ++l) address_bits |= reinterpret_cast<uint64_t>(operands[l][i]->data_ptr());
    const int64_t numel = operands[0][i]->numel();
    if (numel == 0) continue;
    table.push_back(programs);
    programs += (numel + chunk - 1) / chunk;
    rows.push_back(numel);
    if (flat_flag) rows.push_back(0);
    for (size_t l = 0; l < lists; ++l) rows.push_back(int64_t(reinterpret_cast<uint64_t>(operands[l][i]->data_ptr())));
    if (words != nullptr) rows.push_back(words[i]);
    for (const auto& tail : tails) rows.push_back(int64_t(reinterpret_cast<uint64_t>(tail[i]->data_ptr())));
  }
  n_rows = int64_t(table.size());
  table.insert(table.end(), rows.begin(), rows.end());
  aligned = (address_bits & 15) == 0;
  return programs;
}

// The table of a uniform launch over `operands` (lists: the kernel's operands, checked by `uniform`): None when
// they are not uniform, else (table words as bytes, programs, rows, whether every operand address is 16-byte
// aligned). A row's words: numel; a 0 when `flat_flag` (the foreach kernel's flat walk); each operand's address;
// `words[i]` when `words` is not empty (a scalar's bits, or a placeholder); the address of row i's tensor of each
// list of `tails` (unchecked: fused optimizers' step counts). Empty tensors get no row. The table starts with each
// row's first program (`chunk` elements per program).
py::object uniform_table(const py::list& operands, const py::list& tails, const std::vector<int64_t>& words,
                         int64_t chunk, bool flat_flag) {
  std::vector<std::vector<const at::Tensor*>> tensors;
  if (!uniform(operands, tensors)) return py::none();
  const size_t n = tensors[0].size();
  if (!words.empty() && words.size() != n) return py::none();
  std::vector<std::vector<const at::Tensor*>> tail_tensors;
  for (py::handle list : tails) {
    if (!PyList_Check(list.ptr()) || size_t(PyList_GET_SIZE(list.ptr())) != n) return py::none();
    std::vector<const at::Tensor*> items(n);
    for (size_t i = 0; i < n; ++i) {
      PyObject* item = PyList_GET_ITEM(list.ptr(), i);
      if (!THPVariable_Check(item)) return py::none();
      items[i] = &THPVariable_Unpack(item);
    }
    tail_tensors.push_back(std::move(items));
  }
  std::vector<int64_t> table;
  int64_t n_rows = 0;
  bool aligned = true;
  const int64_t programs = write_table(tensors, tail_tensors, words.empty() ? nullptr : words.data(), chunk, flat_flag,
                                       table, n_rows, aligned);
  py::bytes content(reinterpret_cast<const char*>(table.data()), table.size() * sizeof(int64_t));
  return py::make_tuple(content, programs, n_rows, aligned);
}

// ATen's functional foreach results for a list that `uniform` accepted: a fresh at::empty_like of each tensor (its
// own storage, the tensor's layout), as a Python list, where Python took a frame per tensor.
py::list empty_like_list(const py::list& tensors) {
  const Py_ssize_t n = PyList_GET_SIZE(tensors.ptr());
  py::list out(n);
  for (Py_ssize_t i = 0; i < n; ++i) {
    const at::Tensor& t = THPVariable_Unpack(PyList_GET_ITEM(tensors.ptr(), i));
    PyList_SET_ITEM(out.ptr(), i, THPVariable_Wrap(at::empty_like(t)));
  }
  return out;
}

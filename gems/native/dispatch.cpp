// gems native dispatch: one boxed kernel per registered overload that replays a recorded launch plan.
//
// docs/native.md describes the design: the key (what the Python implementation's decision read), the
// plan (outputs to allocate, temporary buffers, kernel launches with their arguments expressed as
// "pointer of input i / output j / temp k plus a byte offset" or constants) and what invalidates it.
// The hot path takes no lock, builds no string, logs nothing and does not touch Python.

#include <torch/extension.h>
#include <torch/library.h>
#include <torch/csrc/Dtype.h>
#include <torch/csrc/DynamicTypes.h>
#include <torch/csrc/jit/python/pybind_utils.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include <dlfcn.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <vector>

namespace {

// The driver API, declared here so that no CUDA toolkit is needed to build.
typedef int CUresult;
typedef void* CUfunction;
typedef void* CUstream;
typedef void* CUcontext;
typedef CUresult (*cuLaunchKernel_t)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                      unsigned, CUstream, void**, void**);
typedef CUresult (*cuDevicePrimaryCtxRetain_t)(CUcontext*, int);
typedef CUresult (*cuCtxSetCurrent_t)(CUcontext);
typedef CUresult (*cuGetErrorName_t)(CUresult, const char**);
constexpr CUresult kInvalidContext = 201;

constexpr int kMaxKey = 128;     // words; a longer signature is served by Python
constexpr int kMaxTensors = 8;   // tensors per call that a plan may reference
constexpr int kMaxParams = 64;   // kernel parameters per launch
constexpr int kTableSize = 64;   // plans per overload (open addressing)
constexpr int kProbe = 8;

enum Primitive { kPython = 0, kCuda = 1 };

struct Driver {
  cuLaunchKernel_t launch = nullptr;
  cuDevicePrimaryCtxRetain_t retain = nullptr;
  cuCtxSetCurrent_t set_current = nullptr;
  cuGetErrorName_t error_name = nullptr;
};

Driver g_driver;
int g_primitive = kPython;
bool g_vendor_cpu = true;
c10::DeviceType g_device_type = c10::DeviceType::CPU;
PyObject* g_replay = nullptr;  // Python primitive: replay(py_plan, inputs, outputs, temps)
std::atomic<int> g_aten_only{0};
std::atomic<uint64_t> g_generation{1};
bool g_enabled = true;

struct Patch {
  int param;
  int kind;  // 0 input, 1 output, 2 temp
  int index;
  int64_t delta;  // bytes
};

struct Launch {
  CUfunction fn;
  unsigned gx, gy, gz, block, shared;
  std::vector<uint64_t> params;  // one 8-byte slot per parameter, constants filled in
  std::vector<Patch> patches;
};

struct OutSpec {
  int kind;  // 0 fresh, 1 an input tensor, 2 None (an undefined tensor: an optional result not asked for)
  int index;
  std::vector<int64_t> sizes, strides;
  at::ScalarType dtype;
  int device_index;
};

struct Plan {
  uint64_t generation;
  int nkey;
  uint64_t key[kMaxKey];
  bool python_only;
  std::vector<OutSpec> outs;
  std::vector<int64_t> temps;  // bytes
  std::vector<Launch> launches;
  PyObject* py_plan = nullptr;  // strong reference, never released (plans are never freed)
};

struct Slot {
  std::string overload;
  PyObject* serve = nullptr;
  std::optional<c10::SafeKernelFunction> original;
  std::vector<uint8_t> mutable_arg;
  size_t nargs = 0;
  uint64_t generation = 0;
  std::atomic<Plan*> table[kTableSize];
  std::atomic<int64_t> hits{0}, launches{0}, plans{0};
  Slot() {
    for (auto& p : table) p.store(nullptr);
  }
};

std::vector<std::unique_ptr<Slot>> g_slots;                // never shrinks: counts survive re-registration
std::vector<std::unique_ptr<torch::Library>> g_libraries;  // index = handle
std::vector<Plan*> g_retired;                              // replaced plans: readers may still hold them

struct Key {
  int n = 0;
  bool ok = true;
  uint64_t w[kMaxKey];
  const at::Tensor* tensors[kMaxTensors];
  bool mutable_tensor[kMaxTensors];
  int nt = 0;
  inline void add(uint64_t v) {
    if (n < kMaxKey) w[n++] = v; else ok = false;
  }
};

enum Tag : uint64_t { kNone = 1, kInt, kDouble, kBool, kComplex, kTensor, kIntList, kDoubleList, kBoolList,
                      kTensorList, kString, kDevice, kUndefined };

inline uint64_t tag(Tag t, uint64_t low = 0) { return (uint64_t(t) << 56) | (low & ((uint64_t(1) << 56) - 1)); }

inline uint64_t bits(double d) {
  uint64_t u;
  std::memcpy(&u, &d, 8);
  return u;
}

void add_tensor(Key& k, const at::Tensor& t, bool is_mutable) {
  if (!t.defined()) {
    k.add(tag(kUndefined));
    return;
  }
  auto* impl = t.unsafeGetTensorImpl();
  if (k.nt == kMaxTensors || impl->layout() != c10::kStrided || impl->is_conj() || impl->is_neg() ||
      !impl->has_storage()) {
    k.ok = false;
    return;
  }
  // The pointer's offset within 16 bytes, not just "aligned or not": a kernel argument at a fixed byte
  // offset from it is 16-byte aligned (a Triton specialization) exactly when that offset matches.
  const auto device = impl->device();
  const int64_t dim = impl->dim();
  const uint64_t addr = reinterpret_cast<uint64_t>(impl->data());
  const bool wrapped = impl->is_wrapped_number();
  k.add(tag(kTensor, uint64_t(impl->dtype().toScalarType()) | (uint64_t(dim) << 8) |
                        (uint64_t(device.type()) << 16) | (uint64_t(device.index() + 1) << 24) |
                        ((addr & 15) << 32) | (uint64_t(wrapped) << 36)));
  const auto sizes = impl->sizes();
  const auto strides = impl->strides();
  for (int64_t d = 0; d < dim; ++d) {
    k.add(uint64_t(sizes[d]));
    k.add(uint64_t(strides[d]));
  }
  // A number the Python implementation reads as a value: a wrapped number, or a CPU 0-d tensor
  // beside device tensors (ATen's "cpu scalar").
  if (wrapped || (dim == 0 && device.is_cpu() && !g_vendor_cpu)) {
    uint64_t v[2] = {0, 0};
    const size_t size = impl->itemsize();
    if (size > 16 || addr == 0) {
      k.ok = false;
      return;
    }
    std::memcpy(v, impl->data(), size);
    k.add(v[0]);
    if (size > 8) k.add(v[1]);
  }
  k.mutable_tensor[k.nt] = is_mutable;
  k.tensors[k.nt++] = &t;
}

// The signature of one call: everything the Python implementation's decision read.
void compute_key(Key& k, const Slot& s, const c10::IValue* args, c10::Device current) {
  k.add(uint64_t(c10::typeMetaToScalarType(c10::get_default_dtype())) | (uint64_t(current.index() + 1) << 8));
  for (size_t i = 0; i < s.nargs && k.ok; ++i) {
    const c10::IValue& a = args[i];
    if (a.isTensor()) {
      add_tensor(k, a.toTensor(), s.mutable_arg[i]);
    } else if (a.isNone()) {
      k.add(tag(kNone));
    } else if (a.isInt()) {
      k.add(tag(kInt));
      k.add(uint64_t(a.toInt()));
    } else if (a.isDouble()) {
      k.add(tag(kDouble));
      k.add(bits(a.toDouble()));
    } else if (a.isBool()) {
      k.add(tag(kBool, a.toBool()));
    } else if (a.isComplexDouble()) {
      auto c = a.toComplexDouble();
      k.add(tag(kComplex));
      k.add(bits(c.real()));
      k.add(bits(c.imag()));
    } else if (a.isIntList()) {
      auto list = a.toIntList();
      k.add(tag(kIntList, list.size()));
      for (int64_t v : list) k.add(uint64_t(v));
    } else if (a.isDoubleList()) {
      auto list = a.toDoubleList();
      k.add(tag(kDoubleList, list.size()));
      for (double v : list) k.add(bits(v));
    } else if (a.isBoolList()) {
      auto list = a.toBoolList();
      k.add(tag(kBoolList, list.size()));
      for (bool v : list) k.add(uint64_t(v));
    } else if (a.isTensorList()) {
      auto list = a.toListRef();  // references into the stack's list: valid while the call runs
      k.add(tag(kTensorList, list.size()));
      for (size_t j = 0; j < list.size() && k.ok; ++j) add_tensor(k, list[j].toTensor(), s.mutable_arg[i]);
    } else if (a.isString()) {
      auto str = a.toStringRef();
      if (str.size() > 24) {
        k.ok = false;
        break;
      }
      uint64_t packed[3] = {0, 0, 0};
      std::memcpy(packed, str.data(), str.size());
      k.add(tag(kString, str.size()));
      for (uint64_t v : packed) k.add(v);
    } else if (a.isDevice()) {
      auto d = a.toDevice();
      k.add(tag(kDevice, (uint64_t(d.type()) << 8) | uint64_t(d.index() + 1)));
    } else {
      k.ok = false;  // generators, optional-tensor lists, symbolic values...: Python decides
    }
  }
  if (!k.ok) return;
  // Which tensors are the same memory: add(x, x) and add(x, y) may be planned differently. A written
  // tensor that shares storage with another tensor in any other way is left to Python (ATen's overlap
  // errors and copies live there).
  uint64_t alias = 0;
  int bit = 0;
  for (int i = 0; i < k.nt; ++i) {
    auto* a = k.tensors[i]->unsafeGetTensorImpl();
    for (int j = i + 1; j < k.nt; ++j, ++bit) {
      auto* b = k.tensors[j]->unsafeGetTensorImpl();
      if (a == b) {
        alias |= uint64_t(1) << bit;
        continue;
      }
      if ((k.mutable_tensor[i] || k.mutable_tensor[j]) &&
          a->storage().unsafeGetStorageImpl() == b->storage().unsafeGetStorageImpl()) {
        k.ok = false;
        return;
      }
    }
  }
  k.add(alias);
}

inline uint64_t hash_key(const Key& k) {
  uint64_t h = 1469598103934665603ull;
  for (int i = 0; i < k.n; ++i) {
    h ^= k.w[i];
    h *= 1099511628211ull;
    h ^= h >> 29;
  }
  return h;
}

Plan* find(Slot& s, const Key& k, uint64_t h) {
  for (int p = 0; p < kProbe; ++p) {
    Plan* plan = s.table[(h + p) & (kTableSize - 1)].load(std::memory_order_acquire);
    if (plan == nullptr) return nullptr;
    if (plan->generation == s.generation && plan->nkey == k.n &&
        std::memcmp(plan->key, k.w, sizeof(uint64_t) * k.n) == 0)
      return plan;
  }
  return nullptr;
}

// Under the GIL: inserts are serialized; readers see a complete plan or none.
void insert(Slot& s, const Key& k, uint64_t h, Plan* plan) {
  plan->generation = s.generation;
  plan->nkey = k.n;
  std::memcpy(plan->key, k.w, sizeof(uint64_t) * k.n);
  for (int p = 0; p < kProbe; ++p) {
    auto& cell = s.table[(h + p) & (kTableSize - 1)];
    Plan* old = cell.load(std::memory_order_acquire);
    if (old == nullptr || old->generation != s.generation) {
      if (old != nullptr) g_retired.push_back(old);
      cell.store(plan, std::memory_order_release);
      s.plans.fetch_add(1, std::memory_order_relaxed);
      return;
    }
  }
  g_retired.push_back(plan);  // table full around this hash: the call stays on the Python path
}

[[noreturn]] void launch_failed(const Slot& s, CUresult r) {
  const char* name = "unknown";
  if (g_driver.error_name) g_driver.error_name(r, &name);
  TORCH_CHECK(false, "gems native: cuLaunchKernel failed for aten::", s.overload, " with ", name, " (", r, ")");
}

void launch_cuda(const Slot& s, const Plan& plan, c10::Device device, const std::vector<at::Tensor>& inputs,
                 const std::vector<at::Tensor>& outs, const std::vector<at::Tensor>& temps) {
  const auto* guard = c10::impl::getDeviceGuardImpl(g_device_type);
  CUstream stream = static_cast<CUstream>(guard->getStream(device).native_handle());
  uint64_t values[kMaxParams + 2];
  void* params[kMaxParams + 2];
  for (const Launch& l : plan.launches) {
    const size_t n = l.params.size();
    std::memcpy(values, l.params.data(), n * sizeof(uint64_t));
    for (const Patch& p : l.patches) {
      const at::Tensor& t = p.kind == 0 ? inputs[p.index] : p.kind == 1 ? outs[p.index] : temps[p.index];
      values[p.param] = reinterpret_cast<uint64_t>(t.unsafeGetTensorImpl()->data()) + p.delta;
    }
    values[n] = values[n + 1] = 0;  // triton's global and profile scratch: none
    for (size_t i = 0; i < n + 2; ++i) params[i] = &values[i];
    if (l.gx == 0 || l.gy == 0 || l.gz == 0) continue;
    CUresult r = g_driver.launch(l.fn, l.gx, l.gy, l.gz, l.block, 1, 1, l.shared, stream, params, nullptr);
    if (r == kInvalidContext && g_driver.retain && g_driver.set_current) {
      // A thread that has not used this device's context yet: make the primary context current.
      CUcontext ctx = nullptr;
      if (g_driver.retain(&ctx, device.index()) == 0 && g_driver.set_current(ctx) == 0)
        r = g_driver.launch(l.fn, l.gx, l.gy, l.gz, l.block, 1, 1, l.shared, stream, params, nullptr);
    }
    if (r != 0) launch_failed(s, r);
  }
}

py::tuple as_tuple(const std::vector<at::Tensor>& v) {
  py::tuple t(v.size());
  for (size_t i = 0; i < v.size(); ++i) t[i] = py::cast(v[i]);
  return t;
}

void replay(Slot& s, const Plan& plan, c10::Device device, const Key& k, torch::jit::Stack* stack) {
  std::vector<at::Tensor> inputs;
  inputs.reserve(k.nt);
  for (int i = 0; i < k.nt; ++i) inputs.push_back(*k.tensors[i]);
  std::vector<at::Tensor> temps;
  temps.reserve(plan.temps.size());
  for (int64_t bytes : plan.temps)
    temps.push_back(at::empty({bytes}, at::TensorOptions().dtype(at::kByte).device(device)));
  std::vector<at::Tensor> outs;
  outs.reserve(plan.outs.size());
  for (const OutSpec& o : plan.outs) {
    if (o.kind == 1) {
      outs.push_back(inputs[o.index]);
    } else if (o.kind == 2) {
      outs.emplace_back();
    } else {
      auto options = at::TensorOptions().dtype(o.dtype).device(c10::Device(g_device_type, o.device_index));
      outs.push_back(at::empty_strided(o.sizes, o.strides, options));
    }
  }
  if (g_primitive == kCuda) {
    launch_cuda(s, plan, device, inputs, outs, temps);
  } else {
    py::gil_scoped_acquire gil;
    py::handle fn(g_replay);
    fn(py::handle(plan.py_plan), as_tuple(inputs), as_tuple(outs), as_tuple(temps));
  }
  s.hits.fetch_add(1, std::memory_order_relaxed);
  s.launches.fetch_add(int64_t(plan.launches.size()), std::memory_order_relaxed);
  torch::jit::drop(*stack, s.nargs);
  for (auto& o : outs) stack->emplace_back(std::move(o));
}

Plan* build_plan(const py::object& spec, const Slot& s) {
  auto plan = std::make_unique<Plan>();
  if (spec.is(py::bool_(false))) {
    plan->python_only = true;
    return plan.release();
  }
  plan->python_only = false;
  auto t = spec.cast<py::tuple>();
  for (auto o : t[0].cast<py::list>()) {
    auto item = o.cast<py::tuple>();
    OutSpec out;
    out.kind = item[0].cast<int>();
    out.index = item[1].cast<int>();
    if (out.kind == 0) {
      out.sizes = item[2].cast<std::vector<int64_t>>();
      out.strides = item[3].cast<std::vector<int64_t>>();
      out.dtype = reinterpret_cast<THPDtype*>(item[4].ptr())->scalar_type;
      out.device_index = item[5].cast<int>();
    }
    plan->outs.push_back(std::move(out));
  }
  plan->temps = t[1].cast<std::vector<int64_t>>();
  for (auto l : t[2].cast<py::list>()) {
    auto item = l.cast<py::tuple>();
    Launch launch;
    launch.fn = reinterpret_cast<CUfunction>(item[0].cast<uint64_t>());
    launch.gx = item[1].cast<unsigned>();
    launch.gy = item[2].cast<unsigned>();
    launch.gz = item[3].cast<unsigned>();
    launch.block = item[4].cast<unsigned>();
    launch.shared = item[5].cast<unsigned>();
    for (auto v : item[6].cast<py::list>()) launch.params.push_back(uint64_t(v.cast<int64_t>()));
    for (auto p : item[7].cast<py::list>()) {
      auto patch = p.cast<py::tuple>();
      launch.patches.push_back({patch[0].cast<int>(), patch[1].cast<int>(), patch[2].cast<int>(),
                                patch[3].cast<int64_t>()});
    }
    TORCH_CHECK(launch.params.size() <= size_t(kMaxParams), "gems native: too many kernel parameters");
    plan->launches.push_back(std::move(launch));
  }
  plan->py_plan = t[3].ptr();
  Py_INCREF(plan->py_plan);
  // The Python primitive replays the py_plan; count its launches the same way.
  if (g_primitive == kPython) plan->launches.resize(t[4].cast<size_t>());
  (void)s;
  return plan.release();
}

// The Python kernel convention (as torch's own Python kernels get their arguments): positional
// arguments up to the keyword-only ones, trailing defaults dropped; keyword-only ones unless default.
std::pair<py::tuple, py::dict> to_python(const c10::OperatorHandle& op, std::vector<c10::IValue>& arguments) {
  const auto& schema = op.schema().arguments();
  const size_t n = arguments.size();
  auto is_default = [&](size_t i) {
    const auto& d = schema[i].default_value();
    return d.has_value() && *d == arguments[i];
  };
  size_t kwarg_start = n;
  while (kwarg_start > 0 && schema[kwarg_start - 1].kwarg_only()) --kwarg_start;
  size_t positional_end = kwarg_start;
  while (positional_end > 0 && is_default(positional_end - 1)) --positional_end;
  // dtype, layout and memory format travel as ints on the stack; Python kernels get the torch objects
  auto convert = [&](size_t i) -> py::object {
    const c10::TypePtr& type = schema[i].real_type();
    auto kind = type->kind();
    if (auto optional = type->cast<c10::OptionalType>()) kind = optional->getElementType()->kind();
    if (arguments[i].isNone()) return py::none();
    if (kind == c10::TypeKind::ScalarTypeType)
      return py::reinterpret_borrow<py::object>(
          reinterpret_cast<PyObject*>(torch::getTHPDtype(static_cast<at::ScalarType>(arguments[i].toInt()))));
    if (kind == c10::TypeKind::LayoutType)
      return py::reinterpret_borrow<py::object>(
          reinterpret_cast<PyObject*>(torch::getTHPLayout(static_cast<at::Layout>(arguments[i].toInt()))));
    if (kind == c10::TypeKind::MemoryFormatType)
      return py::cast(static_cast<c10::MemoryFormat>(arguments[i].toInt()));
    return torch::jit::toPyObject(std::move(arguments[i]));
  };
  py::tuple args(positional_end);
  for (size_t i = 0; i < positional_end; ++i) args[i] = convert(i);
  py::dict kwargs;
  for (size_t i = kwarg_start; i < n; ++i) {
    if (is_default(i)) continue;
    kwargs[py::str(schema[i].name())] = convert(i);
  }
  return {std::move(args), std::move(kwargs)};
}

void push_result(const c10::OperatorHandle& op, torch::jit::Stack* stack, const py::object& out) {
  const auto& returns = op.schema().returns();
  if (returns.empty()) {
    TORCH_CHECK(out.is_none(), "gems native: aten::", op.schema().name(), " returns nothing, got a value");
  } else if (returns.size() == 1) {
    stack->emplace_back(torch::jit::toIValue(out, returns[0].real_type()));
  } else {
    auto values = py::cast<py::sequence>(out);
    for (size_t i = 0; i < returns.size(); ++i)
      stack->emplace_back(torch::jit::toIValue(values[i], returns[i].real_type()));
  }
}

// A call the plan table does not serve: the Python implementation, recording when the key is known.
void serve_python(Slot& s, const c10::OperatorHandle& op, c10::DispatchKeySet ks, torch::jit::Stack* stack,
                  const Key* k, uint64_t h) {
  py::gil_scoped_acquire gil;
  py::object tensors = py::none();
  if (k != nullptr) {  // before the stack is popped: the key points into it
    py::tuple t(k->nt);
    for (int i = 0; i < k->nt; ++i) t[i] = py::cast(*k->tensors[i]);
    tensors = t;
  }
  std::vector<c10::IValue> arguments = torch::jit::pop(*stack, s.nargs);
  auto args_kwargs = to_python(op, arguments);
  py::handle serve(s.serve);
  py::tuple res = serve(ks, args_kwargs.first, args_kwargs.second, tensors).cast<py::tuple>();
  push_result(op, stack, res[0]);
  if (k != nullptr && !res[1].is_none()) insert(s, *k, h, build_plan(res[1], s));
}

struct GemsKernel : public c10::OperatorKernel {
  explicit GemsKernel(Slot* slot) : slot(slot) {}
  Slot* slot;

  void operator()(const c10::OperatorHandle& op, c10::DispatchKeySet ks, torch::jit::Stack* stack) {
    Slot& s = *slot;
    if (g_aten_only.load(std::memory_order_relaxed)) {
      s.original->callBoxed(op, ks, stack);
      return;
    }
    if (!g_enabled) {
      serve_python(s, op, ks, stack, nullptr, 0);
      return;
    }
    const c10::IValue* args = stack->data() + (stack->size() - s.nargs);
    c10::Device current = g_vendor_cpu ? c10::Device(c10::DeviceType::CPU)
                                       : c10::impl::getDeviceGuardImpl(g_device_type)->getDevice();
    Key k;
    compute_key(k, s, args, current);
    if (!k.ok) {
      serve_python(s, op, ks, stack, nullptr, 0);
      return;
    }
    const uint64_t h = hash_key(k);
    Plan* plan = find(s, k, h);
    if (plan != nullptr && !plan->python_only) {
      replay(s, *plan, current, k, stack);
      return;
    }
    serve_python(s, op, ks, stack, plan == nullptr ? &k : nullptr, h);
  }
};

struct QuietWarnings : c10::WarningHandler {
  void process(const c10::Warning&) override {}
};

// ------------------------------------------------------------------------------------------ bindings

int64_t new_slot(const std::string& overload) {
  g_slots.push_back(std::make_unique<Slot>());
  g_slots.back()->overload = overload;
  return int64_t(g_slots.size() - 1);
}

int64_t register_kernel(int64_t slot_id, const std::string& overload, const std::string& key, py::object serve,
                        bool keep_plans) {
  Slot& s = *g_slots.at(slot_id);
  auto dot = overload.find('.');
  std::string name = overload.substr(0, dot);
  std::string variant = dot == std::string::npos ? "" : overload.substr(dot + 1);
  auto op = c10::Dispatcher::singleton().findSchemaOrThrow(("aten::" + name).c_str(), variant.c_str());
  const auto dispatch_key = c10::parseDispatchKey(key);
  s.original = op.getComputedKernelForDispatchKey(dispatch_key);
  const auto& arguments = op.schema().arguments();
  s.nargs = arguments.size();
  s.mutable_arg.assign(s.nargs, 0);
  for (size_t i = 0; i < s.nargs; ++i) {
    const auto* alias = arguments[i].alias_info();
    s.mutable_arg[i] = alias != nullptr && alias->isWrite();
  }
  Py_XDECREF(s.serve);
  s.serve = serve.release().ptr();
  // Plans recorded for an earlier registration are stale, unless the same implementation is registered again
  // at the same key (gems-perf and the model harness unregister gems to time ATen, then register it back).
  if (!keep_plans) s.generation = g_generation.fetch_add(1) + 1;
  QuietWarnings quiet;
  c10::WarningUtils::WarningHandlerGuard guard(&quiet);
  auto lib = std::make_unique<torch::Library>(torch::Library::IMPL, "aten", dispatch_key, __FILE__, __LINE__);
  lib->impl(overload.c_str(), torch::CppFunction::makeFromBoxedFunctor(std::make_unique<GemsKernel>(&s)));
  g_libraries.push_back(std::move(lib));
  return int64_t(g_libraries.size() - 1);
}

void deregister(int64_t handle) { g_libraries.at(handle).reset(); }

std::string configure(const std::string& primitive, const std::string& device_type, py::object replay_fn) {
  g_vendor_cpu = device_type == "cpu";
  g_device_type = c10::Device(device_type).type();
  Py_XDECREF(g_replay);
  g_replay = replay_fn.release().ptr();
  if (primitive == "python") {
    g_primitive = kPython;
    return "";
  }
  if (primitive != "cuda") return "unknown launch primitive '" + primitive + "'";
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (lib == nullptr) return std::string("dlopen(\"libcuda.so.1\") failed: ") + dlerror();
  g_driver.launch = reinterpret_cast<cuLaunchKernel_t>(dlsym(lib, "cuLaunchKernel"));
  g_driver.retain = reinterpret_cast<cuDevicePrimaryCtxRetain_t>(dlsym(lib, "cuDevicePrimaryCtxRetain"));
  g_driver.set_current = reinterpret_cast<cuCtxSetCurrent_t>(dlsym(lib, "cuCtxSetCurrent"));
  g_driver.error_name = reinterpret_cast<cuGetErrorName_t>(dlsym(lib, "cuGetErrorName"));
  if (g_driver.launch == nullptr) return "libcuda.so.1 has no cuLaunchKernel";
  g_primitive = kCuda;
  return "";
}

void aten_only_add(int delta) { g_aten_only.fetch_add(delta, std::memory_order_relaxed); }

void set_enabled(bool enabled) { g_enabled = enabled; }

// (overload, calls replayed, kernels launched by replays, plans stored) per slot.
py::list counts() {
  py::list out;
  for (auto& s : g_slots)
    out.append(py::make_tuple(s->overload, s->hits.load(), s->launches.load(), s->plans.load()));
  return out;
}

void reset_counts() {
  for (auto& s : g_slots) {
    s->hits.store(0);
    s->launches.store(0);
  }
}

// Every stored plan becomes stale (a vendor's configs changed, tests): the next call of each
// signature records again.
void invalidate() {
  for (auto& s : g_slots) {
    s->generation = g_generation.fetch_add(1) + 1;
    s->plans.store(0);
  }
}

}  // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("new_slot", &new_slot);
  m.def("register_kernel", &register_kernel);
  m.def("deregister", &deregister);
  m.def("configure", &configure);
  m.def("aten_only_add", &aten_only_add);
  m.def("set_enabled", &set_enabled);
  m.def("counts", &counts);
  m.def("reset_counts", &reset_counts);
  m.def("invalidate", &invalidate);
}

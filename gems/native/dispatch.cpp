// gems native dispatch: one boxed kernel per registered overload that replays a recorded launch plan.
//
// docs/native.md describes the design: the key (what the Python implementation's decision read), the
// plan (outputs to allocate, temporary buffers, kernel launches with their arguments expressed as
// "pointer of input i / output j / temp k plus a byte offset" or constants), size-generic plans (the
// same plan for a family of calls whose sizes are affine in one variable v, its size-dependent numbers
// recomputed here as floor((a * v + b) / d)) and what invalidates a plan.
// The hot path takes no lock, builds no string, logs nothing and does not touch Python.

#include <torch/extension.h>
#include <torch/library.h>
#include <torch/csrc/Dtype.h>
#include <torch/csrc/DynamicTypes.h>
#include <torch/csrc/jit/python/pybind_utils.h>
#include <ATen/Context.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/GradMode.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/util/SmallVector.h>

#include <dlfcn.h>

#include "autograd_node.h"

#include <atomic>
#include <cstring>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

// lists.cpp: a uniform launch's table (the first program of each row, then the rows); returns the programs.
int64_t write_table(const std::vector<std::vector<const at::Tensor*>>& operands,
                    const std::vector<std::vector<const at::Tensor*>>& tails, const int64_t* words, int64_t chunk,
                    bool flat_flag, std::vector<int64_t>& table, int64_t& n_rows, bool& aligned);

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
typedef CUresult (*cuStreamIsCapturing_t)(CUstream, int*);
typedef CUresult (*cuMemcpyDtoHAsync_t)(void*, uint64_t, size_t, CUstream);
typedef CUresult (*cuStreamSynchronize_t)(CUstream);
constexpr CUresult kInvalidContext = 201;

constexpr int kMaxKey = 128;     // words; a longer signature is served by Python
// Tensors per call that a plan may reference: the cuDNN attention backward of a masked model takes 9 (grad, q, k,
// v, out, lse, the two Philox tensors, the bias). The key's arrays are fixed, so a larger bound costs stack space,
// not time; the aliasing word below holds 4 bits per tensor.
constexpr int kMaxTensors = 16;
static_assert(kMaxTensors <= 16, "the aliasing word holds 4 bits per tensor");
constexpr int kMaxParams = 64;   // kernel parameters per launch
constexpr int kTableSize = 64;   // plans per overload (open addressing)
constexpr int kProbe = 8;
constexpr int kMaxGeneric = 64;  // size-generic plans per overload
constexpr int kMaxValues = 64;   // size-dependent numbers per size-generic plan

enum Primitive { kPython = 0, kCuda = 1 };

// What a key word is: the words a size-generic plan may let vary, with where they come from.
// desc = kind | (tensor or argument index << 4) | (dimension or list item << 16).
enum WordKind : uint32_t { kFixedWord = 0, kSizeWord = 1, kStrideWord = 2, kIntWord = 3, kIntListWord = 4 };

// Why a call left the native path without a new signature to record (gems.native.python_reasons()).
enum Why : uint8_t { kWhyNone = 0, kWhyArgument, kWhyTensors, kWhyLong, kWhyTensorKind, kWhyOverlap, kWhyOff,
                     kWhyGrad, kWhyTraced, kWhyCaptureDraw, kWhyList, kWhyListTable, kWhyCheck, kWhyCaptureRead, kWhyCount };
const char* const kWhyText[kWhyCount] = {
    "",
    "an argument the key does not cover (a generator, a list of Scalars, a symbolic size, a long string)",
    "more than 16 tensors in one call",
    "a signature longer than 128 words",
    "a tensor that is not strided, has the conj bit, has no storage, or a number of more than 16 bytes",
    "a written argument shares memory with another argument (ATen's overlap rules live in Python)",
    "the native layer is turned off",
    "autograd: an input has a forward-mode tangent (forward-mode AD is left to the Python implementation)",
    "a tensor subclass, mode or transform is active (torch.compile tracing, fake or functional tensors, vmap): "
    "ATen's composite runs",
    "it draws random numbers while a CUDA graph is captured (the graph-safe Philox state is taken in Python)",
    "a tensor list that is not uniform (mixed dtypes or devices, a non-contiguous or non-strided tensor) or a "
    "list of Scalars with a complex value: the per-row Python path serves it",
    "its table's rows or alignment differ from those of the recorded call with its key",
    "a value check of its replay failed (a flag its kernels cleared, read on the host where kernels are "
    "interpreted): the Python path raises ATen's error",
    "it reads a count back to the host while a CUDA graph is captured (the Python path raises ATen's error)",
};

struct Driver {
  cuLaunchKernel_t launch = nullptr;
  cuDevicePrimaryCtxRetain_t retain = nullptr;
  cuCtxSetCurrent_t set_current = nullptr;
  cuGetErrorName_t error_name = nullptr;
  cuStreamIsCapturing_t is_capturing = nullptr;
  cuMemcpyDtoHAsync_t copy_to_host = nullptr;  // a plan's host read (read_plans.h)
  cuStreamSynchronize_t synchronize = nullptr;
};

Driver g_driver;
int g_primitive = kPython;
bool g_vendor_cpu = true;
c10::DeviceType g_device_type = c10::DeviceType::CPU;
PyObject* g_replay = nullptr;  // Python primitive: replay(py_plan, inputs, outputs, temps, values)
PyObject* g_why[kWhyCount] = {};  // the reasons as Python strings, made once
std::atomic<int> g_aten_only{0};
// This thread's own gems.aten_only(): set while a list plan uploads its table (list_plans.h device_table), so that the
// transfer reaches ATen's copy without entering gems' copy kernels (whose Fallback for a transfer is the Python path).
thread_local int t_aten_only = 0;
std::atomic<uint64_t> g_generation{1};
bool g_enabled = true;
// Tensor keys of tracing and transforms (fake, functional, batched tensors): an autograd-level kernel hands
// calls with such tensors to ATen's composite.
c10::DispatchKeySet g_traced_keys;

// Global state a Python decision may read, as bits of every key. An implementation that starts reading
// another flag adds it here (one bit), and nowhere else.
// Process-wide flags a Python decision reads: TF32 (the products' precision), deterministic mode (attention's
// backward then takes its two-kernel path instead of atomic adds).
inline uint64_t global_state() {
  const auto& context = at::globalContext();
  return uint64_t(context.allowTF32CuBLAS()) | (uint64_t(context.deterministicAlgorithms()) << 1);
}

struct Patch {
  int param;
  int kind;  // 0 input, 1 output, 2 temp
  int index;
  int64_t delta;  // bytes
};

struct Launch {
  CUfunction fn;
  unsigned gx, gy, gz, block, shared;
  uint64_t scratch;  // bytes of Triton's global scratch per program (tensor descriptors built in the kernel); 0: none
  std::vector<uint64_t> params;  // one 8-byte slot per parameter, constants filled in
  std::vector<Patch> patches;
};

// A Philox key word of a plan's draw `draw` (field 0 the seed, 1 the offset), an int64 kernel parameter.
struct DrawParam {
  uint16_t launch;
  uint16_t param;
  uint16_t draw;
  uint16_t field;
};

struct OutSpec {
  // 0 fresh, 1 an input tensor, 2 None (an undefined tensor: an optional result not asked for), 3 an integer
  // (a SymInt result: the attention overloads' max_q, max_k)
  int kind;
  int index;
  int64_t value = 0;  // kind 3
  std::vector<int64_t> sizes, strides;
  at::ScalarType dtype;
  int device_index;
};

// Where a size-generic plan puts one of its computed numbers.
enum TargetKind : uint8_t { kGridX = 0, kGridY, kGridZ, kParam, kPatchDelta, kOutSize, kOutStride, kTemp, kOutInt };

struct Target {
  uint8_t what;
  uint8_t width;   // kParam: bytes of the parameter (1, 2, 4, 8)
  uint16_t item;   // launch, out or temp index
  uint16_t field;  // parameter, patch or dimension index
  uint16_t value;  // index into the computed numbers
};

struct ListInfo;  // list_plans.h
struct ReadStep;  // read_plans.h

struct Plan {
  uint64_t generation;
  int nkey;
  uint64_t key[kMaxKey];
  bool python_only;
  PyObject* why = nullptr;  // python_only: the reason (a str), handed to Python with each call
  std::vector<OutSpec> outs;
  std::vector<int64_t> temps;  // bytes
  std::vector<Launch> launches;
  std::vector<Target> targets;  // size-generic plans: numbers recomputed per call
  std::vector<uint64_t> draw_increments;  // Philox words each of the call's draws takes from the generator
  std::vector<DrawParam> draw_params;      // CUDA primitive: where the keys' words go
  PyObject* py_plan = nullptr;  // strong reference, never released (plans are never freed)
  const ListInfo* list = nullptr;  // a list plan's table (list_plans.h)
  ReadStep* read = nullptr;        // a plan with a host read, one variant of its signature's (read_plans.h)
  const gems_autograd::NodeSpec* node = nullptr;  // a training-mode call's autograd node (autograd_node.h)
};

struct Formula {  // floor((a * v + b) / d), d >= 1
  int64_t a, b, d;
};

// A condition on the computed numbers that the recorded kernels assume: Triton specialized them on it.
struct Check {
  uint8_t kind;     // 0: the integer class of a number (== 1; % 16 == 0 and 32-bit); 1: 16-byte alignment
  uint16_t value;   // the number
  int16_t tensor;   // kind 1: the input whose address the number offsets, -1 for a fresh allocation
  int64_t expected;
};

// A plan for every call whose key words are a[i] * v + b[i] (v = word `var`) with v in [lo, hi].
struct Generic {
  uint64_t generation;
  uint64_t family;
  int nkey;
  int var;
  int64_t lo, hi;
  int64_t a[kMaxKey], b[kMaxKey];
  std::vector<Formula> formulas;
  std::vector<Check> checks;
  Plan* plan;
};

struct Slot {
  std::string overload;   // the name counts and reasons are kept under ("abs", "gems.fused.skip_layer_norm")
  std::string qualified;  // the operator's schema name, namespace included ("aten::abs", "gems::skip_layer_norm")
  PyObject* serve = nullptr;
  std::optional<c10::SafeKernelFunction> original;
  std::vector<uint8_t> mutable_arg;
  size_t nargs = 0;
  bool autograd = false;  // registered at an Autograd<key>: only calls that need no graph replay
  bool lists = false;     // a multi-tensor overload: tensor lists keyed by summary, served by list plans
  std::vector<uint8_t> per_call;  // list overloads: Scalar arguments keyed by type, their values read per call
  uint64_t generation = 0;
  std::atomic<Plan*> table[kTableSize];
  std::atomic<Generic*> generic[kMaxGeneric];
  std::atomic<int> ngeneric{0};
  int generic_next = 0;  // the entry a new plan replaces once the table is full (the oldest)
  std::atomic<int64_t> hits{0}, launches{0}, plans{0}, generic_hits{0};
  Slot() {
    for (auto& p : table) p.store(nullptr);
    for (auto& g : generic) g.store(nullptr);
  }
};

std::vector<std::unique_ptr<Slot>> g_slots;                // never shrinks: counts survive re-registration
std::vector<std::unique_ptr<torch::Library>> g_libraries;  // index = handle
std::vector<Plan*> g_retired;                              // replaced plans: readers may still hold them

struct Key {
  int n = 0;
  bool ok = true;
  uint8_t why = kWhyNone;
  uint64_t w[kMaxKey];
  uint32_t desc[kMaxKey];
  const at::Tensor* tensors[kMaxTensors];
  bool mutable_tensor[kMaxTensors];
  int nt = 0;
  uint32_t grad_mask = 0;  // autograd-level kernels: the tensors that require grad while grad mode is on
  c10::ArrayRef<c10::IValue> first_list;  // list calls: the first tensor list (rows' sizes are compared with it)
  bool has_first_list = false;
  inline void add(uint64_t v, uint32_t d = kFixedWord) {
    if (n < kMaxKey) {
      desc[n] = d;
      w[n++] = v;
    } else {
      fail(kWhyLong);
    }
  }
  inline void fail(uint8_t code) {
    if (ok) why = code;
    ok = false;
  }
};

enum Tag : uint64_t { kNone = 1, kInt, kDouble, kBool, kComplex, kTensor, kIntList, kDoubleList, kBoolList,
                      kTensorList, kString, kDevice, kUndefined, kOptionalTensorList };

inline uint64_t tag(Tag t, uint64_t low = 0) { return (uint64_t(t) << 56) | (low & ((uint64_t(1) << 56) - 1)); }

inline uint64_t bits(double d) {
  uint64_t u;
  std::memcpy(&u, &d, 8);
  return u;
}

inline uint32_t desc(WordKind kind, size_t where, size_t item = 0) {
  return uint32_t(kind) | (uint32_t(where) << 4) | (uint32_t(item) << 16);
}

// `arg`: the tensor's argument index, -1 for an item of a tensor list.
void add_tensor(Key& k, const Slot& s, const at::Tensor& t, bool is_mutable, int arg) {
  if (!t.defined()) {
    k.add(tag(kUndefined));
    return;
  }
  auto* impl = t.unsafeGetTensorImpl();
  if (s.autograd && impl->key_set().has_any(g_traced_keys)) {
    k.ok = false;
    k.why = kWhyTraced;  // overrides any earlier reason: such a call must not reach Python's implementation
    return;
  }
  if (k.nt == kMaxTensors) return k.fail(kWhyTensors);
  // A negative bit (a lazy negation, torch._neg_view) is keyed: the Python path negates on the way (a clone of such
  // a view: resolve_neg), and the plan it records does the same for every tensor that has the bit.
  if (impl->layout() != c10::kStrided || impl->is_conj() || !impl->has_storage()) return k.fail(kWhyTensorKind);
  if (s.autograd) {  // a call that needs a graph is keyed by which tensors require grad (its plan builds the node)
    if (impl->autograd_meta() != nullptr && impl->_fw_grad(0, t).defined()) return k.fail(kWhyGrad);
    if (impl->requires_grad() && c10::GradMode::is_enabled()) k.grad_mask |= uint32_t(1) << k.nt;
  }
  // The pointer's offset within 16 bytes, not just "aligned or not": a kernel argument at a fixed byte
  // offset from it is 16-byte aligned (a Triton specialization) exactly when that offset matches.
  const int index = k.nt;
  const auto device = impl->device();
  const int64_t dim = impl->dim();
  const uint64_t addr = reinterpret_cast<uint64_t>(impl->data());
  const bool wrapped = impl->is_wrapped_number();
  k.add(tag(kTensor, uint64_t(impl->dtype().toScalarType()) | (uint64_t(dim) << 8) |
                        (uint64_t(device.type()) << 16) | (uint64_t(device.index() + 1) << 24) |
                        ((addr & 15) << 32) | (uint64_t(wrapped) << 36) | (uint64_t(impl->is_neg()) << 37)));
  const auto sizes = impl->sizes();
  const auto strides = impl->strides();
  for (int64_t d = 0; d < dim; ++d) {
    k.add(uint64_t(sizes[d]), desc(kSizeWord, index, d));
    k.add(uint64_t(strides[d]), desc(kStrideWord, index, d));
  }
  // A number the Python implementation reads as a value: a wrapped number, or a CPU 0-d tensor
  // beside device tensors (ATen's "cpu scalar").
  if (wrapped || (dim == 0 && device.is_cpu() && !g_vendor_cpu)) {
    uint64_t v[2] = {0, 0};
    const size_t size = impl->itemsize();
    if (size > 16 || addr == 0) return k.fail(kWhyTensorKind);
    std::memcpy(v, impl->data(), size);
    // A wrapped integer reaches the Python implementation as the Python int it was (`cache_position + past`,
    // whose value grows each decode step): keyed as that integer argument, which a size-generic plan may vary.
    const bool python_int = wrapped && arg >= 0 && impl->dtype().toScalarType() == at::kLong;
    k.add(v[0], python_int ? desc(kIntWord, size_t(arg)) : kFixedWord);
    if (size > 8) k.add(v[1]);
  }
  k.mutable_tensor[index] = is_mutable;
  k.tensors[k.nt++] = &t;
}

void add_tensor_list(Key& k, c10::ArrayRef<c10::IValue> list);  // list_plans.h
void add_scalar_list(Key& k, c10::ArrayRef<c10::IValue> list);

// The signature of one call: everything the Python implementation's decision read.
void compute_key(Key& k, const Slot& s, const c10::IValue* args, c10::Device current) {
  k.add(uint64_t(c10::typeMetaToScalarType(c10::get_default_dtype())) | (uint64_t(current.index() + 1) << 8) |
        (global_state() << 32));
  for (size_t i = 0; i < s.nargs && k.ok; ++i) {
    const c10::IValue& a = args[i];
    if (s.lists && a.isList()) {  // a list call: lists keyed by summary, a ScalarList's values read per call
      a.isTensorList() ? add_tensor_list(k, a.toListRef()) : add_scalar_list(k, a.toListRef());
    } else if (a.isTensor()) {
      add_tensor(k, s, a.toTensor(), s.mutable_arg[i], int(i));
    } else if (a.isNone()) {
      k.add(tag(kNone));
    } else if (s.lists && s.per_call[i] && (a.isInt() || a.isDouble() || a.isBool())) {
      k.add(tag(a.isInt() ? kInt : a.isDouble() ? kDouble : kBool));  // the value is a kernel word, read per call
    } else if (a.isInt()) {
      k.add(tag(kInt));
      k.add(uint64_t(a.toInt()), desc(kIntWord, i));
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
      for (size_t j = 0; j < list.size(); ++j) k.add(uint64_t(int64_t(list[j])), desc(kIntListWord, i, j));
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
      for (size_t j = 0; j < list.size() && k.ok; ++j) add_tensor(k, s, list[j].toTensor(), s.mutable_arg[i], -1);
    } else if (a.isList()) {
      // An optional-tensor list (index.Tensor's and index_put's indices): a tag per item, its tensors keyed
      // in stack order, as the Python recorder sees them (toPyObject makes the list of tensors and Nones).
      auto list = a.toListRef();
      k.add(tag(kOptionalTensorList, list.size()));
      for (size_t j = 0; j < list.size() && k.ok; ++j) {
        if (list[j].isNone()) {
          k.add(tag(kNone));
        } else if (list[j].isTensor()) {
          add_tensor(k, s, list[j].toTensor(), s.mutable_arg[i], -1);
        } else {
          return k.fail(kWhyArgument);  // a list of another kind (scalars): Python decides
        }
      }
    } else if (a.isString()) {
      auto str = a.toStringRef();
      if (str.size() > 24) return k.fail(kWhyArgument);
      uint64_t packed[3] = {0, 0, 0};
      std::memcpy(packed, str.data(), str.size());
      k.add(tag(kString, str.size()));
      for (uint64_t v : packed) k.add(v);
    } else if (a.isDevice()) {
      auto d = a.toDevice();
      k.add(tag(kDevice, (uint64_t(d.type()) << 8) | uint64_t(d.index() + 1)));
    } else {
      return k.fail(kWhyArgument);  // generators, symbolic values...: Python decides
    }
  }
  if (!k.ok) return;
  // Which tensors are the same memory: add(x, x) and add(x, y) may be planned differently. Each tensor's 4 bits
  // name the first tensor it is (itself if none). A written tensor that shares storage with another tensor in any
  // other way is left to Python (ATen's overlap errors and copies live there).
  uint64_t alias = 0;
  for (int j = 1; j < k.nt; ++j) {
    auto* b = k.tensors[j]->unsafeGetTensorImpl();
    int same = j;
    for (int i = 0; i < j; ++i) {
      auto* a = k.tensors[i]->unsafeGetTensorImpl();
      if (a == b) {
        if (same == j) same = i;
        continue;
      }
      if ((k.mutable_tensor[i] || k.mutable_tensor[j]) &&
          a->storage().unsafeGetStorageImpl() == b->storage().unsafeGetStorageImpl())
        return k.fail(kWhyOverlap);
    }
    alias |= uint64_t(same) << (4 * j);
  }
  k.add(alias);
  if (s.autograd) k.add(k.grad_mask);
}

inline uint64_t mix(uint64_t h, uint64_t w) {
  h ^= w;
  h *= 1099511628211ull;
  return h ^ (h >> 29);
}

inline uint64_t hash_key(const Key& k) {
  uint64_t h = 1469598103934665603ull;
  for (int i = 0; i < k.n; ++i) h = mix(h, k.w[i]);
  return h;
}

// The key with the words a size-generic plan may vary left out: calls of one family share it.
inline uint64_t family_hash(const Key& k) {
  uint64_t h = 1469598103934665603ull;
  for (int i = 0; i < k.n; ++i) h = mix(h, k.desc[i] == kFixedWord ? k.w[i] : 0x5a5a5a5aull);
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

inline int64_t floor_div(int64_t x, int64_t d) {
  int64_t q = x / d;
  return (x % d != 0 && x < 0) ? q - 1 : q;
}

// Triton's specialization of an integer argument (as gems.runtime.launch's key): 1, else (% 16 == 0, 32-bit).
inline int64_t int_class(int64_t x) {
  if (x == 1) return 1;
  return 2 | (int64_t(x % 16 == 0) << 2) | (int64_t(x >= INT32_MIN && x <= INT32_MAX) << 3);
}

// The size-generic plan serving this key, with its numbers computed into `values`; none if no family matches.
const Generic* find_generic(Slot& s, const Key& k, int64_t* values) {
  const int n = s.ngeneric.load(std::memory_order_acquire);
  if (n == 0) return nullptr;
  const uint64_t family = family_hash(k);
  for (int i = 0; i < n; ++i) {
    const Generic* g = s.generic[i].load(std::memory_order_acquire);
    if (g == nullptr || g->generation != s.generation || g->family != family || g->nkey != k.n) continue;
    const int64_t v = int64_t(k.w[g->var]);
    if (v < g->lo || v > g->hi) continue;
    bool match = true;
    for (int j = 0; j < k.n && match; ++j) match = int64_t(k.w[j]) == g->a[j] * v + g->b[j];
    if (!match) continue;
    const size_t nv = g->formulas.size();
    for (size_t j = 0; j < nv; ++j) {
      const Formula& f = g->formulas[j];
      values[j] = floor_div(f.a * v + f.b, f.d);
    }
    for (const Check& c : g->checks) {
      if (c.kind == 0) {
        match = int_class(values[c.value]) == c.expected;
      } else {
        uint64_t base = c.tensor < 0 ? 0 : reinterpret_cast<uint64_t>(k.tensors[c.tensor]->unsafeGetTensorImpl()->data());
        match = int64_t((base + uint64_t(values[c.value])) % 16 == 0) == c.expected;
      }
      if (!match) break;
    }
    if (match) return g;
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
  // Full around this hash: the newest signature replaces the one in its first cell (recording it again on
  // every call would cost more than the Python path).
  auto& cell = s.table[h & (kTableSize - 1)];
  g_retired.push_back(cell.load(std::memory_order_acquire));
  cell.store(plan, std::memory_order_release);
}

[[noreturn]] void launch_failed(const Slot& s, CUresult r) {
  const char* name = "unknown";
  if (g_driver.error_name) g_driver.error_name(r, &name);
  TORCH_CHECK(false, "gems native: cuLaunchKernel failed for ", s.qualified, " with ", name, " (", r, ")");
}

constexpr int kMaxDraws = 4;  // Philox keys per call that a plan may take

// The Philox keys (seed, offset) of a plan's draws, taken from the device's default generator as
// gems.ops.random.philox.philox_key takes them, moving its offset on; false while the stream is captured (the
// Python path takes the generator's graph-safe state then).
bool take_keys(const Plan& plan, c10::Device device, uint64_t* words) {
  const auto* guard = c10::impl::getDeviceGuardImpl(g_device_type);
  int capturing = 0;
  if (g_driver.is_capturing == nullptr ||
      g_driver.is_capturing(static_cast<CUstream>(guard->getStream(device).native_handle()), &capturing) != 0 ||
      capturing != 0)
    return false;
  at::Generator gen = at::globalContext().defaultGenerator(device);
  std::lock_guard<std::mutex> lock(gen.mutex());
  for (size_t d = 0; d < plan.draw_increments.size(); ++d) {
    const uint64_t offset = gen.get_offset();
    words[2 * d] = gen.current_seed();  // kernels take the uint64 seed's bits as an int64
    words[2 * d + 1] = offset;
    gen.set_offset(offset + plan.draw_increments[d]);
  }
  return true;
}

void launch_cuda(const Slot& s, const Plan& plan, c10::Device device, const std::vector<at::Tensor>& inputs,
                 const std::vector<at::Tensor>& outs, const std::vector<at::Tensor>& temps, const int64_t* values,
                 const uint64_t* keys, size_t begin = 0, size_t end = SIZE_MAX) {
  const auto* guard = c10::impl::getDeviceGuardImpl(g_device_type);
  CUstream stream = static_cast<CUstream>(guard->getStream(device).native_handle());
  uint64_t params_values[kMaxParams + 2];
  int64_t deltas[kMaxParams];
  void* params[kMaxParams + 2];
  for (size_t li = begin; li < std::min(end, plan.launches.size()); ++li) {
    const Launch& l = plan.launches[li];
    const size_t n = l.params.size();
    unsigned grid[3] = {l.gx, l.gy, l.gz};
    std::memcpy(params_values, l.params.data(), n * sizeof(uint64_t));
    for (size_t p = 0; p < l.patches.size(); ++p) deltas[p] = l.patches[p].delta;
    if (values != nullptr) {
      for (const Target& t : plan.targets) {
        if (t.item != li || t.what > kPatchDelta) continue;
        const int64_t v = values[t.value];
        if (t.what <= kGridZ) {
          grid[t.what] = unsigned(v);
        } else if (t.what == kParam) {
          params_values[t.field] = t.width == 8 ? uint64_t(v) : uint64_t(v) & ((uint64_t(1) << (8 * t.width)) - 1);
        } else {
          deltas[t.field] = v;
        }
      }
    }
    for (const DrawParam& d : plan.draw_params)
      if (d.launch == li) params_values[d.param] = keys[2 * d.draw + d.field];
    for (size_t p = 0; p < l.patches.size(); ++p) {
      const Patch& patch = l.patches[p];
      const at::Tensor& t = patch.kind == 0 ? inputs[patch.index] : patch.kind == 1 ? outs[patch.index]
                                                                                     : temps[patch.index];
      params_values[patch.param] = reinterpret_cast<uint64_t>(t.unsafeGetTensorImpl()->data()) + deltas[p];
    }
    if (grid[0] == 0 || grid[1] == 0 || grid[2] == 0) continue;
    // Triton's global scratch, as its launcher sizes it (bytes per program x programs), from the caching
    // allocator on this stream: freed when the launch is queued, reused only by work queued after it (and
    // from the graph's pool while a stream captures). Profile scratch: none (the recorder refuses it).
    at::Tensor scratch;
    if (l.scratch != 0)
      scratch = at::empty({int64_t(l.scratch * uint64_t(grid[0]) * grid[1] * grid[2])},
                          at::TensorOptions().dtype(at::kByte).device(device));
    params_values[n] = l.scratch != 0 ? reinterpret_cast<uint64_t>(scratch.data_ptr()) : 0;
    params_values[n + 1] = 0;
    for (size_t i = 0; i < n + 2; ++i) params[i] = &params_values[i];
    CUresult r = g_driver.launch(l.fn, grid[0], grid[1], grid[2], l.block, 1, 1, l.shared, stream, params, nullptr);
    if (r == kInvalidContext && g_driver.retain && g_driver.set_current) {
      // A thread that has not used this device's context yet: make the primary context current.
      CUcontext ctx = nullptr;
      if (g_driver.retain(&ctx, device.index()) == 0 && g_driver.set_current(ctx) == 0)
        r = g_driver.launch(l.fn, grid[0], grid[1], grid[2], l.block, 1, 1, l.shared, stream, params, nullptr);
    }
    if (r != 0) launch_failed(s, r);
  }
}

py::tuple as_tuple(const std::vector<at::Tensor>& v) {
  py::tuple t(v.size());
  for (size_t i = 0; i < v.size(); ++i) t[i] = py::cast(v[i]);
  return t;
}

// The temporary buffers from `first` on and the results of a plan, `values` its computed numbers or nullptr.
void allocate(const Plan& plan, c10::Device device, const int64_t* values, const std::vector<at::Tensor>& inputs,
              std::vector<at::Tensor>& temps, std::vector<at::Tensor>& outs, size_t first) {
  for (size_t i = first; i < plan.temps.size(); ++i) {
    int64_t bytes = plan.temps[i];
    if (values != nullptr)
      for (const Target& t : plan.targets)
        if (t.what == kTemp && t.item == i) bytes = values[t.value];
    temps[i] = at::empty({bytes}, at::TensorOptions().dtype(at::kByte).device(device));
  }
  outs.reserve(plan.outs.size());
  for (size_t j = 0; j < plan.outs.size(); ++j) {
    const OutSpec& o = plan.outs[j];
    if (o.kind == 1) {
      outs.push_back(inputs[o.index]);
    } else if (o.kind >= 2) {
      outs.emplace_back();  // None, or an integer pushed below
    } else {
      auto options = at::TensorOptions().dtype(o.dtype).device(c10::Device(g_device_type, o.device_index));
      if (values == nullptr) {
        outs.push_back(at::empty_strided(o.sizes, o.strides, options));
        continue;
      }
      c10::SmallVector<int64_t, 8> sizes(o.sizes.begin(), o.sizes.end()), strides(o.strides.begin(), o.strides.end());
      for (const Target& t : plan.targets) {
        if (t.item != j) continue;
        if (t.what == kOutSize) sizes[t.field] = values[t.value];
        if (t.what == kOutStride) strides[t.field] = values[t.value];
      }
      outs.push_back(at::empty_strided(sizes, strides, options));
    }
  }
}

// The Python primitive (under the GIL): the plan's py_plan; false when one of its host checks fails.
bool replay_python(const Plan& plan, const std::vector<at::Tensor>& inputs, const std::vector<at::Tensor>& outs,
                   const std::vector<at::Tensor>& temps, const int64_t* values, size_t nvalues) {
  py::tuple numbers(nvalues);
  for (size_t i = 0; i < nvalues; ++i) numbers[i] = py::int_(values[i]);
  py::handle fn(g_replay);
  return fn(py::handle(plan.py_plan), as_tuple(inputs), as_tuple(outs), as_tuple(temps), numbers).ptr() != Py_False;
}

// A replayed call's counts and results.
void finish(Slot& s, const Plan& plan, torch::jit::Stack* stack, std::vector<at::Tensor>& outs, const int64_t* values,
            bool generic) {
  s.hits.fetch_add(1, std::memory_order_relaxed);
  if (generic) s.generic_hits.fetch_add(1, std::memory_order_relaxed);
  s.launches.fetch_add(int64_t(plan.launches.size()), std::memory_order_relaxed);
  torch::jit::drop(*stack, s.nargs);
  for (size_t j = 0; j < outs.size(); ++j) {
    const OutSpec& o = plan.outs[j];
    if (o.kind != 3) {
      stack->emplace_back(std::move(outs[j]));
      continue;
    }
    int64_t value = o.value;
    if (values != nullptr)
      for (const Target& t : plan.targets)
        if (t.what == kOutInt && t.item == j) value = values[t.value];
    stack->emplace_back(value);
  }
}

// Replay a plan; `values` are a size-generic plan's numbers for this call (nullptr for an exact plan). False (the
// stack untouched) when the Python primitive's host checks fail: the caller serves the call in Python.
bool replay(Slot& s, const Plan& plan, c10::Device device, const Key& k, torch::jit::Stack* stack,
            const int64_t* values, size_t nvalues, const uint64_t* keys) {
  std::vector<at::Tensor> inputs;
  inputs.reserve(k.nt);
  for (int i = 0; i < k.nt; ++i) inputs.push_back(*k.tensors[i]);
  std::vector<at::Tensor> temps(plan.temps.size()), outs;
  allocate(plan, device, values, inputs, temps, outs, 0);
  if (g_primitive == kCuda) {
    launch_cuda(s, plan, device, inputs, outs, temps, values, keys);
  } else {
    py::gil_scoped_acquire gil;
    // A training-mode call's forward ran under no_grad in its Function, where the interpreter's own torch calls
    // on the inputs that require grad build nothing.
    c10::AutoGradMode grad_mode(plan.node == nullptr && c10::GradMode::is_enabled());
    if (!replay_python(plan, inputs, outs, temps, values, nvalues)) return false;
  }
  if (plan.node != nullptr) gems_autograd::attach_node(*plan.node, inputs, outs, temps);
  finish(s, plan, stack, outs, values, values != nullptr);
  return true;
}

// Items 6-8 of a size-generic or read plan's spec: the formulas of its numbers (of the varying size or the count
// read), the checks of their integer classes (CUDA) and where each number goes in the plan.
void parse_formulas(const py::tuple& spec, std::vector<Formula>& formulas, std::vector<Check>& checks, Plan& plan,
                    const char* what) {
  for (auto f : spec[6].cast<py::list>()) {
    auto item = f.cast<py::tuple>();
    formulas.push_back({item[0].cast<int64_t>(), item[1].cast<int64_t>(), item[2].cast<int64_t>()});
    TORCH_CHECK(formulas.back().d >= 1, "gems native: a formula's divisor must be positive");
  }
  TORCH_CHECK(formulas.size() <= size_t(kMaxValues), "gems native: too many ", what, "-dependent numbers");
  for (auto c : spec[7].cast<py::list>()) {
    auto item = c.cast<py::tuple>();
    checks.push_back({item[0].cast<uint8_t>(), item[1].cast<uint16_t>(), item[2].cast<int16_t>(),
                      item[3].cast<int64_t>()});
  }
  for (auto t : spec[8].cast<py::list>()) {
    auto item = t.cast<py::tuple>();
    plan.targets.push_back({item[0].cast<uint8_t>(), item[1].cast<uint8_t>(), item[2].cast<uint16_t>(),
                            item[3].cast<uint16_t>(), item[4].cast<uint16_t>()});
  }
}

#include "read_plans.h"

// `n_inputs`: the call's tensors (a training-mode call's node spec is checked against them).
Plan* build_plan(const py::object& spec, size_t n_inputs = 0) {
  auto plan = std::make_unique<Plan>();
  if (py::isinstance<py::str>(spec)) {  // "stays in Python", and why
    plan->python_only = true;
    plan->why = spec.ptr();
    Py_INCREF(plan->why);
    return plan.release();
  }
  plan->python_only = false;
  auto t = spec.cast<py::tuple>();
  for (auto o : t[0].cast<py::list>()) {
    auto item = o.cast<py::tuple>();
    OutSpec out;
    out.kind = item[0].cast<int>();
    out.index = item[1].cast<int>();
    if (out.kind == 3) out.value = item[2].cast<int64_t>();
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
    launch.scratch = item[8].cast<uint64_t>();
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
  auto draws = t[5].cast<py::tuple>();
  plan->draw_increments = draws[0].cast<std::vector<uint64_t>>();
  TORCH_CHECK(plan->draw_increments.size() <= size_t(kMaxDraws), "gems native: too many Philox keys in one call");
  for (auto d : draws[1].cast<py::list>()) {
    auto item = d.cast<py::tuple>();
    plan->draw_params.push_back({item[0].cast<uint16_t>(), item[1].cast<uint16_t>(), item[2].cast<uint16_t>(),
                                 item[3].cast<uint16_t>()});
  }
  // The Python primitive replays the py_plan; count its launches the same way.
  if (g_primitive == kPython) plan->launches.resize(t[4].cast<size_t>());
  if (t.size() > 6 && !t[6].is_none())
    plan->node = gems_autograd::build_node_spec(t[6], n_inputs, plan->outs.size(), plan->temps.size());
  if (t.size() > 7) build_read(*plan, t[7].cast<py::tuple>());
  return plan.release();
}

// A size-generic plan from its Python spec: (plan spec, var, lo, hi, a, b, formulas, checks, targets).
Generic* build_generic(const py::tuple& spec, const Key& k) {
  auto g = std::make_unique<Generic>();
  g->plan = build_plan(spec[0]);
  g->var = spec[1].cast<int>();
  g->lo = spec[2].cast<int64_t>();
  g->hi = spec[3].cast<int64_t>();
  auto a = spec[4].cast<std::vector<int64_t>>();
  auto b = spec[5].cast<std::vector<int64_t>>();
  TORCH_CHECK(int(a.size()) == k.n && int(b.size()) == k.n && g->var >= 0 && g->var < k.n,
              "gems native: a size-generic plan does not fit its key");
  g->nkey = k.n;
  std::copy(a.begin(), a.end(), g->a);
  std::copy(b.begin(), b.end(), g->b);
  parse_formulas(spec, g->formulas, g->checks, *g->plan, "size");
  g->family = family_hash(k);
  return g.release();
}

void insert_generic(Slot& s, Generic* g) {
  g->generation = s.generation;
  const int n = s.ngeneric.load(std::memory_order_relaxed);
  for (int i = 0; i < n; ++i) {  // a stale one (an earlier registration) makes room
    Generic* old = s.generic[i].load(std::memory_order_relaxed);
    if (old->generation != s.generation) {
      s.generic[i].store(g, std::memory_order_release);
      return;  // the old one is never freed: a reader may hold it
    }
  }
  if (n == kMaxGeneric) {  // full: replace the oldest (a decode loop has left its early buckets behind)
    s.generic[s.generic_next].store(g, std::memory_order_release);
    s.generic_next = (s.generic_next + 1) % kMaxGeneric;
    return;
  }
  s.generic[n].store(g, std::memory_order_release);
  s.ngeneric.store(n + 1, std::memory_order_release);
}

#include "list_plans.h"

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
    TORCH_CHECK(out.is_none(), "gems native: ", op.schema().name(), " returns nothing, got a value");
  } else if (returns.size() == 1) {
    stack->emplace_back(torch::jit::toIValue(out, returns[0].real_type()));
  } else {
    auto values = py::cast<py::sequence>(out);
    for (size_t i = 0; i < returns.size(); ++i)
      stack->emplace_back(torch::jit::toIValue(values[i], returns[i].real_type()));
  }
}

py::bytes as_bytes(const void* data, size_t n) { return py::bytes(static_cast<const char*>(data), n); }

// A call the plan tables do not serve: the Python implementation, recording when the key is new (`k` given);
// `why` (a str, or None for a new key) says why it left the native path.
void serve_python(Slot& s, const c10::OperatorHandle& op, c10::DispatchKeySet ks, torch::jit::Stack* stack,
                  const Key* k, uint64_t h, PyObject* why, bool list_call = false) {
  py::gil_scoped_acquire gil;
  py::object call = py::none();
  if (k != nullptr) {  // before the stack is popped: the key points into it
    py::tuple t(k->nt);
    for (int i = 0; i < k->nt; ++i) t[i] = py::cast(*k->tensors[i]);
    call = py::make_tuple(t, as_bytes(k->w, sizeof(uint64_t) * k->n), as_bytes(k->desc, sizeof(uint32_t) * k->n),
                          list_call, k->grad_mask != 0);
  }
  std::vector<c10::IValue> arguments = torch::jit::pop(*stack, s.nargs);
  auto args_kwargs = to_python(op, arguments);
  py::handle serve(s.serve);
  py::object reason = why == nullptr ? py::none() : py::reinterpret_borrow<py::object>(why);
  py::tuple res = serve(ks, args_kwargs.first, args_kwargs.second, call, reason).cast<py::tuple>();
  push_result(op, stack, res[0]);
  if (k == nullptr || res[1].is_none()) return;
  Plan* plan = list_call ? build_list_plan(res[1]) : build_plan(res[1], size_t(k->nt));
  if (plan->read == nullptr || !add_read_variant(find(s, *k, h), plan)) insert(s, *k, h, plan);
  if (res.size() > 2 && !res[2].is_none()) insert_generic(s, build_generic(res[2].cast<py::tuple>(), *k));
}

// ATen's own kernel for the call (gems.aten_only(), a traced call at an autograd-level kernel).
void call_original(const Slot& s, const c10::OperatorHandle& op, c10::DispatchKeySet ks, torch::jit::Stack* stack) {
  TORCH_CHECK_NOT_IMPLEMENTED(s.original.has_value(), "Could not run '", s.qualified,
                              "' with arguments from this backend: ATen has no kernel for it there, and gems left "
                              "this call to ATen");
  s.original->callBoxed(op, ks, stack);
}

struct GemsKernel : public c10::OperatorKernel {
  explicit GemsKernel(Slot* slot) : slot(slot) {}
  Slot* slot;

  void operator()(const c10::OperatorHandle& op, c10::DispatchKeySet ks, torch::jit::Stack* stack) {
    Slot& s = *slot;
    if (g_aten_only.load(std::memory_order_relaxed) || t_aten_only != 0) {
      call_original(s, op, ks, stack);
      return;
    }
    if (!g_enabled) {
      serve_python(s, op, ks, stack, nullptr, 0, g_why[kWhyOff]);
      return;
    }
    const c10::IValue* args = stack->data() + (stack->size() - s.nargs);
    c10::Device current = g_vendor_cpu ? c10::Device(c10::DeviceType::CPU)
                                       : c10::impl::getDeviceGuardImpl(g_device_type)->getDevice();
    Key k;
    compute_key(k, s, args, current);
    if (!k.ok) {
      if (k.why == kWhyTraced) {
        // Fake, functional or batched tensors (torch.compile's tracing, vmap) at an autograd-level kernel: ATen's
        // composite decomposes the call into operators the tracer knows; gems' kernels cannot run on them.
        call_original(s, op, ks, stack);
      } else {
        serve_python(s, op, ks, stack, nullptr, 0, g_why[k.why]);
      }
      return;
    }
    const uint64_t h = hash_key(k);
    Plan* plan = find(s, k, h);
    if (plan != nullptr) {
      uint64_t keys[2 * kMaxDraws];
      if (plan->python_only) {
        serve_python(s, op, ks, stack, nullptr, h, plan->why);
      } else if (plan->list != nullptr) {
        if (!replay_list(s, *plan, k, args, stack)) serve_python(s, op, ks, stack, nullptr, h, g_why[kWhyListTable]);
      } else if (plan->read != nullptr) {
        if (capturing(current)) {
          serve_python(s, op, ks, stack, nullptr, h, g_why[kWhyCaptureRead]);
        } else if (!replay_read(s, *plan, current, k, stack)) {
          serve_python(s, op, ks, stack, &k, h, nullptr);  // another variant: its count's
        }
      } else if (g_primitive == kCuda && !plan->draw_increments.empty() && !take_keys(*plan, current, keys)) {
        serve_python(s, op, ks, stack, nullptr, h, g_why[kWhyCaptureDraw]);
      } else if (!replay(s, *plan, current, k, stack, nullptr, 0, keys)) {
        serve_python(s, op, ks, stack, nullptr, h, g_why[kWhyCheck]);
      }
      return;
    }
    if (s.lists || k.grad_mask != 0) {  // list calls and calls that need a graph get exact plans only
      serve_python(s, op, ks, stack, &k, h, nullptr, s.lists);
      return;
    }
    int64_t values[kMaxValues];
    const Generic* g = find_generic(s, k, values);
    if (g != nullptr) {  // no draws: dry runs stop them; no host checks: derive() refuses them
      if (!replay(s, *g->plan, current, k, stack, values, g->formulas.size(), nullptr))
        serve_python(s, op, ks, stack, nullptr, h, g_why[kWhyCheck]);
      return;
    }
    serve_python(s, op, ks, stack, &k, h, nullptr);
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

// `overload`: "name.variant" of an ATen operator, or "namespace::name.variant" of another library's (gems' own
// operators: "gems::skip_layer_norm").
int64_t register_kernel(int64_t slot_id, const std::string& overload, const std::string& key, py::object serve,
                        bool keep_plans, bool lists, const std::vector<int64_t>& per_call) {
  Slot& s = *g_slots.at(slot_id);
  const auto colons = overload.find("::");
  const std::string ns = colons == std::string::npos ? "aten" : overload.substr(0, colons);
  const std::string local = colons == std::string::npos ? overload : overload.substr(colons + 2);
  auto dot = local.find('.');
  std::string name = local.substr(0, dot);
  std::string variant = dot == std::string::npos ? "" : local.substr(dot + 1);
  auto op = c10::Dispatcher::singleton().findSchemaOrThrow((ns + "::" + name).c_str(), variant.c_str());
  s.qualified = ns + "::" + local;
  const auto dispatch_key = c10::parseDispatchKey(key);
  try {  // a CUDA-only overload on another device (gems serves it, ATen has nothing to fall back to)
    s.original = op.getComputedKernelForDispatchKey(dispatch_key);
  } catch (const c10::Error&) {
    s.original.reset();
  }
  s.autograd = c10::isIncludedInAlias(dispatch_key, c10::DispatchKey::Autograd);
  s.lists = lists;
  const auto& arguments = op.schema().arguments();
  s.nargs = arguments.size();
  s.mutable_arg.assign(s.nargs, 0);
  s.per_call.assign(s.nargs, 0);
  for (int64_t i : per_call) s.per_call.at(size_t(i)) = 1;
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
  auto lib = std::make_unique<torch::Library>(torch::Library::IMPL, ns, dispatch_key, __FILE__, __LINE__);
  lib->impl(local.c_str(), torch::CppFunction::makeFromBoxedFunctor(std::make_unique<GemsKernel>(&s)));
  g_libraries.push_back(std::move(lib));
  return int64_t(g_libraries.size() - 1);
}

void deregister(int64_t handle) { g_libraries.at(handle).reset(); }

std::string configure(const std::string& primitive, const std::string& device_type, py::object replay_fn) {
  g_vendor_cpu = device_type == "cpu";
  g_device_type = c10::Device(device_type).type();
  Py_XDECREF(g_replay);
  g_replay = replay_fn.release().ptr();
  for (int i = 1; i < kWhyCount; ++i)
    if (g_why[i] == nullptr) g_why[i] = py::str(kWhyText[i]).release().ptr();
  using K = c10::DispatchKey;
  g_traced_keys = c10::DispatchKeySet({K::Python, K::Functionalize, K::FuncTorchBatched, K::FuncTorchGradWrapper});
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
  g_driver.is_capturing = reinterpret_cast<cuStreamIsCapturing_t>(dlsym(lib, "cuStreamIsCapturing"));
  g_driver.copy_to_host = reinterpret_cast<cuMemcpyDtoHAsync_t>(dlsym(lib, "cuMemcpyDtoHAsync_v2"));
  g_driver.synchronize = reinterpret_cast<cuStreamSynchronize_t>(dlsym(lib, "cuStreamSynchronize"));
  if (g_driver.launch == nullptr) return "libcuda.so.1 has no cuLaunchKernel";
  g_primitive = kCuda;
  return "";
}

void aten_only_add(int delta) { g_aten_only.fetch_add(delta, std::memory_order_relaxed); }

void set_enabled(bool enabled) { g_enabled = enabled; }

// (overload, calls replayed, kernels launched by replays, plans stored, calls replayed by size-generic plans,
// size-generic plans stored) per slot.
py::list counts() {
  py::list out;
  for (auto& s : g_slots) {
    int generic = 0;
    const int n = s->ngeneric.load();
    for (int i = 0; i < n; ++i) generic += s->generic[i].load()->generation == s->generation;
    out.append(py::make_tuple(s->overload, s->hits.load(), s->launches.load(), s->plans.load(),
                              s->generic_hits.load(), generic));
  }
  return out;
}

// (overload, calls replayed, kernels launched by replays) of the slots that replayed since the last reset: what
// the conformance harness reads around every call, so it skips the idle slots that counts() lists.
py::list active_counts() {
  py::list out;
  for (auto& s : g_slots) {
    const int64_t hits = s->hits.load(), launches = s->launches.load();
    if (hits || launches) out.append(py::make_tuple(s->overload, hits, launches));
  }
  return out;
}

// Calls of one overload replayed since the last reset (every registration of it).
int64_t hits_of(const std::string& overload) {
  int64_t hits = 0;
  for (auto& s : g_slots)
    if (s->overload == overload) hits += s->hits.load();
  return hits;
}

void reset_counts() {
  for (auto& s : g_slots) {
    s->hits.store(0);
    s->launches.store(0);
    s->generic_hits.store(0);
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

// lists.cpp
bool lists_uniform(const py::list& lists);
py::list empty_like_list(const py::list& tensors);
py::object uniform_table(const py::list& operands, const py::list& tails, const std::vector<int64_t>& words,
                         int64_t chunk, bool flat_flag);

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("new_slot", &new_slot);
  m.def("register_kernel", &register_kernel);
  m.def("deregister", &deregister);
  m.def("configure", &configure);
  m.def("aten_only_add", &aten_only_add);
  m.def("set_enabled", &set_enabled);
  m.def("counts", &counts);
  m.def("active_counts", &active_counts);
  m.def("hits_of", &hits_of);
  m.def("reset_counts", &reset_counts);
  m.def("invalidate", &invalidate);
  m.def("lists_uniform", &lists_uniform);
  m.def("uniform_table", &uniform_table);
  m.def("empty_like_list", &empty_like_list);
  m.def("table_counts", &table_counts);  // list_plans.h
}

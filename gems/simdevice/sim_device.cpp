// gems' simulated accelerator: a PrivateUse1 device whose memory is host memory.
//
// It gives tensors what they need to exist, move and be viewed (allocator, device guard, hooks,
// empty/view/copy/set kernels) and nothing else: every other operator reaches the boxed fallback,
// which raises NotImplementedError naming the operator and the device. Computation on it comes only
// from gems' Triton kernels, run by the interpreter on host copies of the storages.
#include <torch/extension.h>

#include <ATen/EmptyTensor.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/resize_native.h>
#include <ATen/ops/set_native.h>
#include <ATen/ops/unfold_native.h>
#include <ATen/ops/view_native.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/impl/alloc_cpu.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include <cstring>

namespace {

constexpr c10::DeviceType kSim = c10::DeviceType::PrivateUse1;

// Host memory tagged with the simulated device, so that storages and tensors report it.
struct SimAllocator final : c10::Allocator {
  c10::DataPtr allocate(size_t nbytes) override {
    void* data = nbytes ? c10::alloc_cpu(nbytes) : nullptr;
    return {data, data, &c10::free_cpu, c10::Device(kSim, 0)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &c10::free_cpu; }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    std::memcpy(dest, src, count);
  }
};

SimAllocator sim_allocator;
REGISTER_ALLOCATOR(kSim, &sim_allocator);

// One device, one stream, everything synchronous. Events are left to the interface's default
// (unsupported): timers must take the wall clock on a device without them.
struct SimGuardImpl final : c10::impl::DeviceGuardImplInterface {
  c10::DeviceType type() const override { return kSim; }
  c10::Device exchangeDevice(c10::Device) const override { return c10::Device(kSim, 0); }
  c10::Device getDevice() const override { return c10::Device(kSim, 0); }
  void setDevice(c10::Device d) const override {
    TORCH_CHECK(d.index() <= 0, "the simulated device has one device, index 0; got ", d);
  }
  void uncheckedSetDevice(c10::Device) const noexcept override {}
  c10::Stream getStream(c10::Device d) const noexcept override { return c10::Stream(c10::Stream::DEFAULT, d); }
  c10::Stream exchangeStream(c10::Stream s) const noexcept override { return s; }
  c10::DeviceIndex deviceCount() const noexcept override { return 1; }
  bool queryStream(const c10::Stream&) const override { return true; }
  void synchronizeStream(const c10::Stream&) const override {}
  void synchronizeDevice(const c10::DeviceIndex) const override {}
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, SimGuardImpl);

struct SimHooks final : at::PrivateUse1HooksInterface {
  bool isBuilt() const override { return true; }
  bool isAvailable() const override { return true; }
  bool hasPrimaryContext(c10::DeviceIndex) const override { return true; }  // autograd's backward asks
  c10::DeviceIndex deviceCount() const override { return 1; }
  c10::DeviceIndex getCurrentDevice() const override { return 0; }
  at::Device getDeviceFromPtr(void*) const override { return c10::Device(kSim, 0); }
};

// A CPU tensor over the same bytes (no copy), with the same negative and conjugate bits; it keeps the
// storage alive.
at::Tensor cpu_alias(const at::Tensor& t) {
  if (t.device().type() != kSim) {
    return t;
  }
  auto options = t.options().device(at::kCPU);
  if (t.numel() == 0) {
    return at::empty_strided(t.sizes(), t.strides(), options);
  }
  c10::Storage keep = t.storage();
  at::Tensor alias = at::from_blob(t.data_ptr(), t.sizes(), t.strides(), [keep](void*) {}, options);
  if (t.is_neg()) {
    alias = at::_neg_view(alias);
  }
  return t.is_conj() ? alias.conj() : alias;
}

at::Tensor empty_memory_format(c10::IntArrayRef size, std::optional<at::ScalarType> dtype,
                               std::optional<at::Layout>, std::optional<at::Device>, std::optional<bool>,
                               std::optional<at::MemoryFormat> memory_format) {
  return at::detail::empty_generic(size, &sim_allocator, c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
                                   c10::dtype_or_default(dtype), memory_format);
}

at::Tensor empty_strided(c10::IntArrayRef size, c10::IntArrayRef stride, std::optional<at::ScalarType> dtype,
                         std::optional<at::Layout>, std::optional<at::Device>, std::optional<bool>) {
  return at::detail::empty_strided_generic(size, stride, &sim_allocator,
                                           c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
                                           c10::dtype_or_default(dtype));
}

// Both sides are host memory: the copy (any dtype, layout or broadcast) is ATen's CPU copy on aliases.
at::Tensor copy_from(const at::Tensor& self, const at::Tensor& dst, bool) {
  cpu_alias(dst).copy_(cpu_alias(self));
  return dst;
}

at::Tensor copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  dst.resize_(self.sizes());
  return copy_from(self, dst, false);
}

at::Scalar local_scalar_dense(const at::Tensor& self) {
  return at::_local_scalar_dense(cpu_alias(self));
}

at::Tensor& set_storage(at::Tensor& self, c10::Storage source) {
  auto elements = static_cast<int64_t>(source.nbytes() / self.dtype().itemsize());
  return at::native::set_storage_cpu_(self, source, 0, {elements}, {});
}

at::Tensor& set_storage_offset(at::Tensor& self, c10::Storage source, int64_t offset, c10::IntArrayRef size,
                               c10::IntArrayRef stride) {
  return at::native::set_storage_cpu_(self, source, offset, size, stride);
}

void refuse(const c10::OperatorHandle& op, torch::jit::Stack*) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, op.schema().operator_name(), " has no kernel on the simulated device '",
                              c10::get_privateuse1_backend(),
                              "': it computes only what gems registers (gems.registered_ops()); "
                              "nothing runs silently on the CPU instead");
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("empty.memory_format", TORCH_FN(empty_memory_format));
  m.impl("empty_strided", TORCH_FN(empty_strided));
  m.impl("as_strided", TORCH_FN(at::native::as_strided_tensorimpl));
  m.impl("view", TORCH_FN(at::native::view));
  m.impl("_reshape_alias", TORCH_FN(at::native::_reshape_alias));
  m.impl("unfold", TORCH_FN(at::native::unfold));
  m.impl("resize_", TORCH_FN(at::native::resize_));
  m.impl("_copy_from", TORCH_FN(copy_from));
  m.impl("_copy_from_and_resize", TORCH_FN(copy_from_and_resize));
  m.impl("_local_scalar_dense", TORCH_FN(local_scalar_dense));
  m.impl("set_.source_Storage", TORCH_FN(set_storage));
  m.impl("set_.source_Storage_storage_offset", TORCH_FN(set_storage_offset));
}

// A copy from a negative or conjugate view: the math-bit fallbacks would materialize the source with
// clone(), which copies through _copy_from again, forever. copy_from() honours the bits itself (the
// CPU aliases carry them), so those keys pass _copy_from straight to it. _copy_from is reached only
// for devices other than the CPU and CUDA, so this changes nothing for them.
TORCH_LIBRARY_IMPL(aten, Negative, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
}

TORCH_LIBRARY_IMPL(aten, Conjugate, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&refuse>());
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  static bool hooks = [] {
    at::RegisterPrivateUse1HooksInterface(new SimHooks());
    return true;
  }();
  (void)hooks;
  m.def("cpu_alias", &cpu_alias, "A CPU tensor over the same host memory as a simulated-device tensor (no copy)");
}

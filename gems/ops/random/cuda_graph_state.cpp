// The CUDA generator's Philox state as ATen's own random kernels take it (at::PhiloxCudaState), for gems'
// Triton kernels (gems/ops/random/philox.py). Python cannot read it during CUDA graph capture: the
// generator's get_offset() asserts that no capture is under way. CUDAGeneratorImpl::philox_cuda_state()
// is ATen's graph-safe entry point: outside capture it returns the seed and offset and advances the offset
// by `increment`; during capture it returns pointers to the graph's seed and offset tensors (refilled by
// every replay) and this kernel's offset within the graph, and it adds `increment` to the graph's total,
// by which each replay advances the generator. Built with torch.utils.cpp_extension (no CUDA toolkit:
// the header is plain C++), linked against libtorch_cuda.
#include <ATen/cuda/CUDAGeneratorImpl.h>
#include <torch/extension.h>

#include <mutex>
#include <optional>
#include <tuple>

// (captured, seed or seed pointer, offset or offset pointer, offset within the graph)
std::tuple<bool, int64_t, int64_t, int64_t> philox_state(const std::optional<at::Generator>& generator,
                                                         int64_t device_index, int64_t increment) {
  at::Generator gen = generator.has_value() && generator->defined()
                          ? *generator
                          : at::cuda::detail::getDefaultCUDAGenerator(static_cast<c10::DeviceIndex>(device_index));
  auto* impl = at::check_generator<at::CUDAGeneratorImpl>(gen);
  at::PhiloxCudaState state;
  {
    std::lock_guard<std::mutex> lock(gen.mutex());  // ATen's note: acquire the lock to use a generator
    state = impl->philox_cuda_state(static_cast<uint64_t>(increment));
  }
  if (state.captured_) {
    return {true, reinterpret_cast<int64_t>(state.seed_.ptr), reinterpret_cast<int64_t>(state.offset_.ptr),
            static_cast<int64_t>(state.offset_intragraph_)};
  }
  return {false, static_cast<int64_t>(state.seed_.val), static_cast<int64_t>(state.offset_.val), 0};
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("philox_state", &philox_state, "ATen's graph-safe Philox state of a CUDA generator");
}

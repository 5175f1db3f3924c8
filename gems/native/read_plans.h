// Plans with a host read (included by dispatch.cpp; gems/native/read_record.py records them): calls whose result
// sizes depend on data (nonzero, masked_select, unique). A plan's launches before `at` (the head: inputs and the
// first `head_temps` temporary buffers only) run, one int64 count is read back from temporary buffer `temp` at byte
// `offset` (CUDA: a copy to the host on the call's stream, then a stream sync, as `.item()` does; the Python
// primitive: read_record.replay_head), then the first variant of the signature whose range [lo, hi] holds the count
// (and whose computed numbers Triton specialized alike, on CUDA) allocates the other buffers and the results and
// launches the rest, its numbers floor((a * count + b) / d). No variant: false, and the caller records the call in
// Python as another variant (its head ran for nothing; it wrote buffers of this call only).

constexpr int kMaxReadVariants = 8;  // per signature: a count of 0, and ranges split where launches change

struct ReadStep {
  size_t at;          // launches before the read
  int temp;           // the buffer holding the count
  int64_t offset;     // bytes
  size_t head_temps;  // buffers the head uses (allocated before the read, fixed sizes)
  int64_t lo, hi;     // the counts this variant serves
  std::vector<Formula> formulas;
  std::vector<Check> checks;  // CUDA: integer classes and alignments of the computed numbers
  PyObject* py_head = nullptr;  // the Python primitive's head launches (strong reference, never released)
  std::atomic<Plan*> next{nullptr};  // the signature's next variant
};

PyObject* g_replay_head = nullptr;  // read_record.replay_head

void build_read(Plan& plan, const py::tuple& spec) {
  auto r = std::make_unique<ReadStep>();
  r->at = spec[0].cast<size_t>();
  r->temp = spec[1].cast<int>();
  r->offset = spec[2].cast<int64_t>();
  r->head_temps = spec[3].cast<size_t>();
  r->lo = spec[4].cast<int64_t>();
  r->hi = spec[5].cast<int64_t>();
  parse_formulas(spec, r->formulas, r->checks, plan, "count");
  r->py_head = spec[9].ptr();
  Py_INCREF(r->py_head);
  TORCH_CHECK(r->at <= plan.launches.size() && r->head_temps <= plan.temps.size() && r->temp >= 0 &&
              size_t(r->temp) < r->head_temps, "gems native: a read step does not fit its plan");
  plan.read = r.release();
}

// A new variant `plan` of a signature whose plan `old` reads too, with the same head: appended to its variants
// (true), unless they are full.
bool add_read_variant(Plan* old, Plan* plan) {
  if (old == nullptr || old->python_only || old->read == nullptr || plan->read == nullptr) return false;
  const ReadStep& r = *plan->read;
  int n = 1;
  Plan* last = old;
  for (Plan* p = old->read->next.load(std::memory_order_acquire); p != nullptr;
       p = p->read->next.load(std::memory_order_acquire), ++n)
    last = p;
  if (n >= kMaxReadVariants || old->read->at != r.at || old->read->temp != r.temp || old->read->offset != r.offset ||
      old->read->head_temps != r.head_temps)
    return false;
  last->read->next.store(plan, std::memory_order_release);
  return true;
}

// The count of a plan's read: on CUDA, 8 bytes to the host on the current stream, then that stream synchronized.
int64_t read_count_cuda(const Slot& s, const at::Tensor& buffer, int64_t offset, c10::Device device) {
  const auto* guard = c10::impl::getDeviceGuardImpl(g_device_type);
  CUstream stream = static_cast<CUstream>(guard->getStream(device).native_handle());
  TORCH_CHECK(g_driver.copy_to_host != nullptr && g_driver.synchronize != nullptr,
              "gems native: libcuda.so.1 has no cuMemcpyDtoHAsync_v2 or cuStreamSynchronize");
  int64_t count = 0;
  const uint64_t source = reinterpret_cast<uint64_t>(buffer.unsafeGetTensorImpl()->data()) + uint64_t(offset);
  CUresult r = g_driver.copy_to_host(&count, source, sizeof(int64_t), stream);
  if (r == 0) r = g_driver.synchronize(stream);
  const char* name = "unknown";
  if (r != 0 && g_driver.error_name) g_driver.error_name(r, &name);
  TORCH_CHECK(r == 0, "gems native: reading a count back for ", s.qualified, " failed with ", name, " (", r, ")");
  return count;
}

// Whether a CUDA stream is being captured (a host read is illegal there): the Python path raises ATen's error.
bool capturing(c10::Device device) {
  if (g_primitive != kCuda) return false;
  const auto* guard = c10::impl::getDeviceGuardImpl(g_device_type);
  int capturing = 0;
  return g_driver.is_capturing == nullptr ||
         g_driver.is_capturing(static_cast<CUstream>(guard->getStream(device).native_handle()), &capturing) != 0 ||
         capturing != 0;
}

// Replay a read plan (the first variant of its signature); false (the stack untouched) when no variant serves the
// count: the caller records the call as another variant.
bool replay_read(Slot& s, Plan& first, c10::Device device, const Key& k, torch::jit::Stack* stack) {
  const ReadStep& head = *first.read;
  std::vector<at::Tensor> inputs;
  inputs.reserve(k.nt);
  for (int i = 0; i < k.nt; ++i) inputs.push_back(*k.tensors[i]);
  std::vector<at::Tensor> temps(first.temps.size());
  for (size_t i = 0; i < head.head_temps; ++i)
    temps[i] = at::empty({first.temps[i]}, at::TensorOptions().dtype(at::kByte).device(device));
  int64_t count = 0;
  if (g_primitive == kCuda) {
    launch_cuda(s, first, device, inputs, {}, temps, nullptr, nullptr, 0, head.at);
    count = read_count_cuda(s, temps[head.temp], head.offset, device);
  } else {
    py::gil_scoped_acquire gil;
    if (g_replay_head == nullptr) {
      py::object fn = py::module_::import("gems.native.read_record").attr("replay_head");
      g_replay_head = fn.release().ptr();
    }
    py::handle fn(g_replay_head);
    std::vector<at::Tensor> used(temps.begin(), temps.begin() + head.head_temps);
    count = fn(py::handle(head.py_head), as_tuple(inputs), as_tuple(used), head.temp, head.offset).cast<int64_t>();
  }
  int64_t values[kMaxValues];
  Plan* plan = &first;
  for (; plan != nullptr; plan = plan->read->next.load(std::memory_order_acquire)) {
    const ReadStep& r = *plan->read;
    if (count < r.lo || count > r.hi) continue;
    for (size_t j = 0; j < r.formulas.size(); ++j)
      values[j] = floor_div(r.formulas[j].a * count + r.formulas[j].b, r.formulas[j].d);
    bool match = true;
    for (const Check& c : r.checks) {
      if (c.kind == 0) {
        match = int_class(values[c.value]) == c.expected;
      } else {
        uint64_t base = c.tensor < 0 ? 0 : reinterpret_cast<uint64_t>(k.tensors[c.tensor]->unsafeGetTensorImpl()->data());
        match = int64_t((base + uint64_t(values[c.value])) % 16 == 0) == c.expected;
      }
      if (!match) break;
    }
    if (match) break;
  }
  if (plan == nullptr) return false;
  temps.resize(plan->temps.size());
  std::vector<at::Tensor> outs;
  allocate(*plan, device, values, inputs, temps, outs, head.head_temps);
  if (g_primitive == kCuda) {
    launch_cuda(s, *plan, device, inputs, outs, temps, values, nullptr, head.at);
  } else {
    py::gil_scoped_acquire gil;
    replay_python(*plan, inputs, outs, temps, values, plan->read->formulas.size());
  }
  finish(s, *plan, stack, outs, values, false);
  return true;
}

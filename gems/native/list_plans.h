// gems native list plans: calls over tensor lists (`_foreach_*`, `_fused_adam(w)_`) replayed from C++.
//
// Included by dispatch.cpp inside its anonymous namespace (it uses the Key, Plan, Slot and launch code there).
// A list call is keyed by a summary of each tensor list (length, dtype, device, all 16-byte aligned, how many
// empty tensors, whether its rows have the first list's sizes) instead of item by item, and only when each list
// holds contiguous strided tensors of one dtype and device (else it takes the Python path every time); a
// ScalarList by its length and whether its values are all one (its values reach the kernel through the table, as
// kernel arguments over a table of the rows' positions, or the one value as a kernel argument: read per call either
// way); everything else as dispatch.cpp
// keys it. The Python path's uniform table (gems/ops/optim/multi_tensor.py) tells the recorder
// (gems/native/list_record.py) how the table was built; a replay builds the same table here (lists.cpp's
// write_table), finds it in a device-table cache keyed by its bytes or uploads it, and launches the recorded
// kernel with grid = the table's programs. docs/native.md has the design.

// One operand list of the table: the call's list argument `index` (kind 0) or result list `index` (kind 1).
struct ListOperand {
  int8_t kind;
  int16_t index;
};

// The per-row word after the operands' addresses: none, 0, a ScalarList's value, a tensor's address, the row's
// position in its lists (0, 1, ...: its value is kernel argument i).
enum ListWords : uint8_t { kNoWords = 0, kZeroWords, kScalarListWords, kAddressWords, kPositionWords };

// A number read per call: Scalar argument `arg` (item -1; a ScalarList of one value: its value) or item `item` of
// ScalarList argument `arg`.
struct PerCallScalar {
  int16_t arg;
  int16_t item;
};

struct ListInfo {
  std::vector<ListOperand> operands;
  std::vector<int16_t> tails;    // list arguments whose row tensors' addresses end each row (step counts)
  uint8_t words = kNoWords;      // the per-row word after the operands' addresses
  int16_t words_index = 0;       // kScalarListWords: the argument; kAddressWords: the call tensor
  bool flat_flag = false;
  int64_t chunk = 0;
  int64_t n_rows = 0;            // as recorded: the key fixes them (kernel constexprs depend on them)
  bool aligned = false;
  std::vector<int16_t> results;  // per result list: the list argument it is allocated like (at::empty_like)
  std::vector<PerCallScalar> scalars;  // passed per call as float64 bits: the plan's numbers 1, 2...
};

// Key words of one tensor list of a list call: its length, then one word of what the Python path's decision reads.
void add_tensor_list(Key& k, c10::ArrayRef<c10::IValue> list) {
  k.add(tag(kTensorList, list.size()));
  if (list.empty()) return;
  const at::Tensor& first = list[0].toTensor();
  if (!first.defined()) return k.fail(kWhyList);
  const auto dtype = first.scalar_type();
  const auto device = first.device();
  bool aligned = true, same_sizes = k.has_first_list && k.first_list.size() == list.size();
  uint64_t empty = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    const at::Tensor& t = list[i].toTensor();
    if (!t.defined()) return k.fail(kWhyList);
    auto* impl = t.unsafeGetTensorImpl();
    if (impl->layout() != c10::kStrided || impl->is_conj() || impl->is_neg() || !impl->has_storage() ||
        impl->dtype().toScalarType() != dtype || impl->device() != device || !impl->is_contiguous())
      return k.fail(kWhyList);
    aligned = aligned && (reinterpret_cast<uint64_t>(impl->data()) & 15) == 0;
    empty += impl->numel() == 0;
    if (same_sizes) same_sizes = impl->sizes() == k.first_list[i].toTensor().sizes();
  }
  if (!k.has_first_list) {
    k.first_list = list;
    k.has_first_list = true;
    same_sizes = true;
  }
  k.add(uint64_t(dtype) | (uint64_t(device.type()) << 8) | (uint64_t(device.index() + 1) << 16) |
        (uint64_t(aligned) << 24) | (uint64_t(same_sizes) << 25) | (empty << 32));
}

inline double scalar_value(const c10::IValue& v) {
  return v.isDouble() ? v.toDouble() : v.isInt() ? double(v.toInt()) : double(v.toBool());
}

// Whether every value of a ScalarList has the first one's float64 bits (the foreach operators' test,
// gems/ops/optim/foreach.py `apply`: such a list reaches the kernel as one scalar argument, not as table words).
bool one_value(c10::ArrayRef<c10::IValue> list) {
  const uint64_t first = bits(scalar_value(list[0]));
  for (const c10::IValue& v : list)
    if (bits(scalar_value(v)) != first) return false;
  return true;
}

// A ScalarList (a list of Scalars) of a list call: its length and whether its values are all one; the values
// are read per call (table words, or the one value as a kernel argument).
void add_scalar_list(Key& k, c10::ArrayRef<c10::IValue> list) {
  for (const c10::IValue& v : list)
    if (!(v.isDouble() || v.isInt() || v.isBool())) return k.fail(kWhyList);
  const bool one = !list.empty() && one_value(list);
  k.add(tag(kDoubleList, list.size()) ^ (uint64_t(1) << 55) ^ (uint64_t(one) << 54));  // not a float[] keyed by value
}

// ------------------------------------------------------------------------------------- the device tables

struct TableEntry {
  at::Tensor device;
  std::list<std::string>::iterator order;
};

constexpr size_t kTableCache = 256;  // tables per process; an optimizer step uses a few dozen

struct TableCache {
  std::mutex mutex;
  std::unordered_map<std::string, TableEntry> tables;
  std::list<std::string> order;  // least recently used first
  std::vector<at::Tensor> kept;  // read by a captured CUDA graph: never freed
  int64_t hits = 0, uploads = 0;  // since the last table_counts(true)
};

// Never destroyed: its tensors must not be freed at exit, after the device runtime may be gone.
TableCache& table_cache() {
  static TableCache* cache = new TableCache();
  return *cache;
}

// This thread's calls reach ATen's kernels while it lives (gems.aten_only() for one thread: t_aten_only).
struct AtenOnlyHere {
  AtenOnlyHere() { ++t_aten_only; }
  ~AtenOnlyHere() { --t_aten_only; }
  AtenOnlyHere(const AtenOnlyHere&) = delete;
  AtenOnlyHere& operator=(const AtenOnlyHere&) = delete;
};

bool stream_capturing(c10::Device device) {
  if (g_primitive != kCuda || g_driver.is_capturing == nullptr) return false;
  const auto* guard = c10::impl::getDeviceGuardImpl(g_device_type);
  int capturing = 0;
  return g_driver.is_capturing(static_cast<CUstream>(guard->getStream(device).native_handle()), &capturing) == 0 &&
         capturing != 0;
}

// (tables found in the cache, tables uploaded) by list-plan replays since the last reset (`reset`: reset now).
py::tuple table_counts(bool reset) {
  TableCache& c = table_cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  py::tuple counts = py::make_tuple(c.hits, c.uploads);
  if (reset) c.hits = c.uploads = 0;
  return counts;
}

// The table on `device`, from the cache (keyed by its bytes and the device) or uploaded: from pinned memory without
// a host synchronisation on CUDA, as gems/runtime/device_tables.py's upload_cached does. The pinned source is let
// go once the copy is queued: the copy records an event on it in torch's caching host allocator, which hands the
// block out again only after the copy has read it, so a steady stream of new tables reuses a few pinned blocks
// instead of pinning fresh memory (cudaHostAlloc) for each. A captured graph's copy reads it at every replay: kept.
at::Tensor device_table(const std::vector<int64_t>& words, c10::Device device) {
  std::string key(reinterpret_cast<const char*>(words.data()), words.size() * sizeof(int64_t));
  key.append(reinterpret_cast<const char*>(&device), sizeof(device));
  const bool capturing = stream_capturing(device);
  TableCache& c = table_cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  auto found = c.tables.find(key);
  if (found != c.tables.end()) {
    ++c.hits;
    c.order.splice(c.order.end(), c.order, found->second.order);
    if (capturing) c.kept.push_back(found->second.device);
    return found->second.device;
  }
  const int64_t n = int64_t(words.size());
  auto options = at::TensorOptions().dtype(at::kLong);
  at::Tensor host = at::empty({n}, g_primitive == kCuda ? options.pinned_memory(true) : options);
  std::memcpy(host.data_ptr(), words.data(), words.size() * sizeof(int64_t));
  at::Tensor on_device = host;
  if (!device.is_cpu()) {
    // A transfer is ATen's: through gems' own _to_copy and copy_ kernels (the device's key) it took the Python path
    // every time, to be refused there as a transfer (Fallback) and served by ATen: ~20-50 us per upload.
    AtenOnlyHere aten_only;
    on_device = host.to(device, /*non_blocking=*/g_primitive == kCuda);
  }
  if (capturing) {
    c.kept.push_back(on_device);
    c.kept.push_back(host);
  }
  ++c.uploads;
  c.order.push_back(key);
  c.tables.emplace(std::move(key), TableEntry{on_device, std::prev(c.order.end())});
  if (c.tables.size() > kTableCache) {
    c.tables.erase(c.order.front());
    c.order.pop_front();
  }
  return on_device;
}

// ------------------------------------------------------------------------------------- recording and replay

// A list plan from its Python spec: (plan spec, operands, tails, words kind, words index, flat flag, chunk, n_rows,
// aligned, results, per-call scalars, CUDA targets). The plan has one launch, the table its temp 0, its grid x the
// table's programs (number 0), the per-call scalars' bits numbers 1, 2... (CUDA: kernel parameters by targets).
Plan* build_list_plan(const py::object& spec) {
  if (py::isinstance<py::str>(spec)) return build_plan(spec);
  auto t = spec.cast<py::tuple>();
  Plan* plan = build_plan(t[0]);
  auto info = std::make_unique<ListInfo>();
  for (auto o : t[1].cast<py::list>()) {
    auto item = o.cast<py::tuple>();
    info->operands.push_back({item[0].cast<int8_t>(), item[1].cast<int16_t>()});
  }
  info->tails = t[2].cast<std::vector<int16_t>>();
  info->words = t[3].cast<uint8_t>();
  info->words_index = t[4].cast<int16_t>();
  info->flat_flag = t[5].cast<bool>();
  info->chunk = t[6].cast<int64_t>();
  info->n_rows = t[7].cast<int64_t>();
  info->aligned = t[8].cast<bool>();
  info->results = t[9].cast<std::vector<int16_t>>();
  for (auto o : t[10].cast<py::list>()) {
    auto item = o.cast<py::tuple>();
    info->scalars.push_back({item[0].cast<int16_t>(), item[1].cast<int16_t>()});
  }
  TORCH_CHECK(info->scalars.size() < size_t(kMaxValues), "gems native: too many per-call scalars");
  for (auto target : t[11].cast<py::list>()) {
    auto item = target.cast<py::tuple>();
    plan->targets.push_back({item[0].cast<uint8_t>(), item[1].cast<uint8_t>(), item[2].cast<uint16_t>(),
                             item[3].cast<uint16_t>(), item[4].cast<uint16_t>()});
  }
  TORCH_CHECK(!info->operands.empty() && info->chunk > 0 && plan->launches.size() == 1,
              "gems native: a list plan needs operands, a chunk and one launch");
  plan->targets.push_back({kGridX, 0, 0, 0, 0});
  plan->list = info.release();
  return plan;
}

// Replays a list plan; false (nothing done, the stack intact) when the call's table differs from the recorded one in
// what the kernel was compiled for (its rows or alignment), which the key should exclude.
bool replay_list(Slot& s, const Plan& plan, const Key& k, const c10::IValue* args, torch::jit::Stack* stack) {
  const ListInfo& info = *plan.list;
  auto tensors_of = [](c10::ArrayRef<c10::IValue> list) {
    std::vector<const at::Tensor*> out(list.size());
    for (size_t i = 0; i < list.size(); ++i) out[i] = &list[i].toTensor();
    return out;
  };
  std::vector<std::vector<at::Tensor>> results(info.results.size());
  for (size_t r = 0; r < info.results.size(); ++r) {
    auto like = args[info.results[r]].toListRef();
    results[r].reserve(like.size());
    for (const c10::IValue& v : like) results[r].push_back(at::empty_like(v.toTensor()));
  }
  std::vector<std::vector<const at::Tensor*>> operands, tails;
  for (const ListOperand& o : info.operands) {
    if (o.kind == 0) {
      operands.push_back(tensors_of(args[o.index].toListRef()));
    } else {
      std::vector<const at::Tensor*> items;
      for (const at::Tensor& t : results[o.index]) items.push_back(&t);
      operands.push_back(std::move(items));
    }
  }
  for (int16_t a : info.tails) tails.push_back(tensors_of(args[a].toListRef()));
  const size_t n = operands[0].size();
  if (n == 0) return false;
  for (const auto& list : tails)
    if (list.size() != n) return false;
  std::vector<int64_t> words;
  if (info.words == kZeroWords) {
    words.assign(n, 0);
  } else if (info.words == kScalarListWords) {
    auto scalars = args[info.words_index].toListRef();
    if (scalars.size() != n) return false;
    words.resize(n);
    for (size_t i = 0; i < n; ++i) words[i] = int64_t(bits(scalar_value(scalars[i])));
  } else if (info.words == kAddressWords) {
    words.assign(n, int64_t(reinterpret_cast<uint64_t>(k.tensors[info.words_index]->unsafeGetTensorImpl()->data())));
  } else if (info.words == kPositionWords) {
    words.resize(n);
    for (size_t i = 0; i < n; ++i) words[i] = int64_t(i);
  }
  std::vector<int64_t> table;
  int64_t n_rows = 0;
  bool aligned = true;
  int64_t values[kMaxValues];  // the table's programs, then the per-call scalars' bits
  values[0] = write_table(operands, tails, words.empty() ? nullptr : words.data(), info.chunk, info.flat_flag, table,
                          n_rows, aligned);
  for (size_t j = 0; j < info.scalars.size(); ++j) {
    const PerCallScalar& p = info.scalars[j];
    const c10::IValue& a = args[p.arg];  // a Scalar, or a ScalarList: its item, or its one value (keyed so)
    if (!a.isList()) {
      values[1 + j] = int64_t(bits(scalar_value(a)));
      continue;
    }
    auto list = a.toListRef();  // of the recorded length (the key holds it)
    if (list.empty() || size_t(std::max<int16_t>(p.item, 0)) >= list.size()) return false;
    values[1 + j] = int64_t(bits(scalar_value(list[std::max<int16_t>(p.item, 0)])));
  }
  if (n_rows != info.n_rows || aligned != info.aligned) return false;
  const c10::Device device = operands[0][0]->device();
  std::vector<at::Tensor> temps{device_table(table, device)};
  std::vector<at::Tensor> inputs;
  inputs.reserve(k.nt);
  for (int i = 0; i < k.nt; ++i) inputs.push_back(*k.tensors[i]);
  if (g_primitive == kCuda) {
    launch_cuda(s, plan, device, inputs, {}, temps, values, nullptr);
  } else {
    py::gil_scoped_acquire gil;
    py::tuple numbers(1 + info.scalars.size());
    for (size_t i = 0; i < numbers.size(); ++i) numbers[i] = py::int_(values[i]);
    py::handle fn(g_replay);
    fn(py::handle(plan.py_plan), as_tuple(inputs), py::tuple(0), as_tuple(temps), numbers);
  }
  s.hits.fetch_add(1, std::memory_order_relaxed);
  s.launches.fetch_add(1, std::memory_order_relaxed);
  torch::jit::drop(*stack, s.nargs);
  for (auto& r : results) stack->emplace_back(c10::List<at::Tensor>(std::move(r)));
  return true;
}

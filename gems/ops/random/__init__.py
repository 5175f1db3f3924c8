"""Random operators: every overload of "random/distribution" in the reference list and the ones around them.

Operators (one file each): uniform_, normal_, exponential_, bernoulli_, random_ (in-place draws); rand,
randn, rand_like, randn_like, randint, randint_like, normal, bernoulli (new tensors); randperm,
multinomial; native_dropout and native_dropout_backward; rrelu_with_noise (with its in-place form) and
rrelu_with_noise_backward. CompositeExplicitAutograd overloads (rand, bernoulli.p, normal.float_float,
native_dropout.out...) are registered as their own kernels, as the creation operators are; the
CompositeImplicitAutograd ones (rand.generator_out, randn.out, randn.generator_out, dropout, rrelu) stay
with ATen, which decomposes them into what is registered here (their samples expect those overloads).
Family helpers: philox.py (the generator's state, the Philox helpers, checks, shared overload tables),
distributions.py (the one kernel behind every plain distribution).

Numbers. Philox4x32-10 (``tl.philox``: the algorithm and constants of cuRAND's Philox, which ATen's CUDA
kernels use) with the generator's seed as key and a counter laid out as cuRAND lays out ATen's draws:
counter = (offset // 4, lane), where offset is the generator's Philox offset (ATen counts it in 32-bit
words per thread) and lane an element group of the call. One Philox call gives a lane four 32-bit words,
hence four values (fp16, bf16, fp32 and 32-bit integer draws: uniforms of 24 bits, Box-Muller normals in
pairs) or two (fp64 and 64-bit integers: 53-bit uniforms). In the element-wise kernels (distributions.py,
dropout, rrelu) value k of lane j goes to element 4j + k (2j + k), whatever the block size: a key and an
offset give the same numbers on every vendor. With whole lanes per GPU thread (philox.lane_grid: one, or
four for large exponential_ draws), a thread loads and stores a lane's consecutive elements with one
vectorized access, and no layout conversion through shared memory is needed. fp32 normals take polynomial
forms of the logarithm, cosine and sine (philox.normal_pair): within 6e-7 of the float64 Box-Muller values
of the same words (40,000 draws).

The generator's state (philox.philox_key). A call takes its key from the generator it is given, else the
device's default one (torch.cuda.default_generators on CUDA; the simulated device has none and draws
from the CPU generator, as ATen's CPU kernels would), and moves the state on, so that ``manual_seed``
repeats a sequence and two calls never draw the same numbers:

- a generator with a Philox offset (CUDA's): seed and offset are read (``initial_seed``, ``get_offset``)
  and the offset advances by 4 words (``set_offset``), as ATen's kernels advance it per curand4 call
  per thread. Each call thus uses counter column offset // 4 only, which no other call uses, gems' or
  ATen's (ATen's kernels advance past the columns they use);
- a generator without one (the CPU's Mersenne Twister): one 63-bit number drawn from it (ATen's own
  random_ on a 0-d CPU tensor, the only way Python can advance that state) is the call's key, with
  offset 0. The state moves by one draw per call rather than one per value, as ATen's CPU kernels do.

CUDA graph capture. Inside a capture the generator's offset cannot be read from Python: ATen asserts
that no capture is under way in ``get_offset`` and ``get_state``, and Python has no access to the
graph-safe state ATen's own kernels use (``CUDAGeneratorImpl::philox_cuda_state``: pointers to the
graph's seed and offset tensors, which every replay refills, and the kernel's offset within the graph,
added to the graph's total by which each replay advances the generator). gems builds a small C++
helper for it (cuda_graph_state.cpp, torch.utils.cpp_extension, linked against libtorch_cuda) on the
first call inside a capture; the kernels then read seed and offset on the device (``graph`` = 1). The
same compiled kernel serves eager calls and captures: seed, offset and the flag are int64/int32
arguments that Triton does not specialize on, so a capture never compiles (warm the call up before
capturing, as for every gems operator). Replays thus draw anew and advance the generator as ATen's do,
and a replay draws what an eager call from the same state draws. Where the helper cannot be built (no
compiler) a call inside a capture falls back to ATen's kernel, with a warning and a counted fallback.
The capture path was compiled and type-checked here but runs only on a GPU
(tests/test_random.py::test_cuda_graph_capture_of_a_dropout_draws_anew_on_each_replay).

Conformance. Random numbers have no float64 oracle (ATen draws others): their samples carry a
statistical verdict (gems.testing.draws, gems.testing.samples_random) with a false-failure rate of 1e-6
per case, and the runner adds the checks every random case gets (ATen's shapes, dtypes and strides; the
same numbers under the same seed; other numbers, and an advanced generator, on the next call).

Per call. A call that takes its key from the default generator is recorded by the native layer as a plan
whose replays take fresh keys (gems/native/record.py, DrawnWord). Checks of values (bernoulli's p,
multinomial's weights) assert on the device where kernels are compiled, as ATen's CUDA kernels do, so such
calls never wait for the device and replay too; interpreted kernels read the values back instead
(philox.host_checks).
"""

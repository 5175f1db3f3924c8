"""What the random operators share: where a call's Philox key and counter come from (the generator's
state), the Triton helpers that turn Philox words into values, and the checks several operators make.

The package docstring (gems/ops/random/__init__.py) explains the design; in short, element group
``lane`` of a call draws the four 32-bit words of Philox4x32-10 at counter ``(offset // 4, lane)``
under key ``seed``, which is how cuRAND lays out ATen's own draws (counter = offset, subsequence =
thread), and the call moves the generator's offset on by :data:`WORDS_PER_CALL`.
"""

from __future__ import annotations

import contextlib
import functools
import warnings
from pathlib import Path
from typing import NamedTuple

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import pointwise_config
from gems.ops.creation.fill import check_options
from gems.ops.pointwise.shared import log1p_reduced
from gems.runtime import registration
from gems.runtime.launch import Launcher, cdiv
from gems.runtime.registration import NEVER_READ, Fallback
from gems.spec import lazy, lazy_perf

# One Philox call per lane gives four 32-bit words; ATen's offsets count such words per thread, so a
# call that draws one Philox block per lane moves the offset on by 4, as ATen's kernels do per
# curand4 call.
WORDS_PER_CALL = 4
# What philox_key asks of ATen on the CPU: one draw of the Mersenne Twister, the only way Python moves that
# generator on; the draw is the call's Philox key (declared in every random operator's aten_decisions).
SEED_DRAW = {"aten.random_.default": "one 63-bit draw from the CPU generator is the call's Philox key: ATen's "
                                     "random_ is the only way Python advances that generator's state"}
_INT64_WRAP = 1 << 64
_GRAPH_STATE_SOURCE = Path(__file__).with_name("cuda_graph_state.cpp")


# --------------------------------------------------------------------------- Triton helpers


@triton.jit
def philox_words(seed, offset, graph, lane, seed_ptr, offset_ptr):
    """The four uint32 words of Philox4x32-10 at counter (offset // 4, lane) under key ``seed`` (int64
    lanes). ``graph`` (a run-time flag, so that one compiled kernel serves both): inside a CUDA graph the
    key and the base offset are read on the device from the generator's graph tensors, and ``offset`` is
    this launch's offset within the graph."""
    seed = seed.to(tl.int64)  # int64 already where the kernel annotates them; the interpreter may pass int32
    offset = offset.to(tl.int64)
    if graph != 0:  # unreached on the interpreter: CUDA graph capture
        seed = tl.load(seed_ptr)
        offset = tl.load(offset_ptr) + offset
    counter = offset // 4
    lanes = lane.to(tl.int64)
    c0 = (lanes * 0 + counter).to(tl.uint32)
    c1 = (lanes * 0 + (counter >> 32)).to(tl.uint32)
    c2 = lanes.to(tl.uint32)
    c3 = (lanes >> 32).to(tl.uint32)
    return tl.philox(seed, c0, c1, c2, c3)


@triton.jit
def uniform24(r):
    """An fp32 in [0, 1) from the top 24 bits of a uint32 word: every value is exact, none is 1."""
    return (r >> 8).to(tl.float32) * 5.9604644775390625e-08


@triton.jit
def uniform53(hi, lo):
    """An fp64 in [0, 1) from 53 bits of two uint32 words."""
    bits = (hi.to(tl.uint64) << 21) | (lo >> 11).to(tl.uint64)
    return bits.to(tl.float64) * 1.1102230246251565e-16


@triton.jit
def box_muller(u0, u1):
    """Two independent standard normal values from two uniforms in [0, 1) (1 - u0 is in (0, 1], so the
    logarithm is finite). For fp64; fp32 draws take :func:`normal_pair`."""
    radius = tl.sqrt(-2.0 * tl.log(1.0 - u0))
    angle = 6.283185307179586 * u1
    return radius * tl.cos(angle), radius * tl.sin(angle)


@triton.jit
def log_unit(k):
    """ln(k * 2^-24) in fp32 for integers k in [1, 2^24] (int32): ln(m) + e ln 2 with k * 2^-24 = m 2^e, m in
    [sqrt(1/2), sqrt(2)), ln(1 + t) by log1p_reduced (error below 5e-8)."""
    bits = k.to(tl.float32).to(tl.int32, bitcast=True)
    exponent = (bits - 0x3F3504F3) >> 23  # k's binary exponent, m's range chosen by the offset
    t = (bits - (exponent << 23)).to(tl.float32, bitcast=True) - 1.0
    return (exponent - 24).to(tl.float32) * 0.6931471805599453 + log1p_reduced(t)


@triton.jit
def _cos_sin_turn(m):
    """cos and sin of the angle 2 pi m 2^-24 in fp32, m in [0, 2^24) (int32): the nearest quarter turn q is
    taken out exactly in integers, leaving x in [-1/2, 1/2) quarter turns, whose cos(pi x / 2) = C(x^2) and
    sin(pi x / 2) = x S(x^2) are polynomials fitted to fp32 accuracy (errors below 1.1e-7)."""
    quarter = (m + (1 << 21)) >> 22  # 0..4
    x = (m - (quarter << 22)).to(tl.float32) * 2.384185791015625e-07  # 2^-22: exact
    z = x * x
    c = ((-0.020408352836966515 * z + 0.2535986304283142) * z - 1.2336970567703247) * z + 1.0
    s = (((-0.004602177068591118 * z + 0.07968022674322128) * z - 0.6459634900093079) * z + 1.5707963705062866) * x
    swap = (quarter & 1) != 0
    cos_x = tl.where(swap, s, c)
    sin_x = tl.where(swap, c, s)
    # A quarter turn maps (cos, sin) to (-sin, cos); quarter is q or q + 4.
    cos_x = tl.where(((quarter + 1) & 2) != 0, 0.0 - cos_x, cos_x)
    sin_x = tl.where((quarter & 2) != 0, 0.0 - sin_x, sin_x)
    return cos_x, sin_x


@triton.jit
def normal_pair(r0, r1):
    """Two independent standard normal fp32 values from two Philox words by the Box-Muller transform of
    :func:`box_muller`, u0 and u1 being the words' top 24 bits (uniform24): radius sqrt(-2 ln(1 - u0)), angle
    2 pi u1. Logarithm, cosine and sine are polynomials of a few instructions each (libdevice's logf and
    sinf/cosf took about 40 and 100 on sm_90, which made randn compute bound)."""
    radius = tl.sqrt(-2.0 * log_unit((1 << 24) - (r0 >> 8).to(tl.int32)))
    cos_a, sin_a = _cos_sin_turn((r1 >> 8).to(tl.int32))
    return radius * cos_a, radius * sin_a


@triton.jit
def side_by_side(v0, v1, v2, v3, PER_LANE: tl.constexpr):
    """A block of lanes' values laid out as elements: value k of lane j at element PER_LANE * j + k (v2 and
    v3 are unused when PER_LANE is 2). With one lane per thread the result is PER_LANE consecutive elements
    per thread, the layout of a vectorized load or store (no conversion through shared memory)."""
    if PER_LANE == 4:
        values = tl.interleave(tl.interleave(v0, v2), tl.interleave(v1, v3))
    else:
        values = tl.interleave(v0, v1)
    return values


@triton.jit
def _outside_kernel(x_ptr, flag_ptr, low, high, n, BLOCK: tl.constexpr):
    """flag = 1 if some x[i] is outside [low, high] or NaN (a dense block of n elements)."""
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=low)
    if x_ptr.dtype.element_ty != tl.float64:
        x = x.to(tl.float32)  # bf16 compares only through fp32 under the interpreter
    bad = tl.where((x >= low) & (x <= high), 0, 1)
    tl.atomic_max(flag_ptr, tl.max(bad, axis=0))


_outside = Launcher(_outside_kernel)


# --------------------------------------------------------------------------- the generator's state


class PhiloxKey(NamedTuple):
    """What a kernel needs to draw: the key and ATen's offset, or, inside a CUDA graph, the device
    tensors holding them (``graph``: (seed tensor, offset tensor)) and the offset within the graph."""

    seed: int
    offset: int
    graph: tuple | None = None

    def kernel_args(self, device: torch.device) -> tuple:
        """(seed_ptr, offset_ptr, seed, offset, graph) for :func:`philox_words`; outside a graph the
        pointers are a placeholder (never read) of the same dtype, so one compiled kernel serves both. The
        placeholder is one per device, kept for the process and marked never read, which the native layer
        records as a constant pointer: a fresh one per call was a temporary buffer that every native replay
        allocated (an extra caching-allocator round trip per call; bernoulli_ of 4096 elements was 0.89x
        ATen per call on an H200)."""
        if self.graph is None:
            holder = _placeholder(device)
            return holder, holder, self.seed, self.offset, 0
        return self.graph[0], self.graph[1], 0, self.offset, 1  # unreached on the interpreter: CUDA graph capture


_PLACEHOLDERS: dict = {}  # device -> the int64 element that PhiloxKey.kernel_args passes outside a graph


def _placeholder(device: torch.device) -> torch.Tensor:
    holder = _PLACEHOLDERS.get(device)
    if holder is None:  # not under capture: outside a graph (kernel_args' caller checked), a plain allocation
        holder = torch.empty(1, dtype=torch.int64, device=device)  # never read: no fill
        setattr(holder, NEVER_READ, True)
        _PLACEHOLDERS[device] = holder
    return holder


def default_generator(device: torch.device) -> torch.Generator:
    """The generator ATen draws from for ``device``: the device module's default generator where it has
    them (torch.cuda), else the CPU's (the simulated device has none of its own)."""
    if device.type != "cpu":  # unreached on the interpreter: the CPU's generator
        module = getattr(torch, device.type, None)
        generators = getattr(module, "default_generators", None)
        if generators:
            return generators[device.index if device.index is not None else module.current_device()]
    return torch.default_generator


def checked_generator(device: torch.device, generator) -> torch.Generator:
    """The generator a call draws from, refusing one of another device type as ATen's check_generator does."""
    default = default_generator(device)
    if generator is None:
        return default
    if generator.device.type != default.device.type:
        raise RuntimeError(f"Expected a '{default.device.type}' device type for generator but found "
                           f"'{generator.device.type}'")
    return generator


def philox_key(device: torch.device, generator, increment: int = WORDS_PER_CALL) -> PhiloxKey:
    """Take ``increment`` words of the generator's Philox stream for one call and advance it past them.

    A generator with a Philox offset (CUDA's) gives its seed and offset, and its offset moves on by
    ``increment``, as ATen's kernels move it. During CUDA graph capture the offset cannot be read from
    Python (ATen asserts that no capture is under way); cuda_graph_state.cpp takes ATen's graph-safe
    state instead, and without it the call is left to ATen. A generator without an offset (the CPU's
    Mersenne Twister) gives one 63-bit draw as the key, so each call moves its state on by one draw.
    While the native layer records a call that draws from the default generator, the key's words are marked
    (record.DrawnWord): the plan's replays take a fresh key the same way, in C++ on CUDA.
    """
    gen = checked_generator(device, generator)
    recording = registration.recording  # the native layer's (gems/native/record.py)
    if recording is not None and recording.dry:
        recording.stop("it draws random numbers")  # a probe at another size must not move the generator
    if gen.device.type == "cpu":
        with registration.aten_only(), recording.paused() if recording is not None else contextlib.nullcontext():
            key = PhiloxKey(torch.empty((), dtype=torch.int64).random_(generator=gen).item(), 0)
    else:
        key = _offset_key(gen, device, increment)
    if recording is None or generator is not None or key.graph is not None:
        return key  # a call given its own generator stays in Python: the native key does not cover generators
    return PhiloxKey(*recording.drawn(key.seed, key.offset, gen, increment, device))


def _offset_key(gen, device, increment) -> PhiloxKey:  # unreached on the interpreter: CUDA's generator
    if device.type == "cuda" and torch.cuda.is_current_stream_capturing():
        return _captured_key(gen, device, increment)
    seed, offset = gen.initial_seed(), gen.get_offset()
    gen.set_offset(offset + increment)
    return PhiloxKey(_signed(seed), offset)


def _signed(seed: int) -> int:  # unreached on the interpreter: CUDA's generator
    """A uint64 seed as the int64 with the same bits (kernels take int64)."""
    return seed - _INT64_WRAP if seed >= 1 << 63 else seed


def _captured_key(gen, device, increment) -> PhiloxKey:  # unreached on the interpreter: CUDA graph capture
    state = _graph_state_module()
    if state is None:
        raise Fallback("CUDA graph capture: the generator's graph-safe Philox state is not readable from Python "
                       "and gems' helper for it (cuda_graph_state.cpp) is not available")
    captured, seed, offset, intragraph = state.philox_state(gen, device.index or 0, increment)
    if not captured:
        return PhiloxKey(_signed(seed), offset)
    return PhiloxKey(0, intragraph, (_device_int64(seed, device), _device_int64(offset, device)))


class _DeviceScalar:  # unreached on the interpreter: CUDA graph capture
    """One int64 in device memory that gems does not own (a generator's graph tensor), as torch reads it."""

    def __init__(self, pointer: int):
        self.__cuda_array_interface__ = {"shape": (1,), "typestr": "<i8", "data": (pointer, False), "version": 3}


def _device_int64(pointer: int, device: torch.device) -> torch.Tensor:  # unreached on the interpreter: CUDA graphs
    return torch.as_tensor(_DeviceScalar(pointer), device=device)


@functools.cache
def _graph_state_module():  # unreached on the interpreter: CUDA graph capture
    """The C++ helper that returns ATen's graph-safe Philox state (built once, CUDA torch only)."""
    try:
        from torch.utils import cpp_extension

        return cpp_extension.load(name="gems_cuda_graph_state", sources=[str(_GRAPH_STATE_SOURCE)],
                                  extra_ldflags=["-ltorch_cuda"], verbose=False)
    except Exception as exc:  # no compiler, no libtorch_cuda: calls inside a capture are left to ATen
        warnings.warn(f"gems: random operators inside CUDA graph capture fall back to ATen ({exc})", stacklevel=2)
        return None


# --------------------------------------------------------------------------- launch helpers


def lane_grid(numel: int, values_per_lane: int, itemsize: int, lanes_per_thread: int = 1) -> tuple[int, int, int]:
    """(lanes per program, programs, num_warps) covering ``numel`` values at ``values_per_lane`` per lane
    (:func:`side_by_side`), the values per program following the vendor's flat blocks (``itemsize``: bytes of
    the computation per value) times ``lanes_per_thread``. A thread owns ``lanes_per_thread`` lanes (one
    Philox call each, independent: more work per thread to hide the multiplies' latency and spread the
    program's fixed costs), each lane's values consecutive, so a program's loads and stores need no layout
    conversion. The interpreter, whose blocks are larger than a GPU program, ignores num_warps."""
    block_values, _ = pointwise_config(numel, itemsize)
    lanes = max(block_values * lanes_per_thread // values_per_lane, 32 * lanes_per_thread)
    return lanes, cdiv(numel, lanes * values_per_lane), min(lanes // (32 * lanes_per_thread), 32)


def dense_like(t: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """``t`` (broadcastable to ``target``) laid out as ``target`` is, in its own dtype: itself when it
    already is, else a copy (values moved, never converted), so kernels read both in memory order."""
    if t.shape == target.shape and t.stride() == target.stride():
        return t
    copy = torch.empty_strided(target.shape, target.stride(), dtype=t.dtype, device=target.device)
    return copy.copy_(t.expand(target.shape))


_interpreted = []


def host_checks() -> bool:
    """Whether checks of values (bernoulli's p, multinomial's weights) read the device on the host and raise
    ATen's CPU error: where kernels are interpreted (the interpreter vendor, the simulated device), whose
    device asserts are off. Compiled kernels assert on the device instead, as ATen's CUDA kernels do: no host
    synchronisation, and a call that only allocates and launches, which the native layer replays."""
    if not _interpreted:
        _interpreted.append(bool(triton.knobs.runtime.interpret))
    return _interpreted[0]


def any_outside(x: torch.Tensor, low: float, high: float) -> bool:
    """Whether an element of ``x`` is outside [low, high] or NaN: one launch and one read back (ATen's
    CPU checks of std >= 0 and p in [0, 1], and its CUDA check of std, read the values too)."""
    if x.numel() == 0:
        return False
    dense = x if x.is_contiguous() else x.contiguous()
    flag = torch.zeros((), dtype=torch.int32, device=x.device)
    block = 4096
    _outside((cdiv(dense.numel(), block),), dense, flag, float(low), float(high), dense.numel(), block)
    return bool(flag.item())


# --------------------------------------------------------------------------- what the operator files share

# The C++ type names in ATen's bound messages ("from is out of bounds for signed char").
C_NAMES = {torch.float16: "c10::Half", torch.bfloat16: "c10::BFloat16", torch.float32: "float",
           torch.float64: "double", torch.int8: "signed char", torch.uint8: "unsigned char", torch.int16: "short",
           torch.int32: "int", torch.int64: "long", torch.bool: "bool"}


def inplace_samples(method: str, kind: str, **fields):
    """gems.testing.samples_random_tensors.InplaceDraws(method, kind, **fields), made on first use (trimmed in quick
    mode)."""
    return lazy("gems.testing.samples_random", "quick_trimmed", "InplaceDraws", method, kind, **fields)


def random_samples(name: str, *args, **kwargs):
    """The sample generator <name>(*args, **kwargs) of gems.testing.samples_random_*, made on first use (trimmed in
    quick mode)."""
    return lazy("gems.testing.samples_random", "quick_trimmed", name, *args, **kwargs)


def draws_perf(kind: str):
    """Perf inputs of a random operator (gems.testing.samples_random.draws_perf): bytes = what it reads and
    writes."""
    return lazy_perf("gems.testing.samples_random", "draws_perf", kind, shapes="random")



def sized_overloads(name: str, fill) -> dict:
    """``name`` and ``name.generator`` of a sized factory (rand, randn): ``size`` of ``dtype`` (the
    default dtype if None) filled by ``fill(tensor, generator=)``, options checked as the creation
    factories check them."""
    def with_generator(size, *, generator, dtype=None, layout=None, device=None, pin_memory=None):
        dtype = torch.get_default_dtype() if dtype is None else dtype
        check_options(dtype, layout, device, pin_memory)
        return fill(torch.empty(size, dtype=dtype, device=device), generator=generator)

    def plain(size, *, dtype=None, layout=None, device=None, pin_memory=None):
        return with_generator(size, generator=None, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory)

    return {name: plain, f"{name}.generator": with_generator}


def like_overloads(name: str, fill) -> dict:
    """``name``, ``.generator``, ``.out`` and ``.generator_out`` of a ``*_like`` factory (rand_like,
    randn_like): the input's layout (torch.empty_like's memory_format rules) filled by ``fill(tensor,
    generator=)``; the input's values are not read."""
    def with_generator(self, *, generator, dtype=None, layout=None, device=None, pin_memory=None,
                       memory_format=None):
        dtype = self.dtype if dtype is None else dtype
        check_options(dtype, layout, device if device is not None else self.device, pin_memory)
        return fill(torch.empty_like(self, dtype=dtype, device=device, memory_format=memory_format),
                    generator=generator)

    def plain(self, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
        return with_generator(self, generator=None, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory,
                              memory_format=memory_format)

    def generator_out(self, *, generator, memory_format=None, out):
        out.resize_(self.shape)
        return fill(out, generator=generator)

    def out(self, *, memory_format=None, out):
        return generator_out(self, generator=None, memory_format=memory_format, out=out)

    return {name: plain, f"{name}.generator": with_generator, f"{name}.out": out,
            f"{name}.generator_out": generator_out}

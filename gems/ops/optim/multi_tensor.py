"""What the optimizer family shares: one kernel launch over every tensor of several lists.

A foreach or fused-optimizer call applies one update to *rows*: row i is the i-th tensor of every list
(param i, grad i, exp_avg i...). One launch serves every row of a dtype group (ATen groups by device and
dtype too): the launch gets a small int64 *table* on the device, and each program finds its row and its
chunk of CHUNK elements there.

Table layout (int64 words), ``n_rows`` rows of ``width`` words:

    [0, n_rows)                      the first program of each row, non-decreasing: a program finds its
                                     row by binary search (STEPS = ceil(log2(n_rows)) scalar loads)
    [n_rows + r*width, + width)      row r: numel first; the rest is the kernel's (operand addresses, a
                                     scalar as float64 bits, sizes and strides...)

Empty tensors get no row. Addresses become typed pointers in the kernel (:func:`typed`); when every
address of a launch is 16-byte aligned (the caching allocator's always are) the kernel says so
(tl.multiple_of) and full tiles compile to 128-bit loads and stores.

Tables are cached by their contents: an optimizer calls the same operators on the same tensors every
step, so from the second step on a call uploads nothing. A new table reaches a CUDA device from pinned
memory, with no host synchronisation. Tables made or used while a CUDA graph is captured are kept for
the life of the process (the graph reads them at every replay).

Under the Triton interpreter the kernels read and write those addresses directly: host memory, for the
CPU and for the simulated device alike (its storage is host memory). The table is the only tensor
argument, so the interpreter's copy-back of its arguments never overwrites what a kernel wrote. Because
a kernel reads memory its arguments do not show, the kernels are marked :data:`ADDRESS_TABLE` and the
conformance launch memo never replays them.
"""

from __future__ import annotations

import operator

import torch
import triton
import triton.language as tl

from gems import native
from gems.codegen.pointwise import float64_bits
from gems.dtypes import ATEN_NAMES
from gems.native import list_record
from gems.runtime import registration
from gems.runtime.device_tables import upload, upload_cached
from gems.runtime.registration import Fallback

# Elements per program: ATen's multi_tensor_apply chunk (64K). A 1B-parameter model is about 16K programs.
CHUNK = 65536
# Elements per tile of a program's loop: 16 per thread with 4 warps (four 128-bit fp32 loads per operand
# and thread, like ATen's ILP of 4 with 512 threads), which keeps several tiles of every operand in flight.
BLOCK = 2048
NUM_WARPS = 4
# Attribute set on every kernel that reads addresses out of a table (see the module docstring).
ADDRESS_TABLE = "gems_address_table"
_FLOAT_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)

MAX_DIMS = 4  # dimensions of a strided row after merging; beyond, ATen computes (never met in optimizers)
TL_DTYPES = {torch.float16: tl.float16, torch.bfloat16: tl.bfloat16, torch.float32: tl.float32,
             torch.float64: tl.float64}
_DTYPE, _DEVICE = operator.attrgetter("dtype"), operator.attrgetter("device")

# --------------------------------------------------------------------------- device helpers


@triton.jit
def program_row(table_ptr, n_rows, WIDTH: tl.constexpr, STEPS: tl.constexpr, CHUNK_SIZE: tl.constexpr):
    """(the address of this program's row words, where its chunk starts in the row, the row's numel)."""
    pid = tl.program_id(0)
    lo = pid * 0
    hi = lo + n_rows
    for _ in tl.static_range(STEPS):  # the last row whose first program is <= pid
        mid = (lo + hi) // 2
        go = tl.load(table_ptr + mid) <= pid
        lo = tl.where(go, mid, lo)
        hi = tl.where(go, hi, mid)
    first = tl.load(table_ptr + lo)
    row_ptr = table_ptr + n_rows + lo.to(tl.int64) * WIDTH
    start = (pid - first).to(tl.int64) * CHUNK_SIZE
    return row_ptr, start, tl.load(row_ptr)


@triton.jit
def typed(row_ptr, word: tl.constexpr, DTYPE: tl.constexpr, ALIGNED: tl.constexpr):
    """The address in word ``word`` of a row, as a pointer to DTYPE (16-byte aligned when ALIGNED)."""
    ptr = tl.load(row_ptr + word).to(tl.pointer_type(DTYPE))
    if ALIGNED:
        ptr = tl.multiple_of(ptr, 16)
    return ptr


@triton.jit
def float_word(row_ptr, word):
    """A float64 stored as its bits in word ``word`` of a row."""
    return tl.load(row_ptr + word).to(tl.float64, bitcast=True)


@triton.jit
def f64_bits(bits):
    """A float64 passed to a kernel as its bit pattern (Triton passes Python floats as fp32)."""
    return tl.cast(tl.cast(bits, tl.int64), tl.float64, bitcast=True)


# --------------------------------------------------------------------------- host helpers


def steps_for(n_rows: int) -> int:
    """Binary-search steps that find a row among n_rows."""
    return max(0, (n_rows - 1).bit_length())


def table(rows: list, numels: list, device) -> tuple[torch.Tensor, int]:
    """(the device table of these rows, the number of programs). rows: each row's words after numel, all
    of one width; numels: each row's element count (rows of empty tensors are left out by the caller)."""
    words, programs = [], 0
    for numel in numels:
        words.append(programs)
        programs += -(-numel // CHUNK)
    for numel, row in zip(numels, rows):
        words.append(numel)
        words += row
    return upload(words, torch.device(device)), programs


def scalar_word(value, arg) -> int:
    """``value`` (a Scalar argument of the call: ``arg`` its schema position or name) as the float64 bits a kernel
    takes; while the native layer records a list call, marked as that argument's, which a replay reads per call
    (the overload declares it in ``per_call_scalars``: a value that reaches nothing but such kernel words)."""
    return list_record.scalar_word(float64_bits(float(value)), arg)


def list_words(bits, arg) -> list:
    """A ScalarList argument's values (``bits``: their float64 bits) as kernel arguments: while the native layer
    records a list call, item j marked as argument ``arg``'s item j, which a replay reads per call."""
    return [list_record.scalar_word(b, arg, j) for j, b in enumerate(bits)]


def upload_bytes(words: bytes, device: torch.device) -> torch.Tensor:
    """``upload`` of int64 words given as their bytes (:func:`uniform_table`'s); reported to the native layer's
    list recording (gems/native/list_record.py) while a call is recorded."""
    def make():
        return upload_cached((device, words), lambda: torch.frombuffer(bytearray(words), dtype=torch.int64), device)

    return make() if registration.recording is None else list_record.upload(make)


def uniform(lists) -> bool:
    """Whether ``lists`` hold one floating dtype on one device, contiguous tensors and equal sizes row by row,
    checked by the native layer; False where it is not built (the caller checks tensor by tensor then)."""
    ext = native.extension()
    return ext is not None and ext.lists_uniform(lists)


def empty_like_all(tensors) -> list:
    """``[torch.empty_like(t) for t in tensors]`` (ATen's functional foreach results: a fresh tensor each, with
    its input's layout) for a :func:`uniform` list, allocated in one C++ loop."""
    out = native.extension().empty_like_list(tensors)
    if registration.recording is not None:
        list_record.allocated_like(out, tensors)
    return out


# ``uniform_table``'s words_from for words that are the rows' positions in their lists (0, 1, ...): a kernel that
# finds a row's value among its arguments by position (gems/ops/optim/foreach_kernels.py values_kernel).
POSITIONS = list_record.POSITIONS


def uniform_table(operands, words=(), tails=(), flat_flag=True, words_from=None) -> tuple | None:
    """For :func:`uniform` lists ``operands``: (the table's int64 words as bytes, programs, rows, every operand
    address 16-byte aligned), or None for other lists or without the native layer. A row's words: numel, a 0 if
    ``flat_flag`` (the foreach kernel's flat walk), the operands' addresses, the row's entry of ``words`` if any,
    then the addresses of its tensors in ``tails`` (lists of any tensors: a fused optimizer's step counts).
    ``words_from``: what non-zero ``words`` are made of (a ScalarList argument's values as float64 bits, a tensor
    argument's address in every row, which the native layer's list plans read per call, or :data:`POSITIONS`)."""
    ext = native.extension()
    if ext is None:
        return None
    words = list(words)
    answer = ext.uniform_table(operands, list(tails), words, CHUNK, flat_flag)
    if registration.recording is not None and answer is not None:
        list_record.table_written(operands, words, words_from, tails, flat_flag, CHUNK, answer)
    return answer


def aligned(addresses) -> bool:
    return all(a % 16 == 0 for a in addresses)


def check_floats(lists, what="tensors") -> None:
    """gems computes floating lists; anything else is ATen's (integer and complex foreach lists)."""
    for tensors in lists:
        for dtype in set(map(_DTYPE, tensors)):
            if dtype not in _FLOAT_DTYPES:
                raise Fallback(f"{what} of dtype {dtype}: gems' optimizer kernels compute floating tensors")


def check_nonempty(tensors) -> None:
    if len(tensors) == 0:
        raise RuntimeError("Tensor list must have at least one tensor.")


def check_same_length(first, *others) -> None:
    """ATen's check_foreach_api_restrictions for several tensor lists (an empty other list fails the lengths')."""
    check_nonempty(first)
    for other in others:
        if len(other) != len(first):
            raise RuntimeError(f"Tensor lists must have the same number of tensors, got {len(first)} and "
                               f"{len(other)}")


def check_fused_lists(lists, names) -> None:
    """ATen's check_fast_path_restrictions for a fused optimizer's lists: one dtype, device and dense
    layout throughout, and each row's tensors of one size and stride (RuntimeError otherwise). List by list:
    the common case (contiguous tensors) costs no per-row Python."""
    first = lists[0][0]
    shapes = list(map(torch.Tensor.size, lists[0]))
    for tensors in lists:
        if ({t.dtype for t in tensors} != {first.dtype} or {t.device for t in tensors} != {first.device}
                or list(map(torch.Tensor.size, tensors)) != shapes):
            raise RuntimeError(f"{names} must have same dtype, device, and layout")
    if all(all(map(torch.Tensor.is_contiguous, tensors)) for tensors in lists):
        return
    # Some tensor is not contiguous: every list's strides must be the first list's (a contiguous list beside
    # a transposed one walks its rows in another order), as ATen's CUDA kernels require.
    for tensors in lists:
        for t, lead in zip(tensors, lists[0]):
            if not dense(t) or any(a != b for a, b, n in zip(t.stride(), lead.stride(), t.shape) if n != 1):
                raise RuntimeError(f"{names} must have same dtype, device, and layout")


def check_lengths(params, **lists) -> None:
    for name, tensors in lists.items():
        if len(tensors) != len(params):
            raise RuntimeError(f"Expected {name}.size() == n_tensors to be true, but got false.")


def check_float32(t) -> None:
    if t is not None and t.dtype != torch.float32:
        raise RuntimeError(f"expected scalar type Float but found {ATEN_NAMES.get(t.dtype, t.dtype)}")


def device_scalars(params, lr, grad_scale, found_inf):
    """(lr as a float or a device tensor, ...) after ATen's checks of the optional device scalars."""
    device = params[0].device
    for name, t in (("grad_scale", grad_scale), ("found_inf", found_inf)):
        if t is not None and t.device != device:  # unreached on the interpreter: one device
            raise RuntimeError(f"{name} must be on the same GPU device as the params")
        check_float32(t)
    if isinstance(lr, torch.Tensor):
        if lr.device.type == "cpu" and device.type != "cpu":  # CPU memory: no device synchronisation
            lr = lr.item()  # unreached on the interpreter: one device (ATen reads it the same way)
        elif lr.device != device:  # unreached on the interpreter: one device
            raise RuntimeError("lr must be on the same GPU device as the params")
        elif lr.numel() != 1:
            raise Fallback("an lr tensor of several elements")
    return lr


def dense(t) -> bool:
    """Non-overlapping and dense in some dimension order (a transposed or channels-last tensor)."""
    dims = sorted((st, size) for st, size in zip(t.stride(), t.shape) if size != 1)
    expected = 1
    for stride, size in dims:
        if stride != expected:
            return False
        expected *= size
    return True


def merged_layout(shape, strides_list):
    """(sizes, strides per operand) with size-1 dimensions dropped and dimensions that every operand walks
    contiguously merged, padded to MAX_DIMS; None past MAX_DIMS."""
    sizes, merged = [], [[] for _ in strides_list]
    for d in range(len(shape)):
        if shape[d] == 1:
            continue
        if sizes and all(m[-1] == st[d] * shape[d] for m, st in zip(merged, strides_list)):
            sizes[-1] *= shape[d]
            for m, st in zip(merged, strides_list):
                m[-1] = st[d]
            continue
        sizes.append(shape[d])
        for m, st in zip(merged, strides_list):
            m.append(st[d])
    if len(sizes) > MAX_DIMS:
        return None
    pad = MAX_DIMS - len(sizes)
    return [1] * pad + sizes, [[0] * pad + m for m in merged]


def check_lists(device, lists, across_devices=False) -> None:
    """Floating tensors on ``device``; else ATen serves the call (integer lists, a row on another device, a
    CPU scalar tensor beside device tensors, a copy across devices), or refuses it as ATen does: operands of
    one row on two devices."""
    for tensors in lists:
        devices = set(map(_DEVICE, tensors))
        if devices != {device}:  # unreached on the interpreter: one device
            if not across_devices:
                _check_row_devices(device, lists)
            other = next(d for d in devices if d != device)
            raise Fallback(f"a tensor on {other} in a list on {device}: ATen's per-tensor path serves it")
    check_floats(lists)


def _check_row_devices(device, lists):  # unreached on the interpreter: one device
    for row in zip(*lists):
        devices = {t.device for t in row}
        if len(devices) > 1 and not all(t.device == device or (t.dim() == 0 and t.device.type == "cpu") for t in row):
            first, other = sorted(devices, key=str)[:2]
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                               f"{first} and {other}!")


def mark(kernel):
    """Declare that ``kernel`` reads memory through a table of addresses (see the module docstring)."""
    setattr(kernel, ADDRESS_TABLE, True)
    return kernel

"""What the indexing operators share: ATen's argument checks, the check of index values against their
dimension, and the plan of a walk over up to four dims (walk.py's kernels take it).

Index values out of range
-------------------------
ATen's CPU kernels raise (IndexError "index out of range in self", RuntimeError "index 7 is out of
bounds for dimension 0 with size 5"); its CUDA kernels assert on the device (CUDA_KERNEL_ASSERT), which
stops the kernel, with no host synchronisation when every index is good. gems does the same on each side:

- compiled kernels (a GPU): every kernel that reads an index is jitted with ``debug=True`` and asserts
  ``0 <= i < size`` (``-size <= i`` where negative indices wrap) with ``tl.device_assert`` (masked_scatter
  on the source's length; embedding_dense_backward's sorted sums skip such an index, as ATen's kernels
  do); the load or store of an element whose index is out of range is masked as well, so nothing
  outside a tensor is touched even where the assert is compiled out. The price: ``debug=True`` also makes
  Triton check 32-bit integer +, -, * for overflow; the kernels compute offsets in int64, where it adds no
  check, so what remains is one compare per index and a never-taken branch to the trap (the sm_90 PTX of
  the embedding tile keeps its 16-byte vector loads and stores, four each, with or without it). An error
  certain without reading any index (a non-empty index into a dim of size 0) is raised on the host.
- interpreted kernels (the interpreter vendor, the simulated device): memory is host memory and every
  launch copies its arguments to the host anyway, so the index is read on the host before any launch and
  the call raises ATen's CPU exception. Triton's interpreter drops device asserts, so this is the only
  check there; such a call is kept off the native layer's plans, whose replay would skip it.
"""

from __future__ import annotations

from typing import NamedTuple

import torch
import triton

from gems.codegen.pointwise_checks import is_dense
from gems.runtime import registration
from gems.runtime.launch import cdiv, next_power_of_2
from gems.runtime.registration import Fallback

INDEX_DTYPES = (torch.int64, torch.int32)
# Data per program: 16 KB keeps several vector loads per thread in flight at 4-8 warps (the copy kernels of
# this family are bound by memory latency), and makes few programs under the interpreter (~1.5 ms each).
TILE_BYTES = 16384
# A tile of rows of 2 KB or more gives each thread four 16-byte vectors in at most two rows: each more row a
# thread costs a 64-bit address and an index, and registers decide how many warps an SM holds. sm_90 (ptxas
# of triton 3.6): a [2, 1024] bf16 tile on 2 warps takes 26 registers, 64 warps an SM, so the 4096 programs
# of 8192 rows of 1024 run in one wave; the [8, 1024] tile on 8 warps took 46 registers, 40 warps an SM, 1.55
# waves (0.94x ATen on an H200 where [2, 4096] on 8 warps, 26 registers, made 1.02-1.05x).
VECTORS_PER_THREAD = 4
# A tile whose index varies along its columns (gather, scatter) carries a 64-bit index and a 64-bit address
# per element, and its loads beside the index are one element a thread (walk._lane_cols), each with its own
# address: at most 4 elements a thread, on up to 8 warps. sm_90 (ptxas of triton 3.6, scatter of 4096 x 4096
# along either dim, bf16/fp32): 34-40 registers at 4 (48 warps an SM), 64-80 at 8 (24-32 warps). Before the
# loads went one a thread, 8 a thread took 48 registers and 16 KB of shared memory for the layout conversions
# (40 warps an SM); the 16 KB tile's 32 a thread took 123 (180 for scatter: one 8-warp program an SM).
ELEMENTS_PER_THREAD = 4
MAX_DIMS = 4  # walk.py's kernels take up to four dims after merging


_interpreted = []


def interpreted() -> bool:
    """Whether kernels run under Triton's interpreter (the vendor decided it before any kernel was defined)."""
    if not _interpreted:
        _interpreted.append(bool(triton.knobs.runtime.interpret))
    return _interpreted[0]


def check_values(index: torch.Tensor, size: int, error, wrap: bool = False) -> None:
    """Where kernels are interpreted: raise ``error(value)`` for the first index outside [0, size)
    ([-size, size) with ``wrap``), before any launch (see the module docstring)."""
    if index.numel() == 0 or not interpreted():
        return
    if registration.recording is not None:
        registration.recording.refused = "indices are checked on the host under the interpreter"
    values = index.detach().cpu().numpy()
    bad = (values < (-size if wrap else 0)) | (values >= size)
    if bad.any():
        raise error(int(values[bad][0]))


def cuda_asserts(*variants) -> dict:
    """OpSpec.skips for error variants whose index is out of range: ATen's CUDA kernel asserts on the device
    there, which leaves the process's CUDA context unusable (conformance could not go on)."""
    return {("nvidia", "*", v): "ATen's CUDA kernel asserts on the device for an index out of range and kills the "
                                "process's CUDA context" for v in variants}


def out_of_range(value) -> IndexError:
    """index_select's and embedding's error."""
    return IndexError("index out of range in self")


def out_of_bounds(dim: int, size: int, kind=RuntimeError):
    """gather's, scatter's (RuntimeError) and index's (IndexError) error for a value of dim ``dim``."""
    return lambda value: kind(f"index {value} is out of bounds for dimension {dim} with size {size}")


def check_index_dtype(op: str, index: torch.Tensor, dtypes=INDEX_DTYPES, message=None) -> None:
    if index.dtype not in dtypes:
        raise RuntimeError(message or f"{op}(): Expected dtype int64 for index")


def scalar_of(value, dtype: torch.dtype):
    """A Scalar argument as ATen's ``to<scalar_t>()`` reads it for ``dtype`` (an integer truncates a float)."""
    if dtype is torch.bool:
        return bool(value)
    return float(value) if dtype.is_floating_point else int(value)


def _size(t: torch.Tensor, d: int) -> int:
    return t.shape[d] if t.dim() else 1


def check_gather_scatter(op: str, self, dim: int, index, src=None, error=RuntimeError) -> int:
    """ATen's checks of gather / scatter arguments (``dim`` wrapped; a 0-d tensor counts as 1-d of size 1):
    the index dtype, self's and src's dtype, ranks, and index no larger than self (but along ``dim``) and
    than src; then the index values (shared.check_values). Returns the size of self's dim ``dim``."""
    if index.dtype not in INDEX_DTYPES:
        raise RuntimeError(f"{op}(): Expected dtype int32/int64 for index")
    if src is not None and src.dtype != self.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    check_device(self, index, *(() if src is None else (src,)))
    rank = max(index.dim(), 1)
    if rank != max(self.dim(), 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as "
                           + ("input tensor" if op == "gather" else "self tensor"))
    if src is not None and rank != max(src.dim(), 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    if index.numel():
        for d in range(rank):
            if (d != dim and _size(index, d) > _size(self, d)) or (src is not None and _size(index, d) > _size(src, d)):
                if src is None:
                    raise RuntimeError(f"Size does not match at dimension {d} expected index {list(index.shape)} to be "
                                       f"no larger than self {list(self.shape)} apart from dimension {dim}")
                raise RuntimeError(f"Expected index {list(index.shape)} to be no larger than self {list(self.shape)} "
                                   f"apart from dimension {dim} and to be no larger size than src {list(src.shape)}")
    size = _size(self, dim)
    if size == 0 and index.numel():  # every index is out of range: no read is needed to know
        raise error(f"index is out of bounds for dimension {dim} with size 0")
    check_values(index, size, out_of_bounds(dim, size, error))
    return size


def broadcast_shape(*shapes):
    """The shape ``shapes`` broadcast to, or None where two sizes differ and neither is 1 (torch.broadcast_shapes
    costs tens of microseconds per call)."""
    if len(shapes) == 1:
        return tuple(shapes[0])
    rank = max(len(s) for s in shapes)
    result = [1] * rank
    for shape in shapes:
        for d, n in enumerate(shape, rank - len(shape)):
            if n != 1:
                if result[d] not in (1, n):
                    return None
                result[d] = n
    return tuple(result)


def broadcast_error(a, b) -> RuntimeError:
    """ATen's error for two shapes that do not broadcast."""
    for d in range(1, max(len(a), len(b)) + 1):
        x, y = (a[-d] if d <= len(a) else 1), (b[-d] if d <= len(b) else 1)
        if x != y and 1 not in (x, y):
            return RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) at non-singleton "
                                f"dimension {max(len(a), len(b)) - d}")
    return RuntimeError(f"shapes {list(a)} and {list(b)} do not broadcast")


def check_device(*tensors) -> None:
    device = tensors[0].device
    for t in tensors[1:]:
        if t.device != device:  # unreached on the interpreter: one device
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                               f"{device} and {t.device}!")


def check_no_overlap(t: torch.Tensor) -> None:
    """ATen's assert_no_internal_overlap for a tensor written in place."""
    if torch._debug_has_internal_overlap(t) == 1:
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a single "
                           "memory location. Please clone() the tensor before performing the operation.")


def check_no_overlap_with(out: torch.Tensor, *inputs: torch.Tensor) -> None:
    """ATen's assert_no_overlap: a written tensor may not share memory with an input (both dense)."""
    if out.numel() == 0 or not is_dense(out):
        return
    start, end = out.data_ptr(), out.data_ptr() + out.numel() * out.element_size()
    for t in inputs:
        if t is None or not t.numel() or not is_dense(t):
            continue
        if t.data_ptr() < end and start < t.data_ptr() + t.numel() * t.element_size():
            raise RuntimeError("unsupported operation: some elements of the input tensor and the written-to tensor "
                               "refer to a single memory location. Please clone() the tensor before performing the "
                               "operation.")


def prepare_out(out: torch.Tensor, like: torch.Tensor, shape) -> torch.Tensor:
    """ATen's out= handling: same dtype and device as ``like``, resized to ``shape`` when it differs."""
    if out.dtype != like.dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {like.dtype}, but got {out.dtype} instead")
    check_device(like, out)
    if tuple(out.shape) != tuple(shape):
        out.resize_(shape)
    return out


class Walk(NamedTuple):
    """A walk over up to four dims: rows are the first three flattened (size1 and size2 unravel them),
    columns the last; ``strides`` holds each tensor's four strides, in the order the planner got them."""

    n_rows: int
    n_cols: int
    size1: int
    size2: int
    strides: tuple

    def tile(self, itemsize: int, index_per_element: bool = False) -> tuple[int, int, int, int, int]:
        """(programs, column blocks, BLOCK_R, BLOCK_C, num_warps): up to TILE_BYTES of data per program, fewer
        where registers would limit the warps an SM holds (VECTORS_PER_THREAD, ELEMENTS_PER_THREAD)."""
        elems = max(TILE_BYTES // itemsize, 1)
        if index_per_element:
            elems = min(elems, ELEMENTS_PER_THREAD * 32 * 8)
        block_c = min(next_power_of_2(self.n_cols), elems)
        # Triton lays a thread's 16-byte vector along the columns, a warp's 32 threads next, then the warps.
        warp_spans = block_c * itemsize // (16 * 32)  # a warp's vectors across the tile's columns
        if not index_per_element and warp_spans >= 4:
            warps = min(warp_spans // 2, 8)
            block_r = min(next_power_of_2(self.n_rows), VECTORS_PER_THREAD * warps // warp_spans)
        else:
            block_r = min(next_power_of_2(self.n_rows), max(elems // block_c, 1))
            if index_per_element:
                warps = min(max(block_r * block_c // (ELEMENTS_PER_THREAD * 32), 1), 8)
            else:
                warps = 8 if block_r * block_c > 4096 else 4
        col_blocks = cdiv(self.n_cols, block_c)
        return cdiv(self.n_rows, block_r) * col_blocks, col_blocks, block_r, block_c, warps


def plan_walk(sizes, *strides) -> Walk:
    """The walk over ``sizes`` (a non-empty iteration space) with each tensor's ``strides`` over it: size-1
    dims dropped, neighbours merged where every tensor steps across them evenly. Raises Fallback past
    MAX_DIMS merged dims."""
    dims = []
    for d, n in enumerate(sizes):
        if n == 1:
            continue
        step = tuple(s[d] for s in strides)
        if dims and all(p == q * n for p, q in zip(dims[-1][1], step)):
            dims[-1] = (dims[-1][0] * n, step)
        else:
            dims.append((n, step))
    if len(dims) > MAX_DIMS:
        raise Fallback(f"a walk over {len(dims)} dims that do not merge (at most {MAX_DIMS})")
    dims = [(1, (0,) * len(strides))] * (MAX_DIMS - len(dims)) + dims
    per_tensor = tuple(tuple(step[t] for _, step in dims) for t in range(len(strides)))
    return Walk(dims[0][0] * dims[1][0] * dims[2][0], dims[3][0], dims[1][0], dims[2][0], per_tensor)

"""The persistent GEMM of the large fp16/bf16 products (linear layers: prefill, training), in two load modes.

out = alpha * (a @ b) + beta * bias for one (M, K) x (K, N) product. One program per multiprocessor loops
over the output tiles (BLOCK_M x BLOCK_N, visited in groups of GROUP_M tile rows as gemm.py's GEMM does),
so that a program's next tile starts loading while its last one is stored. Tiles may split K into SPLIT_K
runs (either mode), each run's fp32 partial sum written apart and a second pass (:func:`_finish_tiles`)
adding them in a fixed order: every tile of a product whose tiles are fewer than the multiprocessors, or
only the tiles after WHOLE_TILES, the last partial wave of a product of a few waves, so that the last wave
keeps every multiprocessor busy (the vendor's gemm_persistent rules choose both). The epilogue adds alpha,
beta * bias and casts in registers: one pass over the output.

- **TMA mode** (key "gemm_tma"): operand tiles come through tensor descriptors the kernel builds itself
  (``tl.make_tensor_descriptor``: Hopper's bulk tensor copies, out-of-bounds elements zero-filled, so no
  masks and no wrapped indices). SCHEDULE picks the loop: warp-specialized (triton 3.6's Hopper pass: a
  producer warp group issues the copies, running ahead across tiles, and two consumer warp groups own
  BLOCK_M / 2 rows each; it needs num_warps 4 and BLOCK_M >= 128, and the program then has 12 warps), or
  one flattened software pipeline over every (tile, K step) of the program. The descriptors live in
  global scratch that Triton's launcher allocates per launch through ``triton.set_allocator``; the native
  layer's C++ launch allocates the same bytes per replay. The vendor's ``gemm_route`` heuristics
  (TMA_MIN_FLOPS) say from which product size this mode beats the pointer mode.
- **Pointer mode** (key "gemm_persistent"): the same loop with plain loads (any strides; rows and columns
  past the edge wrap onto valid ones, as in gemm.py). No scratch, so the native layer replays it: the
  products between PERSISTENT_MIN_FLOPS and TMA_MIN_FLOPS, and large ones TMA cannot read.

Tuning is per power of two of M, N and K and per operand layout, not per shape: a model's sequence lengths
share their power of two's tuning. (Until 2026-11-28 it was 18 classes of the three sizes, too coarse: on an H200
2048 x 4096 -> 1024 ran a config tuned for another product of its class at 0.70 of cuBLAS, against 0.87 with its
own best; 2048 x 3072 -> 768 + bias 0.62 against 0.75.)
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl
from triton.runtime import _allocation

from gems.ops.blas.products import INT32_SAFE, epilogue, kernel_scalars, span
from gems.ops.blas.tuning import Tuned, multiprocessors
from gems.runtime import selection
from gems.runtime.launch import Launcher, cdiv

# SCHEDULE values (META of the yaml configs): how the tile loop is compiled.
SPECIALIZED = tl.constexpr(1)  # warp-specialized: TMA producer + two consumer warp groups (TMA mode, num_warps 4)
FLATTENED = tl.constexpr(2)  # the (tile, K step) loop nest flattened into one software pipeline
PLAIN = tl.constexpr(3)  # each tile's K loop pipelined on its own
# The dtypes these kernels take: 16-bit operands on the tensor cores (fp32 and fp64 stay on gemm.py's GEMM,
# whose FMA and TF32 paths read copied operands).
DTYPES = (torch.float16, torch.bfloat16)
# Tensor descriptors need 16-byte aligned rows and base addresses.
_TMA_ALIGN = 16
# Rows of a split tile each program of the second pass adds (ROWS x BLOCK_N fp32 sums in registers).
_FINISH_ROWS = 32


@triton.jit
def _tile_coords(tile, grid_m, grid_n, GROUP_M: tl.constexpr):
    """(row block, column block) of ``tile``: GROUP_M tile rows at a time, column-major inside a group."""
    width = GROUP_M * grid_n
    first_m = (tile // width) * GROUP_M
    group_rows = tl.minimum(grid_m - first_m, GROUP_M)
    return first_m + (tile % width) % group_rows, (tile % width) // group_rows


@triton.jit
def _persistent_kernel(
    a_ptr, b_ptr, c_ptr, bias_ptr, part_ptr,
    M, N, K,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn, stride_im, stride_in,
    alpha, beta,
    HAS_BIAS: tl.constexpr, SCALED: tl.constexpr, BIAS_ROW: tl.constexpr, INT64: tl.constexpr,
    TMA: tl.constexpr, A_K_MAJOR: tl.constexpr, B_K_MAJOR: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    SCHEDULE: tl.constexpr, EVEN_K: tl.constexpr, SPLIT_K: tl.constexpr, WHOLE_TILES,
):
    """c[m, n] = alpha * sum_k a[m, k] * b[k, n] + beta * bias[m, n] (fp32 accumulation).

    Grid: (programs,), at most one per multiprocessor; program p takes work units p, p + programs, ... The
    first WHOLE_TILES tiles (in visiting order) are a unit each, over all of K; with SPLIT_K > 1 each later
    tile is SPLIT_K units (unit WHOLE_TILES + u: tile WHOLE_TILES + u % split_tiles, K run u // split_tiles),
    which write their partial sums to part (:func:`_finish_tiles` adds them). TMA mode reads a K-major a
    (``A_K_MAJOR``: a[m, k] row-major, else a^T row-major) and b likewise (``B_K_MAJOR``: b^T row-major, linear's
    W). BIAS_ROW: the bias varies along n only (a broadcast row, linear's bias), loaded once per tile as a row.
    """
    grid_m = tl.cdiv(M, BLOCK_M)
    grid_n = tl.cdiv(N, BLOCK_N)
    tiles = grid_m * grid_n
    steps = tl.cdiv(K, BLOCK_K)
    run = tl.cdiv(steps, SPLIT_K)  # K steps per unit of a split tile
    split_tiles = tiles - WHOLE_TILES
    units = tiles if SPLIT_K == 1 else WHOLE_TILES + split_tiles * SPLIT_K
    if TMA:
        if A_K_MAJOR:
            a_desc = tl.make_tensor_descriptor(a_ptr, [M, K], [stride_am, 1], [BLOCK_M, BLOCK_K])
        else:
            a_desc = tl.make_tensor_descriptor(a_ptr, [K, M], [stride_ak, 1], [BLOCK_K, BLOCK_M])
        if B_K_MAJOR:
            b_desc = tl.make_tensor_descriptor(b_ptr, [N, K], [stride_bn, 1], [BLOCK_N, BLOCK_K])
        else:
            b_desc = tl.make_tensor_descriptor(b_ptr, [K, N], [stride_bk, 1], [BLOCK_K, BLOCK_N])
    offs_k = tl.arange(0, BLOCK_K)
    for unit in tl.range(tl.program_id(0), units, tl.num_programs(0), flatten=SCHEDULE == FLATTENED,
                         warp_specialize=SCHEDULE == SPECIALIZED):
        if SPLIT_K == 1:
            # unit, 0 and steps in forms the compiler does not fold, the code of the kernel before the tail split:
            # with a constant first step the flattened pipeline took 32 KB more shared memory and 28 more registers
            # (128 x 256, sm_90), with the plain unit 20 more registers (64 x 128).
            tile = unit % tiles
            first_step = (unit // tiles) * run
            last_step = tl.minimum(steps, first_step + run)
        else:
            later = tl.maximum(unit - WHOLE_TILES, 0)
            split = unit >= WHOLE_TILES
            tile = tl.where(split, WHOLE_TILES + later % tl.maximum(split_tiles, 1), unit)
            part_run = later // tl.maximum(split_tiles, 1)
            first_step = tl.where(split, part_run * run, 0)
            last_step = tl.where(split, tl.minimum(steps, first_step + run), steps)
        pid_m, pid_n = _tile_coords(tile, grid_m, grid_n, GROUP_M)
        offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
            offs_m = offs_m.to(tl.int64)
            offs_n = offs_n.to(tl.int64)
        if not TMA:
            # Rows and columns past the edge wrap onto valid ones: no M/N masks on the operand loads.
            a_rows = a_ptr + (offs_m % M)[:, None] * stride_am + offs_k[None, :] * stride_ak
            b_cols = b_ptr + offs_k[:, None] * stride_bk + (offs_n % N)[None, :] * stride_bn
        acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
        for step in range(first_step, last_step):
            k = step * BLOCK_K
            if TMA:
                if A_K_MAJOR:
                    a = a_desc.load([pid_m * BLOCK_M, k])
                else:
                    a = a_desc.load([k, pid_m * BLOCK_M]).T
                if B_K_MAJOR:
                    b = b_desc.load([pid_n * BLOCK_N, k]).T
                else:
                    b = b_desc.load([k, pid_n * BLOCK_N])
            elif EVEN_K:
                a = tl.load(a_rows + k * stride_ak)
                b = tl.load(b_cols + k * stride_bk)
            else:
                a = tl.load(a_rows + k * stride_ak, mask=offs_k[None, :] < K - k, other=0)
                b = tl.load(b_cols + k * stride_bk, mask=offs_k[:, None] < K - k, other=0)
            acc = tl.dot(a, b, acc, out_dtype=tl.float32)
        mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
        if SPLIT_K == 1:
            _store_tile(acc, c_ptr, bias_ptr, offs_m, offs_n, mask, M, N, stride_cm, stride_cn, stride_im, stride_in,
                        alpha, beta, HAS_BIAS, SCALED, BIAS_ROW)
        else:
            # Masked stores rather than a branch: the flattened loop's pipeline keeps one body. The unit's kind
            # enters the masks as a row bound (a scalar bool and-ed with a tile is an int32 mask under triton 3.9's
            # interpreter, which its stores refuse).
            whole_mask = (offs_m[:, None] < tl.where(split, 0, M)) & (offs_n[None, :] < N)
            _store_tile(acc, c_ptr, bias_ptr, offs_m, offs_n, whole_mask, M, N, stride_cm, stride_cn,
                        stride_im, stride_in, alpha, beta, HAS_BIAS, SCALED, BIAS_ROW)
            first = (part_run * tl.maximum(split_tiles, 1) + tile - WHOLE_TILES) * BLOCK_M
            if INT64:  # unreached on the interpreter: partial sums past 2^31 elements
                first = first.to(tl.int64)
            tile_rows = tl.arange(0, BLOCK_M)
            tile_cols = tl.arange(0, BLOCK_N)
            part_ptrs = part_ptr + (first + tile_rows)[:, None] * BLOCK_N + tile_cols[None, :]
            split_mask = (tile_rows[:, None] < tl.where(split, BLOCK_M, 0)) & (tile_cols[None, :] < BLOCK_N)
            tl.store(part_ptrs, acc, mask=split_mask)


@triton.jit
def _store_tile(acc, c_ptr, bias_ptr, offs_m, offs_n, mask, M, N, stride_cm, stride_cn, stride_im, stride_in, alpha,
                beta, HAS_BIAS: tl.constexpr, SCALED: tl.constexpr, BIAS_ROW: tl.constexpr):
    """c[offs_m, offs_n] = alpha * acc + beta * bias where ``mask``, cast to c's dtype. A bias row is loaded
    as one row (a mask of the tile's shape would load it as a whole tile: 74 more registers at 128 x 256)."""
    if BIAS_ROW:
        bias_ptrs, bias_mask = bias_ptr + offs_n[None, :] * stride_in, offs_n[None, :] < N
    else:
        bias_ptrs, bias_mask = bias_ptr + offs_m[:, None] * stride_im + offs_n[None, :] * stride_in, mask
    acc = epilogue(acc, bias_ptrs, bias_mask, alpha, beta, HAS_BIAS, SCALED, False, tl.float32)
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _finish_tiles(
    part_ptr, c_ptr, bias_ptr,
    M, N, stride_cm, stride_cn, stride_im, stride_in, alpha, beta, WHOLE_TILES,
    HAS_BIAS: tl.constexpr, SCALED: tl.constexpr, BIAS_ROW: tl.constexpr, INT64: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr, SPLIT_K: tl.constexpr,
    ROWS: tl.constexpr,
):
    """The split tiles' second pass: c = alpha * sum_s part[s] + beta * bias, the runs added in order s = 0, 1, ...
    Grid: (split tiles, BLOCK_M / ROWS); part[s, t] holds split tile t's BLOCK_M x BLOCK_N partial sum of run s."""
    grid_m = tl.cdiv(M, BLOCK_M)
    grid_n = tl.cdiv(N, BLOCK_N)
    split_tiles = grid_m * grid_n - WHOLE_TILES
    t = tl.program_id(0)
    pid_m, pid_n = _tile_coords(WHOLE_TILES + t, grid_m, grid_n, GROUP_M)
    rows = tl.program_id(1) * ROWS + tl.arange(0, ROWS)
    offs_m = pid_m * BLOCK_M + rows
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    first = t * BLOCK_M
    step = split_tiles * BLOCK_M
    if INT64:  # unreached on the interpreter: partial sums past 2^31 elements
        first = first.to(tl.int64)
        step = step.to(tl.int64)
    part_ptrs = part_ptr + (first + rows)[:, None] * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]
    total = tl.load(part_ptrs)
    for _ in range(1, SPLIT_K):
        part_ptrs += step * BLOCK_N
        total += tl.load(part_ptrs)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    _store_tile(total, c_ptr, bias_ptr, offs_m, offs_n, mask, M, N, stride_cm, stride_cn, stride_im, stride_in,
                alpha, beta, HAS_BIAS, SCALED, BIAS_ROW)


_finish = Launcher(_finish_tiles)


def _tuned(key: str, rules: dict):
    # Tuned per power of two of M, N and K (Tuned.key) and per layout: a K-major b (linear's W^T) and a row-major
    # one tune apart.
    return Tuned(selection.current().autotune(
        key, ["M", "N", "K", "A_K_MAJOR", "B_K_MAJOR"],
        restore_value=["c_ptr"],  # tuning runs the kernel repeatedly; an in-place c is also its bias
    )(triton.heuristics(rules)(_persistent_kernel)), scratch=("part_ptr",))


# Both modes split K by the vendor's gemm_persistent rule (TMA zero-fills a K run's last partial step).
_tma = _tuned("gemm_tma", {"EVEN_K": lambda args: True, **selection.current().heuristics("gemm_persistent")})
_pointer = _tuned("gemm_persistent", {"EVEN_K": lambda args: args["K"] % args["BLOCK_K"] == 0,
                                      **selection.current().heuristics("gemm_persistent")})
# The vendor's thresholds (estimated device work, 2*M*N*K): TMA_MIN_FLOPS for the TMA mode, and
# PERSISTENT_MIN_FLOPS for the pointer mode (smaller products stay on gemm.py's GEMM).
_ROUTE = selection.current().heuristics("gemm_route")


def _k_major(t: torch.Tensor, inner: int):
    """Whether the 2-D operand ``t`` is read K-major (``inner`` is its K dimension: 1 for a, 0 for b), and
    whether a tensor descriptor can read it (one unit stride, the other a positive multiple of 16 bytes,
    a 16-byte aligned start)."""
    k_major = t.stride(inner) == 1
    unit, major = (inner, 1 - inner) if k_major else (1 - inner, inner)
    stride = t.stride(major)
    ready = (t.stride(unit) == 1 and stride > 0 and stride * t.element_size() % _TMA_ALIGN == 0
             and t.data_ptr() % _TMA_ALIGN == 0)
    return k_major, ready


def mode(a: torch.Tensor, b: torch.Tensor, dtype: torch.dtype) -> str | None:
    """"tma", "pointer" or None (gemm.py's GEMM) for the 2-D product a (M, K) @ b (K, N)."""
    if dtype not in DTYPES:
        return None
    (m, k), n = a.shape, b.shape[1]
    (a_k_major, a_ready), (b_k_major, b_ready) = _k_major(a, 1), _k_major(b, 0)
    # A_K_MAJOR and B_K_MAJOR: the forward layout of a linear layer (x @ W^T) has both; its backward
    # products (g @ W, g^T @ x) have one or none.
    args = {"M": m, "N": n, "K": k, "A_K_MAJOR": a_k_major, "B_K_MAJOR": b_k_major}
    flops = 2 * m * n * k
    if flops < _ROUTE["PERSISTENT_MIN_FLOPS"](args):
        return None
    if flops >= _ROUTE["TMA_MIN_FLOPS"](args) and a_ready and b_ready:
        return "tma"
    return "pointer"


def _scratch(size: int, alignment: int, stream):
    return torch.empty(size, dtype=torch.int8, device="cuda")


def product(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor, bias=None, alpha=1, beta=0, how="pointer"):
    """out = alpha * (a @ b) + beta * bias for 2-D a (M, K), b (K, N), out (M, N), bias None or expanded to
    out's shape, in the load mode ``how`` (:func:`mode`)."""
    m, n = out.shape
    k = a.shape[1]
    has_bias = bias is not None and beta != 0
    alpha, beta, scaled, _ = kernel_scalars(alpha, beta, out.dtype, has_bias)
    bias = bias if has_bias else out
    tma = how == "tma"
    kernel = _tma if tma else _pointer
    if tma:
        if (out.is_cuda  # unreached on the interpreter: CUDA
                and _allocation._allocator.get() is _allocation._NULL_ALLOCATOR):
            # A context variable: unset in a thread that never set it (autograd's backward threads).
            triton.set_allocator(_scratch)

    def arguments(part, int64):
        return (a, b, out, bias, part, m, n, k, *a.stride(), *b.stride(), *out.stride(), *bias.stride(), alpha,
                beta, has_bias, scaled, bias.stride(0) == 0, int64, tma, _k_major(a, 1)[0],
                _k_major(b, 0)[0])

    named = dict(zip(kernel.names, arguments(None, False)))
    config = kernel.chosen.get(kernel.key(named))
    # Room for the partial sums of the chosen config's split tiles, or, before tuning, of any config's.
    configs = [config] if config is not None else kernel.autotuner.configs
    size = max(_partial_elements(kernel.meta(c, named), m, n) for c in configs)
    part = torch.empty(size, dtype=torch.float32, device=out.device) if size else out
    int64 = max(span(t) for t in (a, b, out, bias)) > INT32_SAFE or size > INT32_SAFE
    units = multiprocessors(out.device)
    grid = lambda meta: (min(units, _units(meta, m, n)),)  # noqa: E731
    meta = kernel.launch(grid, *arguments(part, int64))
    if meta["SPLIT_K"] > 1:
        split_tiles = _tiles(meta, m, n) - meta["WHOLE_TILES"]
        rows = min(meta["BLOCK_M"], _FINISH_ROWS)
        _finish((split_tiles, meta["BLOCK_M"] // rows),
            part, out, bias, m, n, *out.stride(), *bias.stride(), alpha, beta, meta["WHOLE_TILES"], has_bias, scaled,
            bias.stride(0) == 0, int64, meta["BLOCK_M"], meta["BLOCK_N"], meta["GROUP_M"], meta["SPLIT_K"], rows,
            num_warps=4)
    return out


def _tiles(meta, m, n):
    return cdiv(m, meta["BLOCK_M"]) * cdiv(n, meta["BLOCK_N"])


def _units(meta, m, n):
    """Work units of a launch: each whole tile, and SPLIT_K per split tile."""
    tiles = _tiles(meta, m, n)
    if meta["SPLIT_K"] == 1:
        return tiles
    return meta["WHOLE_TILES"] + (tiles - meta["WHOLE_TILES"]) * meta["SPLIT_K"]


def _partial_elements(meta, m, n):
    """fp32 partial sums a launch writes: a BLOCK_M x BLOCK_N tile per K run of each split tile."""
    if meta["SPLIT_K"] == 1:
        return 0
    return meta["SPLIT_K"] * (_tiles(meta, m, n) - meta["WHOLE_TILES"]) * meta["BLOCK_M"] * meta["BLOCK_N"]

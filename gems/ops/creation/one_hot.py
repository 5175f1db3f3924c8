"""one_hot: ``out[..., c] = (self[...] == c)`` as int64, with ``num_classes`` columns (-1: the largest class + 1).

ATen's one_hot is CompositeImplicitAutograd (zeros, then a scatter_ of ones); its result is an integer tensor
with no gradient, so gems registers it above the backend key (Autograd.enable, as rms_norm is) and writes the
whole result in one tiled pass. ATen's checks: an int64 input; an empty input needs num_classes; on devices that
do not rely on a device assert (the CPU: not CUDA, MPS, XLA or an out-of-tree device), the classes must be in
[0, num_classes), read back on the host as ATen reads them. num_classes=-1 reads the largest class back (ATen
too), so that call synchronizes. The smallest and largest class come from gems' min and max reductions.
"""

import torch
import triton
import triton.language as tl

from gems.ops.copy.shared import INT32_LIMIT, tile_config, tile_offsets
from gems.ops.reduction.max import max_all
from gems.ops.reduction.min import min_all
from gems.runtime.launch import Launcher, cdiv
from gems.spec import OpSpec, lazy, lazy_perf

# Devices whose ATen one_hot checks no class value on the host (a device assert in scatter_ stands instead).
_ASSERTING_DEVICES = ("cuda", "mps", "xla")
_HOST_CHECKED = ("negative-class-error", "class-too-large-error")  # sample variants only the CPU's checks refuse


@triton.jit(do_not_specialize=["n_rows", "n_classes", "tiles_n"])
def _one_hot_kernel(index_ptr, out_ptr, n_rows, n_classes, tiles_n, stride_index, INT64: tl.constexpr,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """One [BLOCK_M, BLOCK_N] tile of out[r, c] = (index[r] == c); out is [n_rows, n_classes], contiguous; index a
    1-D run of any stride (a strided or expanded 1-D input stays a view)."""
    pid = tl.program_id(0)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        pid = pid.to(tl.int64)
    offs_m, offs_n = tile_offsets(pid, tiles_n, BLOCK_M, BLOCK_N)
    index = tl.load(index_ptr + offs_m * stride_index, mask=offs_m < n_rows, other=-1)
    values = (index[:, None] == offs_n[None, :]).to(tl.int64)
    mask = (offs_m < n_rows)[:, None] & (offs_n < n_classes)[None, :]
    tl.store(out_ptr + offs_m[:, None] * n_classes + offs_n[None, :], values, mask=mask)


_one_hot = Launcher(_one_hot_kernel)


def _checks_on_host(device) -> bool:
    return device.type not in (*_ASSERTING_DEVICES, torch._C._get_privateuse1_backend_name())


def one_hot(self, num_classes=-1):
    if self.dtype != torch.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if self.numel() == 0:
        if num_classes <= 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        return torch.empty((*self.shape, num_classes), dtype=torch.int64, device=self.device)
    checked = _checks_on_host(self.device)
    if checked and min_all(self).item() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        num_classes = max_all(self).item() + 1
    elif checked and num_classes <= max_all(self).item():
        raise RuntimeError("Class values must be smaller than num_classes.")
    elif not checked and num_classes < 1:
        raise RuntimeError("num_classes should be positive")
    out = torch.empty((*self.shape, num_classes), dtype=torch.int64, device=self.device)
    index = self.reshape(-1)
    rows = index.numel()
    block_m, block_n, num_warps = tile_config(rows, num_classes, 8, False)
    tiles_n = cdiv(num_classes, block_n)
    _one_hot((cdiv(rows, block_m) * tiles_n,), index, out, rows, num_classes, tiles_n, index.stride(0),
             out.numel() > INT32_LIMIT, block_m, block_n, num_warps=num_warps)
    return out


SPECS = [
    OpSpec(
        name="one_hot", family="creation", impls={"one_hot": one_hot}, autograd_enabled=("one_hot",),
        call=torch.nn.functional.one_hot, samples=lazy("gems.testing.samples_copy", "one_hot_samples"),
        dtypes=(torch.int64,), tolerance="exact",
        skips={("nvidia", "int64", variant): "ATen's CUDA one_hot checks no class on the host: its scatter_ fails a "
               "device assert, which ends the process" for variant in _HOST_CHECKED},
        perf=lazy_perf("gems.testing.samples_copy", "one_hot_perf", shapes="pointwise"),
    ),
]

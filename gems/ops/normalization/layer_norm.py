"""layer_norm: ``native_layer_norm`` and ``native_layer_norm_backward`` (what torch.nn.functional.layer_norm
and its autograd reach), one row kernel each way (gems/ops/normalization/rows.py).

    y = (x - mean) * rstd * w + b,   rstd = 1 / sqrt(var + eps),   over the last len(normalized_shape) dims

mean and rstd come back with the normalized dims kept as 1s, in the dtype ATen's kernel of the device
uses: the input's on CPU, fp32 for fp16/bf16 inputs on other devices (CUDA's accumulate type).
"""

from __future__ import annotations

import torch

from gems.dtypes import FLOATS
from gems.ops.normalization.rows import as_rows, normalized_numel, row_forward
from gems.ops.normalization.rows_backward import row_backward
from gems.runtime.registration import Fallback
from gems.spec import OpSpec, PerfSpec, lazy


def stats_dtype(x: torch.Tensor) -> torch.dtype:
    if x.device.type == "cpu" or x.dtype == torch.float64:
        return x.dtype
    return torch.float32  # unreached on the interpreter: the CPU's keep the input's dtype


def _check_dtypes(x, *params):
    if x.dtype not in FLOATS:
        raise Fallback(f"layer norm of {x.dtype} is not handled by gems")
    if any(p is not None and p.dtype != x.dtype for p in params):
        raise Fallback("layer norm with weight/bias of another dtype than the input (mixed precision) is left to ATen")


# --------------------------------------------------------------------------- ATen overloads


def native_layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    n_cols = normalized_numel(input, normalized_shape, weight, bias)
    _check_dtypes(input, weight, bias)
    if n_cols == 0:
        raise Fallback("rows of zero length: ATen's statistics of nothing differ per device")
    x2 = as_rows(input, n_cols)
    y, _, mean, rstd = row_forward(x2, eps, rms=False, weight=weight, bias=bias, stats_dtype=stats_dtype(input))
    stat_shape = list(input.shape[: input.dim() - len(normalized_shape)]) + [1] * len(normalized_shape)
    return y.view(input.shape), mean.view(stat_shape), rstd.view(stat_shape)


def native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias, output_mask):
    n_cols = normalized_numel(input, normalized_shape, weight, bias)
    _check_dtypes(input, grad_out, weight, bias)
    if n_cols == 0:
        raise Fallback("rows of zero length")
    if grad_out.shape != input.shape:
        raise RuntimeError(f"grad_out of shape {list(grad_out.shape)} does not match input of shape "
                           f"{list(input.shape)}")
    mask = (output_mask[0], output_mask[1] and weight is not None, output_mask[2] and bias is not None)
    dx, dw, db = row_backward(as_rows(grad_out, n_cols), as_rows(input, n_cols), mean.reshape(-1),
                              rstd.reshape(-1), weight, rms=False, mask=mask, dx_dtype=input.dtype)
    return (dx.view(input.shape) if dx is not None else None, dw.view(weight.shape) if dw is not None else None,
            db.view(bias.shape) if db is not None else None)


SPECS = [
    OpSpec(
        name="layer_norm", family="normalization",
        impls={"native_layer_norm": native_layer_norm, "native_layer_norm_backward": native_layer_norm_backward},
        call=torch.nn.functional.layer_norm,
        samples=lazy("gems.testing.samples_norm", "layer_norm_samples"),
        dtypes=FLOATS,
        tolerance="reduction",
        perf=PerfSpec(inputs=lazy("gems.testing.samples_norm", "row_norm_inputs", "layer_norm"), shapes="layer_norm",
                      bytes=lazy("gems.testing.samples_norm", "io_bytes")),
        no_launch={"backward-empty": "no rows: the weight and bias gradients are zeros, an allocation fill"},
    ),
]

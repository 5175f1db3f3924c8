"""scatter: ``scatter.src``, ``scatter.value`` and, with ``reduce="add"`` or ``"multiply"``,
``scatter.reduce`` and ``scatter.value_reduce``; their ``_out`` forms and the in-place ``scatter_``
forms (12 overloads): self[i][index[i][j][k]][k] = src[i][j][k] (or the value) for dim 1, or combined
with it by the reduction. scatter_reduce.py has the newer reductions; scatter_add.py is reduce="add".

walk.py's scatter over index's shape. Without a reduction, equal indices each store their value and
which one stays is unspecified, as in ATen (its samples check that the result is one of the written
values: Sample.tie_check). With a reduction, atomics combine them (walk.accumulate).
"""

from __future__ import annotations

import torch
import triton.language as tl  # noqa: F401  (kernel modules import it: the interpreter needs it)

from gems.dtypes import ALL
from gems.ops.indexing.shared import (
    check_gather_scatter,
    check_no_overlap,
    check_no_overlap_with,
    cuda_asserts,
    prepare_out,
    scalar_of,
)
from gems.ops.indexing.walk import ADD, MAX, MIN, MUL, STORE, accumulate, along, copy_op, over
from gems.ops.indexing.walk import scatter as scatter_kernel
from gems.ops.reduction.planning import wrap_dim
from gems.spec import OpSpec, lazy_perf

REDUCTIONS = {"add": ADD, "multiply": MUL}
# Bool products, maxima and minima: ATen's CUDA kernels refuse them (NotImplementedError, unless nothing is
# scattered) where its CPU kernels compute them; gems on an accelerator refuses them as CUDA does.
BOOL_REFUSED = (MUL, MAX, MIN)

# --------------------------------------------------------------------------- ATen overloads


def scatter_into(op, self, dim, index, src, value, mode, out, include_self=True):
    """out = self with src (or ``value``) scattered along ``dim`` by ``mode`` (walk.STORE, a reduction, or
    "mean"); out may be self. Shared with scatter_add and scatter_reduce."""
    dim = wrap_dim(dim, self.dim())
    check_gather_scatter(op, self, dim, index, src)
    if out is self:
        check_no_overlap(self)
        check_no_overlap_with(self, index, src)
    if src is None:
        value = scalar_of(value, self.dtype)
    sizes, layout = tuple(index.shape), along(index, dim)
    src_strides = None if src is None else over(src, index.dim())
    if self.dtype is torch.bool and mode in BOOL_REFUSED and self.device.type != "cpu" and index.numel():
        kernel = "cuda_scatter_gather_base_kernel_func" if src is not None else \
            "cuda_scatter_fill_base_kernel_reduce_multiply"
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')
    if mode != STORE:
        return accumulate(self, out, sizes, src, src_strides, layout, mode, value, include_self=include_self)
    if out is not self:
        copy_op(self, out=out)
    scatter_kernel(out, *layout(out), sizes, src, src_strides, STORE, value)
    return out


def _mode(reduce):
    if reduce not in REDUCTIONS:
        raise RuntimeError("reduce argument must be either add or multiply.")
    return REDUCTIONS[reduce]


def scatter_src(self, dim, index, src):
    return scatter_into("scatter", self, dim, index, src, None, STORE, torch.empty_like(self))


def scatter_value(self, dim, index, value):
    return scatter_into("scatter", self, dim, index, None, value, STORE, torch.empty_like(self))


def scatter_reduce(self, dim, index, src, *, reduce):
    return scatter_into("scatter", self, dim, index, src, None, _mode(reduce), torch.empty_like(self))


def scatter_value_reduce(self, dim, index, value, *, reduce):
    return scatter_into("scatter", self, dim, index, None, value, _mode(reduce), torch.empty_like(self))


def scatter_src_(self, dim, index, src):
    return scatter_into("scatter", self, dim, index, src, None, STORE, self)


def scatter_value_(self, dim, index, value):
    return scatter_into("scatter", self, dim, index, None, value, STORE, self)


def scatter_reduce_(self, dim, index, src, *, reduce):
    return scatter_into("scatter", self, dim, index, src, None, _mode(reduce), self)


def scatter_value_reduce_(self, dim, index, value, *, reduce):
    return scatter_into("scatter", self, dim, index, None, value, _mode(reduce), self)


def scatter_src_out(self, dim, index, src, *, out):
    return scatter_into("scatter", self, dim, index, src, None, STORE, prepare_out(out, self, self.shape))


def scatter_value_out(self, dim, index, value, *, out):
    return scatter_into("scatter", self, dim, index, None, value, STORE, prepare_out(out, self, self.shape))


def scatter_reduce_out(self, dim, index, src, *, reduce, out):
    mode = _mode(reduce)
    return scatter_into("scatter", self, dim, index, src, None, mode, prepare_out(out, self, self.shape))


def scatter_value_reduce_out(self, dim, index, value, *, reduce, out):
    mode = _mode(reduce)
    return scatter_into("scatter", self, dim, index, None, value, mode, prepare_out(out, self, self.shape))


# --------------------------------------------------------------------------- samples


def _samples(dtype, device, quick):
    from gems.testing.samples_indexing import scatter_samples

    return scatter_samples(dtype, device, quick)


SPECS = [
    OpSpec(
        name="scatter", family="indexing",
        impls={"scatter.src": scatter_src, "scatter.value": scatter_value, "scatter.reduce": scatter_reduce,
               "scatter.value_reduce": scatter_value_reduce, "scatter_.src": scatter_src_,
               "scatter_.value": scatter_value_, "scatter_.reduce": scatter_reduce_,
               "scatter_.value_reduce": scatter_value_reduce_, "scatter.src_out": scatter_src_out,
               "scatter.value_out": scatter_value_out, "scatter.reduce_out": scatter_reduce_out,
               "scatter.value_reduce_out": scatter_value_reduce_out},
        call=torch.scatter, samples=_samples, dtypes=ALL,
        perf=lazy_perf("gems.testing.samples_indexing", "elementwise_perf", "scatter", shapes="index_elements"),
        skips=cuda_asserts("error-index-out-of-range", "error-index-negative"),
        # Measured on an H200 (2026-11-26): the warm call of every sample with equal indices differed from the
        # cold call, which the set-valued check (without reduce) and the oracle (with reduce) then accept.
        varies_between_runs={"*": "with equal indices, which store lands last (no reduce) or the order in which "
                                  "atomics combine (reduce) varies from run to run on a GPU, as in ATen's CUDA kernel"},
    ),
]

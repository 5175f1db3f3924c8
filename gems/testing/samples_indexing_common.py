"""Shared pieces of the indexing operators' sample generators (gems/testing/samples_indexing_*.py, and
samples_advanced_indexing.py): the dtype that runs the error variants, random indices with repeats,
out= calls, special values as rows, and the set-valued check of writes to duplicate targets."""

from __future__ import annotations

import torch

ERROR_DTYPE = torch.float32


def index(n, size, device, dtype=torch.int64, low=0):
    """``n`` random indices in [low, size) (with repeats)."""
    if str(device) == "meta":
        return torch.empty(n, dtype=dtype, device="meta")
    return torch.randint(low, max(size, low + 1), (n,), dtype=dtype).to(device)


def empty_out_call(call):
    """``call(*args, out=<empty tensor of the first argument's dtype>)``: the out= form of a call."""

    def with_out(*args):
        return call(*args, out=torch.empty(0, dtype=args[0].dtype, device=args[0].device))

    return with_out


def as_rows(values):
    """A special-values tensor as a 2-d (4, n/4) one."""
    return values.reshape(4, -1) if values.numel() % 4 == 0 else values.reshape(1, -1)


# --------------------------------------------------------------------------- set-valued checks


def one_of_written(targets):
    """Sample.tie_check for a write where equal targets each store a value and one of them stays:
    ``targets(args, kwargs) -> (self, flat target positions, values written there)``. The result must hold,
    bit for bit, one of the values written at each target, and self's value everywhere else."""
    from gems.testing.samples_sort import _bits

    def check(args, kwargs, outputs):
        self, where, values = targets(args, kwargs)
        result = outputs[-1]
        if result.shape != self.shape or result.dtype != self.dtype:
            return f"result {tuple(result.shape)} {result.dtype}, expected {tuple(self.shape)} {self.dtype}"
        got, before = _bits(result).reshape(-1), _bits(self).reshape(-1)
        untouched = torch.ones(got.numel(), dtype=torch.bool)
        untouched[where] = False
        if not torch.equal(got[untouched], before[untouched]):
            return f"{int((got[untouched] != before[untouched]).sum())} elements not written to differ from self"
        written = {}
        for place, value in zip(where.tolist(), _bits(values).reshape(-1).tolist()):
            written.setdefault(place, set()).add(value)
        wrong = [p for p, allowed in written.items() if got[p].item() not in allowed]
        return f"{len(wrong)} written elements hold none of the values written there" if wrong else ""

    return check


def scatter_targets(args, kwargs):
    """(self, targets, values) of scatter(self, dim, index, src or value)."""
    self, dim, index, src = args[:4]
    places = torch.arange(self.numel()).reshape(self.shape).gather(dim, index.long()).reshape(-1)
    if isinstance(src, torch.Tensor):
        values = src[tuple(slice(0, n) for n in index.shape)] if src.dim() else src
    else:
        values = torch.full(index.shape, src, dtype=self.dtype)
    return self, places, values.reshape(-1).expand(places.numel()) if values.numel() == 1 else values

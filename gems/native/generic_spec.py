"""The spec C++ stores for a size-generic plan (gems/native/generic.py derives it, gems/native/generic_fit.py
fits its formulas): the anchor plan with references to the size-dependent values, the checks that a call's
computed numbers specialize as the anchor's did (Triton's integer classes, pointer alignment), and the targets
each value patches (grid dims, kernel parameters, output sizes, strides and integer results, temporary bytes)."""

from __future__ import annotations

from gems.native.generic_fit import NoGeneric

# dispatch.cpp's TargetKind
_GRID, _PARAM, _PATCH, _OUT_SIZE, _OUT_STRIDE, _TEMP, _OUT_INT = 0, 3, 4, 5, 6, 7, 8


def _int_class(x: int) -> int:
    """dispatch.cpp's int_class: Triton's specialization of an integer argument."""
    if x == 1:
        return 1
    return 2 | (x % 16 == 0) << 2 | (-(2**31) <= x <= 2**31 - 1) << 3


def build_spec(plan, primitive, tensors, var, lo, hi, a, b, slots, numbers, formulas):
    """The size-generic spec C++ stores: (plan spec with references, var, lo, hi, a, b, formulas, checks,
    targets)."""
    values, refs = [], {}
    for slot, (fa, fb, fd) in zip(slots, formulas):
        if fa == 0:
            continue  # a constant: the anchor's own value stays in the plan
        if (fa, fb, fd) not in values:
            values.append((fa, fb, fd))
        refs[slot] = values.index((fa, fb, fd))
    anchor = dict(zip(slots, numbers))
    targets, checks = [], []
    fields = {}
    for slot, value in refs.items():
        kind = slot[0]
        if kind in ("osize", "ostride"):
            targets.append((_OUT_SIZE if kind == "osize" else _OUT_STRIDE, 0, slot[1], slot[2], value))
        elif kind == "temp":
            targets.append((_TEMP, 0, slot[1], 0, value))
        elif kind == "oint":
            targets.append((_OUT_INT, 0, slot[1], 0, value))
        elif kind == "arg":
            checks.append((0, value, -1, _int_class(anchor[slot])))
        elif kind == "delta":
            base = _base_input(plan, slot, tensors)
            address = 0 if base < 0 else tensors[base].data_ptr()
            checks.append((1, value, base, int((address + anchor[slot]) % 16 == 0)))
        if primitive != "cuda" or kind not in ("grid", "arg", "delta"):
            continue
        n = slot[1]
        if kind == "grid":
            targets.append((_GRID + slot[2], 0, n, 0, value))
            continue
        where = (fields.get(n) or fields.setdefault(n, plan.cuda_fields(n))).get(slot[2])
        if where is None:
            continue  # an argument Triton made a constant (== 1, which the checks keep) or a constexpr
        if where[0] == "param":
            targets.append((_PARAM, where[2], n, where[1], value))
        else:
            targets.append((_PATCH, 0, n, where[1], value))
    if len(values) > 64:
        raise NoGeneric(f"{len(values)} size-dependent numbers (at most 64)")
    return (plan.spec(primitive, refs), var, lo, hi, a, b, values, checks, targets)


def _base_input(plan, slot, tensors) -> int:
    """The input a tensor argument's offset is from, or -1 (a fresh output or temporary buffer: aligned)."""
    _, n, p = slot
    _, kind, index = plan.launches[n][4][p][:3]
    if kind == 0:
        return index
    if kind == 1 and plan.outs[index][0] == 1:
        return plan.outs[index][1]
    return -1

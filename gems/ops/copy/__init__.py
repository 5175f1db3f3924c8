"""Copies and fills: writing values into tensors that exist (copy_, fill_, zero_) and the copies that make a new
tensor from one (clone, _to_copy, t_copy, alias_copy, lift_fresh_copy, conj_physical; resolve_neg through clone).
One file per operator; the copy kernels, their layout planner and ATen's checks in ``shared.py``. Declared with
family "creation"."""

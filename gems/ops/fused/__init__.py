"""Fused operators, ``gems.fused`` (no ATen overload exists for them): one file per operator, each one Triton
kernel, declared with ``OpSpec(api=..., reference=<eager composite>)``; ``api.py`` makes each an operator of
gems' own library namespace (``torch.ops.gems.<name>``, replayed by the native layer) and counts its calls."""

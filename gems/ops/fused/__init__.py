"""Fused operators served as a Python API, ``gems.fused`` (no ATen overload exists for them): one file
per operator, each one Triton kernel, declared with ``OpSpec(api=..., reference=<eager composite>)``;
the counting wrapper in ``api.py``."""

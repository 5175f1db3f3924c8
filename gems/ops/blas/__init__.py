"""Matrix products and matrix structure: one file per operator; the shared GEMM and GEMV kernels,
their launchers and ATen's argument checks in ``gemm.py``; sample generators in ``samples.py``."""

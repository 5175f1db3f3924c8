"""Convolutions: one file per operator (``convolution``, ``convolution_backward``, ``conv_depthwise2d``);
the implicit-GEMM helpers, ATen's argument checks and the call geometry they share in ``implicit_gemm.py``;
sample generators in gems/testing/samples_conv.py."""

"""Interpreter-specific operator overrides: none; what the interpreter lacks is patched in interpreter_support."""


def get_specific_ops():
    return []


def get_unused_ops():
    # ATen has no CPU kernel for _conv_depthwise2d (a CUDA-only backend kernel of convolution), so there is
    # no kernel to fall back to, nor a reference; CPU convolutions reach gems through ``convolution``.
    return ["_conv_depthwise2d"]

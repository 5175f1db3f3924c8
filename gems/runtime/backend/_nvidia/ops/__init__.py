"""NVIDIA-specific operator overrides: none yet, the default kernels are written for this vendor."""


def get_specific_ops():
    return []


def get_unused_ops():
    return []

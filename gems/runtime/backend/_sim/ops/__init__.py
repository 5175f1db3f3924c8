"""Simulated-device overrides: none; it runs the interpreter vendor's kernels."""


def get_specific_ops():
    return []


def get_unused_ops():
    return []

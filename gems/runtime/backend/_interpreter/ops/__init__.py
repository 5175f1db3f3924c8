"""Interpreter-specific operator overrides: none; what the interpreter lacks is patched in interpreter_support."""


def get_specific_ops():
    return []


def get_unused_ops():
    return []

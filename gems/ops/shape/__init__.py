"""Concatenation, shape and padding: output-indexed copies (one file per operator; what they share is in
remap.py, the kernel that maps each output element to one source element, and in checks.py)."""

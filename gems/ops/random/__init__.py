"""Random operators (placeholder docstring, written at the end)."""

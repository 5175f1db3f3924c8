"""Sorting: ``sort`` (sort.py) and ``topk`` (topk.py), with their shared bitonic network, keys and
long-row merge in ``bitonic.py``."""

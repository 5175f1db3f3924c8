"""Sorting: ``sort`` (sort.py) and ``topk`` (topk.py), with their shared bitonic network and long-row merge in
``bitonic.py``, the radix sort of long rows in ``radix.py`` and the keys all of them sort by in ``keys.py``."""

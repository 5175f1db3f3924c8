"""Reductions, scans and row-wise operators (softmax): one file per operator, shared planning in
``planning.py``."""

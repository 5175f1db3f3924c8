"""Factories (ones, zeros, full, arange and the ``*_like`` forms): one file per operator, the fill
kernel and the checks they share in ``fill.py``."""

"""Operators whose result size depends on the values: nonzero, unique_consecutive, _unique2 (torch.unique),
and quantile's declaration (a composite of sort). What they share is in scan_scatter.py."""

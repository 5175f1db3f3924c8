"""Indexing operators: index_select, embedding and its backward, index.Tensor, index_put, index_add,
gather, scatter, scatter_add, scatter_reduce, masked_select, masked_scatter. What they share is in
shared.py (argument checks, the host-side index check, the walk over up to four dims) and walk.py (the
gather and scatter kernels every dim-indexed operator runs)."""

"""Indexing operators: index_select, embedding and its backward, index.Tensor, index_put, index_add,
gather (and gather_backward's declaration), scatter, scatter_add, scatter_reduce, masked_select,
masked_scatter. What they share: shared.py (ATen's argument checks, the check of index values, the walk
over up to four dims), walk.py (the gather and scatter kernels every dim-indexed operator runs),
advanced.py (advanced indexing for index.Tensor and index_put) and segments.py (sums of rows by
index: sorted for embedding_dense_backward, chained for the accumulations of dtypes without atomics)."""

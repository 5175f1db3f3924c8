"""Normalizations (layer, group, batch, RMS, weight norm): one file per operator, the row kernels that
layer_norm, rms_norm and the fused operators share in ``rows.py``."""

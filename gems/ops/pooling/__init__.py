"""Pooling and upsampling: window and adaptive pooling (avg, max) and nearest / linear / cubic / anti-aliased
resampling, forward and backward (one file per operator; what they share is in shared.py, the kernels in
window.py, adaptive.py, resample.py and antialias.py, ATen's checks and the declarations of the upsampling
operators in upsampling.py)."""

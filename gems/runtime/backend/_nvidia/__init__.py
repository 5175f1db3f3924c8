"""NVIDIA GPUs through CUDA: the reference vendor every other backend can inherit from."""

from gems.runtime.vendor import Capabilities, VendorInfoBase

vendor_info = VendorInfoBase(
    vendor_name="nvidia",
    device_name="cuda",
    device_query_cmd="nvidia-smi",
    dispatch_key="CUDA",
)

capabilities = Capabilities(ordered_zeros=True)  # CUDA ATen max/min: fmaxf/fminf

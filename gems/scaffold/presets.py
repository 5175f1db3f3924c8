"""What gems-scaffold fills in for the vendors whose engineers use it most: the accelerators the
reference Triton operator library (FlagGems) supports. Each preset is a fact table, not code from
there: the torch device type, the command that finds the device, the dispatch key.

Source, checked on 2026-11-22: the ``vendor_info`` each vendor declares in FlagGems'
``src/flag_gems/runtime/backend/_<vendor>/__init__.py`` (github.com/FlagOpen/FlagGems and its
flagos-ai successor, as stored by the project's search tool). Where those files are silent or
disagree, ``unverified`` says what could not be confirmed; gems-scaffold prints it.
"""

from __future__ import annotations

from dataclasses import dataclass

SOURCE = "FlagGems src/flag_gems/runtime/backend/_<vendor>/__init__.py (vendor_info), checked 2026-11-22"


@dataclass(frozen=True)
class Preset:
    device_name: str  # the torch device type its tensors live on
    query_cmd: str  # succeeds only where the device is present
    dispatch_key: str
    unverified: str = ""  # what the source does not establish


PRESETS = {
    # Out-of-tree devices: the vendor's PyTorch plugin registers its device on PrivateUse1.
    "ascend": Preset("npu", "npu-smi info", "PrivateUse1",
                     "one older FlagGems revision names PrivateUse2; torch_npu registers npu as PrivateUse1"),
    "cambricon": Preset("mlu", "cnmon", "PrivateUse1"),
    "mthreads": Preset("musa", "mthreads-gmi", "PrivateUse1"),
    "tsingmicro": Preset("txda", "tsm_smi", "PrivateUse1"),
    "aipu": Preset("aipu", "aipu", "PrivateUse1",
                   "the source names no dispatch key (PrivateUse1 is derived from the out-of-tree device) and uses "
                   "'aipu' itself as the query command"),
    # CUDA-compatible software stacks: their PyTorch builds present the device as cuda.
    "iluvatar": Preset("cuda", "ixsmi", "CUDA"),
    "metax": Preset("cuda", "mx-smi", "CUDA"),
    "kunlunxin": Preset("cuda", "xpu-smi", "CUDA"),
    "hygon": Preset("cuda", "rocm-smi", "CUDA",
                    "newer DTK releases ship hy-smi beside rocm-smi; the source uses rocm-smi"),
    # A CPU vendor: the source's query (cat /proc/cpuinfo) succeeds on every Linux machine, which would make
    # detection pick it on x86 too; gems asks for an aarch64 machine instead.
    "arm": Preset("cpu", "test \"$(uname -m)\" = aarch64", "CPU",
                  "the query command is gems' own (the source's, cat /proc/cpuinfo, succeeds on any Linux)"),
}

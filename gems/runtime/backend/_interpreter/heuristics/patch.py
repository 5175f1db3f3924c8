"""triton.heuristics-style rule of gems.patch (key "patch_fusion", args: numel, the elements of a patched module's
activation): every call with an element takes the fused kernel here. The interpreter and the simulated device
exist to check the fused kernels' answers, which the patched tiny models of CI compare with the unpatched ones."""

HEURISTICS_CONFIGS = {
    "patch_fusion": {"MIN_NUMEL": lambda args: 1},
}

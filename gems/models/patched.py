"""``gems-perf --model NAME --patched``: the model under gems.patch (fused kernels with their backward) as a
third side beside ATen and unpatched gems: its answers against the same reference, its speed in the same
alternating rounds, and every side's peak memory (``torch.cuda.max_memory_allocated`` of one run per side with
no other side's state alive, speed.peak_memory; on a device without CUDA's allocator statistics, not measured).
"""

from __future__ import annotations

import contextlib


class Patching:
    """Patches models for the patched side and keeps the first patch's report."""

    def __init__(self):
        self.report = None

    def apply(self, model):
        """``model`` patched in place (and returned)."""
        import gems

        report = gems.patch(model)
        self.report = self.report or report
        return model

    def context(self, model):
        """The patched side's context for timing: ``model`` patched inside the block, unpatched after it, so
        the other sides run the model as built."""

        @contextlib.contextmanager
        def patched():
            import gems

            self.apply(model)
            try:
                yield
            finally:
                gems.unpatch(model)

        return patched

    def summary(self, memory_measured: bool) -> dict:
        """models.json's ``patched`` entry: what was patched and left, and whether memory was measured."""
        report = self.report
        return {
            "report": str(report) if report else "",
            "patched": [list(row) for row in report.patched] if report else [],
            "left": [list(row) for row in report.left] if report else [],
            "memory": ("torch.cuda.max_memory_allocated of one run per side, after the timing rounds, each side "
                       "alone (the model, the side's own state: optimizer moments, KV cache or captured graph, and "
                       "the run; no other side's state); step: its peak above the memory allocated when the run "
                       "started") if memory_measured else
                      "not measured (no speed runs on this device: peak memory is measured with them, on CUDA)",
        }

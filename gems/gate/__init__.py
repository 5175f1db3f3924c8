"""gems-gate: compare a vendor's candidate run with its committed baseline and block regressions.

    gems-gate --vendor nvidia [--candidate runs/nvidia] [--baseline reports/nvidia]   # check
    gems-gate promote --vendor nvidia [--candidate runs/nvidia] [--force --reason "..."]

Modules: ``inputs`` (read and validate result files), ``config`` (the vendor's gate.yaml),
``registry`` (which operators gems registers for a vendor), ``conformance_diff`` and ``perf_diff``
(what changed), ``verdict`` (the Markdown comment), ``promote`` (baseline update), ``__main__`` (CLI).
docs/gating.md describes the rules.
"""

PASS, REGRESSION, UNUSABLE = 0, 1, 2  # exit statuses of a check

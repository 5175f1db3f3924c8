"""gems-perf: speedup of the gems kernels over ATen, per operator, dtype and shape.

    gems-perf --vendor nvidia --suite core            # or: python -m gems.perf ...
    gems-perf --quick                                 # tiny shapes: CI on the interpreter vendor

From Python (a GPU script)::

    from gems.perf import run_perf
    run = run_perf(vendor="nvidia", suite="core", out="runs/nvidia")

Modules: shapes (perf/shapes.yaml), timing (timers), check (accuracy before timing), runner (cases
and timing them), parallel (precompile workers, one process per device), run (run_perf), report
(perf.csv, perf_summary.md), charts (PNG), matrix (support matrix join), progress (the bar).
docs/perf.md describes the method and the outputs.
"""

from gems.perf.results import COLUMNS, STATUSES, aggregates, read_csv, row_speedup
from gems.perf.run import run_perf
from gems.perf.runner import PerfError, PerfRun, measure

__all__ = ["COLUMNS", "STATUSES", "PerfError", "PerfRun", "aggregates", "measure", "read_csv", "row_speedup",
           "run_perf"]

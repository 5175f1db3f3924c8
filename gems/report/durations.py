"""How long each operator-dtype cell of a conformance run took: ``durations.json`` in a vendor's baseline.

``gems-gate promote`` writes it from the run's case-level ``conformance.json`` (the seconds of each cell's
cases, summed), one line per cell so that a promotion's diff stays readable. The conformance suite reads it
under pytest-xdist to send the longest cells first: each cell is one xdist group (its kernels compile once,
on one worker), and groups start in collection order, so a long cell collected last (on a GPU, a product's
autotuning: minutes) kept one worker busy long after the others had finished. Longest first, the run ends
when the total work divided by the workers does, or when its longest cell does.

A cell much longer than its share of the run is cut into several groups (:func:`parts_per_cell`). It is a
scheduling hint only: a missing or stale file changes the order in which cells run, never a verdict.
"""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

FILE = "durations.json"


def cell_seconds(report: dict) -> dict[str, float]:
    """{"op::dtype": seconds} of a case-level conformance report ({} for the compact form, which has no times)."""
    seconds: dict[str, float] = {}
    for case in report.get("cases", ()):
        if case.get("duration_s") is not None:
            key = f"{case['op']}::{case['dtype']}"
            seconds[key] = seconds.get(key, 0.0) + case["duration_s"]
    return seconds


def durations_text(seconds: dict[str, float]) -> str:
    lines = [f"  {json.dumps(key)}: {round(value, 2)}" for key, value in sorted(seconds.items())]
    return "{\n" + ",\n".join(lines) + "\n}\n"


def load(path: Path) -> dict[str, float]:
    """Cell seconds from a ``durations.json`` or a case-level ``conformance.json``; {} where there is no
    file. A file that is not one of them raises ValueError naming it."""
    path = Path(path)
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: not readable as JSON ({exc}); regenerate it with gems-gate promote, or delete "
                         f"it (it only orders the cells of a conformance run)") from exc
    if isinstance(data, dict) and "cases" in data:
        return cell_seconds(data)
    if not isinstance(data, dict) or not all(isinstance(v, (int, float)) for v in data.values()):
        raise ValueError(f"{path}: expected {{\"op::dtype\": seconds}} or a case-level conformance.json; "
                         f"regenerate it with gems-gate promote, or delete it")
    return {str(k): float(v) for k, v in data.items()}


def expected_seconds(case_counts: dict[str, int], known: dict[str, float]) -> dict[str, float]:
    """Expected seconds of each cell about to run ({"op::dtype": cases} in): the known time where there is
    one, else its case count times the median seconds per case of the known cells (1 s without any)."""
    per_case = [known[key] / n for key, n in case_counts.items() if key in known and n]
    typical = statistics.median(per_case) if per_case else 1.0
    return {key: known.get(key, n * typical) for key, n in case_counts.items()}


def worth_ordering(expected: dict[str, float], workers: int) -> bool:
    """Whether any cell is long beside a worker's share of the run (over an eighth of it), so that where it starts
    decides when the run ends. On 4 H200s (54 workers) attention's cells took 280-580 s of a 213-s share; in CI's
    interpreter runs (2 workers) no cell takes over 13 s of a 300-s share, and there the order cost 3% (the whole
    quick suite on 2 cores: 482 s longest first, 466 s in collection order)."""
    return workers > 1 and bool(expected) and max(expected.values()) > sum(expected.values()) / workers / 8


def parts_per_cell(expected: dict[str, float], workers: int) -> dict[str, int]:
    """Into how many xdist groups to cut each cell: a cell expected to take more than half a worker's share
    of the run (the total over the workers) would end the run late however early it started (on 4 H200s with
    54 workers, attention's cells took 280-300 s of a 213-s share), so it is cut into parts of about that
    half. Each part compiles the cell's kernels again (or finds them in Triton's cache): cutting only the
    longest cells costs little."""
    if workers <= 1:
        return {key: 1 for key in expected}
    longest = sum(expected.values()) / workers / 2
    return {key: max(1, math.ceil(seconds / longest)) if longest > 0 else 1 for key, seconds in expected.items()}

"""PNG charts: speedup per operator (kernel time and per-call time apart), and bandwidth as a share
of the copy ceiling measured in the same run.

Drawn on a bare matplotlib Figure with the Agg canvas: no pyplot state, no display needed.
"""

from __future__ import annotations

import io
import math
import textwrap
from collections import defaultdict

from gems.perf.results import geomean, row_speedup

SPEEDUP_PNG = "speedup_by_op.png"
BANDWIDTH_PNG = "bandwidth.png"
_SIZE_PANELS = (("large", "large shapes: kernel time"), ("small", "small shapes: per-call time"))


def _figure(n_bars: int, columns: int = 1):
    from matplotlib.figure import Figure

    return Figure(figsize=(5.5 * columns + 1.5, max(3.5, 2.0 + 0.28 * n_bars)), dpi=100, layout="constrained")


def _png(figure) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    buffer = io.BytesIO()
    FigureCanvasAgg(figure).print_png(buffer)
    return buffer.getvalue()


def _empty(ax, text: str) -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, wrap=True)
    ax.set_xticks([])
    ax.set_yticks([])


def _suptitle(figure, run, what: str) -> None:
    env = run.env
    text = f"{what}: {env['vendor']} ({env['device']}), {run.suite} suite, {env['date'][:10]}"
    figure.suptitle("\n".join(textwrap.wrap(text, 90)), fontsize=10)


def per_op_speedups(rows) -> dict[str, dict[str, float]]:
    """size class ("large", "small") -> operator -> geometric-mean speedup of its ok cases."""
    grouped = defaultdict(lambda: defaultdict(list))
    for row in rows:
        speedup = row_speedup(row)
        if speedup is not None:
            grouped[row["size_class"]][row["op"]].append(speedup)
    return {size: {op: geomean(v) for op, v in ops.items()} for size, ops in grouped.items()}


def _ratio_ticks(ax, low: float, high: float) -> None:
    """Log axis with a few labelled ratios ("0.5x", "1x", "2x") and no minor labels (they overlap)."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

    candidates = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100]
    ticks = [t for t in candidates if low <= t <= high] or [1]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}x"))
    ax.xaxis.set_minor_formatter(NullFormatter())


def speedup_chart(run) -> bytes:
    """Per operator, the geometric-mean speedup over ATen, large shapes (kernel time) and small shapes
    (per-call time) in two panels: mixed in one bar, neither story could be read."""
    speedups = per_op_speedups(run.rows)
    ops = sorted({op for table in speedups.values() for op in table},
                 key=lambda op: (speedups.get("large", {}).get(op) or speedups.get("small", {}).get(op) or 0, op))
    family = {r["op"]: r["family"] for r in run.rows}
    figure = _figure(len(ops), columns=2)
    _suptitle(figure, run, "gems speedup over ATen (> 1x: gems faster)")
    axes = figure.subplots(1, 2, sharey=True)
    if not ops:
        for ax in axes:
            _empty(ax, "no case with status ok")
        return _png(figure)
    from matplotlib import colormaps
    from matplotlib.patches import Patch

    families = sorted({family[op] for op in ops})
    palette = colormaps["tab10"]
    colour = {f: palette(i % 10) for i, f in enumerate(families)}
    values = [v for table in speedups.values() for v in table.values() if v] + [1.0]
    low, high = min(values) / 1.5, max(values) * 1.5
    positions = range(len(ops))
    for ax, (size, title) in zip(axes, _SIZE_PANELS):
        table = speedups.get(size, {})
        ax.set_title(title, fontsize=9)
        shown = [(i, op) for i, op in enumerate(ops) if table.get(op)]
        # Bars grow from the 1x line: right of it gems is faster, left of it slower.
        ax.barh([i for i, _ in shown], [table[op] - 1.0 for _, op in shown], left=1.0,
                color=[colour[family[op]] for _, op in shown])
        ax.set_xscale("log")
        ax.set_xlim(low, high)
        _ratio_ticks(ax, low, high)
        ax.axvline(1.0, color="black", linewidth=1, linestyle="--")
        ax.grid(axis="x", alpha=0.3)
        if not shown:
            ax.text(0.5, 0.5, f"no {size} shape with status ok", ha="center", va="center", transform=ax.transAxes)
    axes[0].set_yticks(list(positions), ops, fontsize=8)
    axes[0].set_ylim(-0.7, len(ops) - 0.3)
    figure.supxlabel("geometric-mean speedup: ATen time / gems time", fontsize=9)
    axes[1].legend(handles=[Patch(color=colour[f], label=f) for f in families], loc="lower right", fontsize=8)
    return _png(figure)


def bandwidth_rows(run) -> dict:
    """operator -> (gems % of copy, ATen % of copy) at its best large memory-bound case. Operators that
    move no data, compute-bound ones (with a TFLOP/s figure), failed cases and bandwidths the runner
    flagged as above the copy ceiling (no pct_copy_bw) are left out."""
    best = {}
    for row in run.rows:
        pct = _float(row.get("pct_copy_bw"))
        if (not pct or row_speedup(row) is None or row["size_class"] != "large"
                or _float(row.get("tflops")) is not None):
            continue
        if pct > best.get(row["op"], (0.0,))[0]:
            best[row["op"]] = (pct, pct * float(row["gems_ms"]) / float(row["aten_ms"]))
    return best


def _float(value) -> float | None:
    if value in (None, ""):
        return None
    number = float(value)
    return None if math.isnan(number) else number


def bandwidth_chart(run) -> bytes:
    """Best achieved bandwidth per memory-bound operator at large shapes, gems and ATen, as a share of the
    device-to-device copy measured in the same run (100% = copy speed)."""
    best = bandwidth_rows(run)
    ops = sorted(best, key=lambda op: best[op][0])
    figure = _figure(len(ops))
    _suptitle(figure, run, "bandwidth of memory-bound operators, share of the copy ceiling")
    ax = figure.add_subplot()
    if not run.copy_gbps:
        _empty(ax, "the copy ceiling was not measured in this run: no bandwidth share to show")
        return _png(figure)
    if not ops:
        _empty(ax, "no memory-bound case with a large shape and status ok")
        return _png(figure)
    positions = range(len(ops))
    height = 0.4
    ax.barh([p + height / 2 for p in positions], [best[op][0] for op in ops], height, label="gems")
    ax.barh([p - height / 2 for p in positions], [best[op][1] for op in ops], height, label="ATen", alpha=0.6)
    ax.set_yticks(list(positions), ops, fontsize=8)
    ax.axvline(100.0, color="red", linestyle="--", linewidth=1, label=f"copy: {run.copy_gbps:.0f} GB/s = 100%")
    ax.set_xlim(0, max(110.0, max(best[op][0] for op in ops) * 1.05))
    ax.set_xlabel("% of copy bandwidth (bytes the operator must move / kernel time)", fontsize=8)
    ax.legend(loc="lower right", fontsize=8)
    return _png(figure)


def render(run) -> dict[str, bytes]:
    return {SPEEDUP_PNG: speedup_chart(run), BANDWIDTH_PNG: bandwidth_chart(run)}

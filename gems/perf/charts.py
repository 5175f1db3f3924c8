"""PNG charts: speedup per operator, and achieved bandwidth against the measured copy ceiling.

Drawn on a bare matplotlib Figure with the Agg canvas: no pyplot state, no display needed.
"""

from __future__ import annotations

import io

from gems.perf.results import aggregates, row_speedup

SPEEDUP_PNG = "speedup_by_op.png"
BANDWIDTH_PNG = "bandwidth.png"


def _figure(n_bars: int):
    from matplotlib.figure import Figure

    return Figure(figsize=(8, max(3.0, 1.5 + 0.28 * n_bars)), dpi=100, layout="constrained")


def _png(figure) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    buffer = io.BytesIO()
    FigureCanvasAgg(figure).print_png(buffer)
    return buffer.getvalue()


def _empty(ax, text: str) -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes)
    ax.set_xticks([])
    ax.set_yticks([])


def _title(run, what: str) -> str:
    env = run.env
    return f"{what}: {env['vendor']} ({env['device']}), {run.suite} suite"


def speedup_chart(run) -> bytes:
    """Geometric-mean speedup per operator, sorted, log scale, a line at 1.0, bars coloured by family."""
    per_op = [(op, g) for op, (g, _, _, _) in aggregates(run.rows)["op"].items() if g]
    per_op.sort(key=lambda item: item[1])
    family = {r["op"]: r["family"] for r in run.rows}
    figure = _figure(len(per_op))
    ax = figure.add_subplot()
    ax.set_title(_title(run, "gems speedup over ATen"), fontsize=10)
    if not per_op:
        _empty(ax, "no case with status ok")
        return _png(figure)
    from matplotlib import colormaps

    families = sorted({family[op] for op, _ in per_op})
    palette = colormaps["tab10"]
    colour = {f: palette(i % 10) for i, f in enumerate(families)}
    names = [op for op, _ in per_op]
    # Bars grow from the 1.0 line: right of it gems is faster, left of it slower.
    ax.barh(names, [g - 1.0 for _, g in per_op], left=1.0, color=[colour[family[op]] for op in names])
    ax.set_xscale("log")
    values = [g for _, g in per_op] + [1.0]
    ax.set_xlim(min(values) / 1.6, max(values) * 1.6)  # keep the 1.0 line inside the frame
    ax.axvline(1.0, color="black", linewidth=1, linestyle="--")
    ax.set_xlabel("geometric-mean speedup (ATen time / gems time; > 1: gems faster)")
    from matplotlib.patches import Patch

    ax.legend(handles=[Patch(color=colour[f], label=f) for f in families], loc="best", fontsize=8)
    return _png(figure)


def bandwidth_chart(run) -> bytes:
    """Best achieved GB/s per memory-bound operator (large shapes), gems and ATen, vs the copy ceiling."""
    best = {}
    for row in run.rows:
        if row_speedup(row) is None or row["size_class"] != "large" or not row.get("gbps") or row.get("tflops"):
            continue
        gbps = float(row["gbps"])
        if gbps > best.get(row["op"], (0.0, 0.0))[0]:
            best[row["op"]] = (gbps, gbps * float(row["gems_ms"]) / float(row["aten_ms"]))
    ops = sorted(best, key=lambda op: best[op][0])
    figure = _figure(len(ops))
    ax = figure.add_subplot()
    ax.set_title(_title(run, "achieved bandwidth, memory-bound operators"), fontsize=10)
    if not ops:
        _empty(ax, "no memory-bound case with a large shape and status ok")
        return _png(figure)
    positions = range(len(ops))
    height = 0.4
    ax.barh([p + height / 2 for p in positions], [best[op][0] for op in ops], height, label="gems")
    ax.barh([p - height / 2 for p in positions], [best[op][1] for op in ops], height, label="ATen", alpha=0.6)
    ax.set_yticks(list(positions), ops)
    if run.copy_gbps:
        ax.axvline(run.copy_gbps, color="red", linestyle="--", linewidth=1,
                   label=f"device copy {run.copy_gbps:.0f} GB/s")
    ax.set_xlabel("GB/s (bytes the operator must move / kernel time)")
    ax.legend(loc="lower right", fontsize=8)
    return _png(figure)


def render(run) -> dict[str, bytes]:
    return {SPEEDUP_PNG: speedup_chart(run), BANDWIDTH_PNG: bandwidth_chart(run)}

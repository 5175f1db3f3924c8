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
PANEL_WIDTH = 5.5  # inches per panel
# Qualitative colours, one per operator family: tab10's ten, then five hues none of them is close to (navy,
# light blue, black, mint, lavender); beyond them a colour comes back with a hatch, so no two families look alike.
_PALETTE = [f"C{i}" for i in range(10)] + ["#393b79", "#aec7e8", "#222222", "#98df8a", "#bcbddc"]
_HATCHES = ("", "//", "..", "xx")
_LEGEND_COLUMNS = 8
# A log axis for the bandwidth chart once its bars span this ratio: on a linear one the smaller vanish.
_LOG_SPAN = 20.0


def interpreted(env: dict) -> bool:
    """Timings of Triton's interpreter (or any wall-clock timer): they prove the pipeline, not speed."""
    return env.get("vendor") == "interpreter" or env.get("timer") == "wall-clock"


CAVEAT = ("Wall-clock times of Triton's interpreter on the CPU, a Python emulator: they show that the pipeline "
          "works and say nothing about kernel speed.")


def _size_panels(env: dict) -> tuple:
    large = "wall-clock time per call" if env.get("timer") == "wall-clock" else "kernel time"
    return (("large", f"large shapes: {large}"), ("small", "small shapes: per-call time (calls back to back)"))


def _figure(n_bars: int, columns: int = 1, extra_height: float = 0.0):
    from matplotlib.figure import Figure

    height = max(3.5, 2.0 + 0.28 * n_bars) + extra_height
    return Figure(figsize=(PANEL_WIDTH * columns + 1.5, height), dpi=100, layout="constrained")


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
    text = "\n".join(textwrap.wrap(f"{what}: {env['vendor']} on {env['device']}, {run.suite} suite, "
                                    f"{env['date'][:10]}", 90))
    if interpreted(env):
        text += "\n" + "\n".join(textwrap.wrap("NOTE: " + CAVEAT, 90))
    figure.suptitle(text, fontsize=10, color="#862e9c" if interpreted(env) else "black")


def family_styles(families) -> dict:
    """family -> (colour, hatch): distinct for every family, whatever their number."""
    return {family: (_PALETTE[i % len(_PALETTE)], _HATCHES[i // len(_PALETTE) % len(_HATCHES)])
            for i, family in enumerate(sorted(families))}


def per_op_speedups(rows) -> dict[str, dict[str, float]]:
    """size class ("large", "small") -> operator -> geometric-mean speedup of its ok cases."""
    grouped = defaultdict(lambda: defaultdict(list))
    for row in rows:
        speedup = row_speedup(row)
        if speedup is not None:
            grouped[row["size_class"]][row["op"]].append(speedup)
    return {size: {op: geomean(v) for op, v in ops.items()} for size, ops in grouped.items()}


def ratio_ticks(low: float, high: float, width_in: float = PANEL_WIDTH) -> list[float]:
    """Labelled ratios for a log axis from ``low`` to ``high``: 1-2-5 steps, or decades, or every other
    decade, whichever is the densest that leaves each label about half an inch ("0.05x" must not touch
    "0.1x")."""
    fits = max(2, int(width_in / 0.55))
    exponents = range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1)
    for steps, every in (((1, 2, 5), 1), ((1,), 1), ((1,), 2), ((1,), 3)):
        ticks = [m * 10.0 ** e for e in exponents if e % every == 0 for m in steps]
        ticks = [t for t in ticks if low <= t <= high]
        if len(ticks) <= fits:
            return ticks or [1.0]
    return [1.0]


def ratio_label(value: float) -> str:
    """0.001x, 0.5x, 1x, 20x: plain decimals, never 1e-03x."""
    return f"{value:.6f}".rstrip("0").rstrip(".") + "x" if value < 1 else f"{value:g}x"


def _ratio_axis(ax, low: float, high: float) -> None:
    """Log axis with a few labelled ratios and no minor labels (they overlap)."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

    ax.set_xscale("log")
    ax.set_xlim(low, high)
    ax.xaxis.set_major_locator(FixedLocator(ratio_ticks(low, high)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: ratio_label(v)))
    ax.xaxis.set_minor_formatter(NullFormatter())


def speedup_figure(run):
    """Per operator, the geometric-mean speedup over ATen, large shapes (kernel time) and small shapes
    (per-call time) in two panels: mixed in one bar, neither story could be read."""
    speedups = per_op_speedups(run.rows)
    ops = sorted({op for table in speedups.values() for op in table},
                 key=lambda op: (speedups.get("large", {}).get(op) or speedups.get("small", {}).get(op) or 0, op))
    family = {r["op"]: r["family"] for r in run.rows}
    styles = family_styles({family[op] for op in ops})
    legend_rows = math.ceil(len(styles) / _LEGEND_COLUMNS)
    figure = _figure(len(ops), columns=2, extra_height=1.0 + 0.2 * legend_rows)
    _suptitle(figure, run, "gems speedup over ATen (> 1x: gems faster)")
    # The family legend gets a row of its own above the panels: inside them it would cover bars.
    grid = figure.add_gridspec(2, 2, height_ratios=[0.15 + 0.2 * legend_rows, figure.get_figheight()])
    legend_ax = figure.add_subplot(grid[0, :])
    legend_ax.axis("off")
    axes = [figure.add_subplot(grid[1, 0])]
    axes.append(figure.add_subplot(grid[1, 1], sharey=axes[0]))
    axes[1].tick_params(labelleft=False)
    if not ops:
        for ax in axes:
            _empty(ax, "no case with status ok")
        return figure
    from matplotlib.patches import Patch

    values = [v for table in speedups.values() for v in table.values() if v] + [1.0]
    low, high = min(values) / 1.5, max(values) * 1.5
    for ax, (size, title) in zip(axes, _size_panels(run.env)):
        table = speedups.get(size, {})
        ax.set_title(title, fontsize=9)
        shown = [(i, op) for i, op in enumerate(ops) if table.get(op)]
        # Bars grow from the 1x line: right of it gems is faster, left of it slower.
        bars = ax.barh([i for i, _ in shown], [table[op] - 1.0 for _, op in shown], left=1.0,
                       color=[styles[family[op]][0] for _, op in shown])
        for bar, (_, op) in zip(bars, shown):
            bar.set_hatch(styles[family[op]][1])
        _ratio_axis(ax, low, high)
        ax.axvline(1.0, color="black", linewidth=1, linestyle="--")
        ax.grid(axis="x", alpha=0.3)
        if not shown:
            ax.text(0.5, 0.5, f"no {size} shape with status ok", ha="center", va="center", transform=ax.transAxes)
    axes[0].set_yticks(list(range(len(ops))), ops, fontsize=8)
    axes[0].set_ylim(-0.7, len(ops) - 0.3)
    figure.supxlabel("geometric-mean speedup: ATen time / gems time", fontsize=9)
    legend_ax.legend(handles=[Patch(facecolor=colour, hatch=hatch, label=f) for f, (colour, hatch) in styles.items()],
                     loc="center", ncols=min(len(styles), _LEGEND_COLUMNS), fontsize=8, title="operator family",
                     title_fontsize=8)
    return figure


def speedup_chart(run) -> bytes:
    return _png(speedup_figure(run))


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


def bandwidth_figure(run):
    """Best achieved bandwidth per memory-bound operator at large shapes, gems and ATen, as a share of the
    device-to-device copy measured in the same run (100% = copy speed). Ordered by gems' share; the axis
    turns logarithmic where the bars span more than ``_LOG_SPAN`` (the interpreter's gems bars are a
    hundredth of ATen's), and each gems bar carries its value."""
    best = bandwidth_rows(run)
    ops = sorted(best, key=lambda op: (best[op][0], op))
    figure = _figure(len(ops), extra_height=0.6)
    _suptitle(figure, run, "bandwidth of memory-bound operators, share of the copy ceiling")
    grid = figure.add_gridspec(2, 1, height_ratios=[0.25, figure.get_figheight()])
    legend_ax = figure.add_subplot(grid[0])
    legend_ax.axis("off")
    ax = figure.add_subplot(grid[1])
    if not run.copy_gbps:
        _empty(ax, "the copy ceiling was not measured in this run: no bandwidth share to show")
        return figure
    if not ops:
        _empty(ax, "no memory-bound case with a large shape and status ok")
        return figure
    shares = [share for op in ops for share in best[op] if share > 0]
    top = max(110.0, max(shares) * 1.1)
    log = min(shares) * _LOG_SPAN < max(shares)
    floor = min(shares) / 2 if log else 0.0
    positions = range(len(ops))
    height = 0.4
    gems_bars = ax.barh([p + height / 2 for p in positions], [best[op][0] - floor for op in ops], height,
                        left=floor, label="gems")
    ax.barh([p - height / 2 for p in positions], [best[op][1] - floor for op in ops], height, left=floor,
            label="ATen", alpha=0.6)
    for bar, op in zip(gems_bars, ops):
        ax.text(bar.get_x() + bar.get_width(), bar.get_y() + bar.get_height() / 2, f" {best[op][0]:.3g}%",
                va="center", fontsize=6)
    ax.set_yticks(list(positions), ops, fontsize=8)
    ax.set_ylim(-0.7, len(ops) - 0.3)
    ax.axvline(100.0, color="red", linestyle="--", linewidth=1, label=f"copy: {run.copy_gbps:.0f} GB/s = 100%")
    if log:
        from matplotlib.ticker import FuncFormatter, NullFormatter

        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: ratio_label(v)[:-1] + "%"))
        ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlim(floor or 0.0, top * (2 if log else 1))
    scale = " (log scale)" if log else ""
    ax.set_xlabel(f"% of copy bandwidth{scale}: bytes the operator must move / its time", fontsize=8)
    legend_ax.legend(*ax.get_legend_handles_labels(), loc="center", ncols=3, fontsize=8)
    return figure


def bandwidth_chart(run) -> bytes:
    return _png(bandwidth_figure(run))


def render(run) -> dict[str, bytes]:
    return {SPEEDUP_PNG: speedup_chart(run), BANDWIDTH_PNG: bandwidth_chart(run)}

"""What changed between two conformance runs, cell by cell (operator x dtype) and case by case.

Both runs are in the compact form (gems.report.conformance_report.compact): per cell the count of each
status, and every case that did not simply pass. A case a cell does not list passed in that run (or was not
there), so a case that fails now blocks unless it failed in the baseline too.

Blocking: a case that fails now where it passed in the baseline (or that is new in a cell the baseline
had); an operator whose collected case count dropped; a registered operator with no cases.
Reported: cells that pass now and did not, other cell changes, new operators and cases.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gems.report.conformance_report import cell_status, cells

FAILING = ("fail", "error")
# Case and cell statuses that count as passing (as the support matrix counts them).
PASSING = ("pass", "fallback", "xfail", "xpass")


@dataclass
class CellChange:
    op: str
    dtype: str
    before: str  # cell status in the baseline ("" where the cell is new)
    after: str  # cell status now ("" where the cell is gone)
    cases: list = field(default_factory=list)  # the candidate's cases behind the change


@dataclass
class Vanished:
    op: str
    before: int
    after: int
    fewer: list  # (dtype, cases now, cases in the baseline) of the cells that lost cases
    lost_cells: list  # dtypes whose cases all vanished

    def describe(self) -> str:
        parts = [f"every {d} case" for d in self.lost_cells]
        parts += [f"{d}: {now} case(s), {then} in the baseline" for d, now, then in self.fewer]
        return ", ".join(parts) or "(no cell lost cases: the count dropped)"


@dataclass
class ConformanceDiff:
    regressions: list = field(default_factory=list)  # CellChange, cases = the newly failing cases
    vanished: list = field(default_factory=list)  # Vanished
    unregistered: dict = field(default_factory=dict)  # operator -> overloads registered with no cases
    newly_passing: list = field(default_factory=list)  # CellChange
    other_changes: list = field(default_factory=list)  # CellChange
    new_ops: dict = field(default_factory=dict)  # operator -> case count
    grown: list = field(default_factory=list)  # (op, before, after)
    still_failing: int = 0  # cases failing in both runs

    @property
    def blocking(self) -> bool:
        return bool(self.regressions or self.vanished or self.unregistered)


def compare(baseline: dict, candidate: dict, registered: dict | None) -> ConformanceDiff:
    """baseline, candidate: compact reports; registered: operator -> overloads gems registers for the vendor
    (None: not checked)."""
    diff = ConformanceDiff()
    base_listed = {c["id"]: c["status"] for c in baseline["cases"]}  # every case that did not simply pass
    base_cells, cand_cells = cells(baseline), cells(candidate)
    base_cell_status = {key: cell_status(counts) for key, counts in base_cells.items()}

    newly_failing = {}
    for case in candidate["cases"]:
        if case["status"] not in FAILING:
            continue
        key = case["op"], case["dtype"]
        before = base_listed.get(case["id"], "pass" if key in base_cells else None)
        if before in FAILING:
            diff.still_failing += 1
        elif before in PASSING or base_cell_status.get(key) in PASSING:
            newly_failing.setdefault(key, []).append(case)
    for (op, dtype), cases in sorted(newly_failing.items()):
        diff.regressions.append(CellChange(op, dtype, base_cell_status[op, dtype],
                                           cell_status(cand_cells[op, dtype]), cases))

    before_counts, after_counts = baseline["collected"], candidate["collected"]
    for op in sorted(before_counts):
        after = after_counts.get(op, 0)
        if after < before_counts[op]:
            lost = sorted(d for o, d in base_cells if o == op and (o, d) not in cand_cells)
            fewer = [(d, sum(cand_cells[o, d].values()), sum(counts.values()))
                     for (o, d), counts in sorted(base_cells.items())
                     if o == op and (o, d) in cand_cells and sum(cand_cells[o, d].values()) < sum(counts.values())]
            diff.vanished.append(Vanished(op, before_counts[op], after, fewer, lost))
        elif after > before_counts[op]:
            diff.grown.append((op, before_counts[op], after))
    diff.new_ops = {op: n for op, n in sorted(after_counts.items()) if op not in before_counts}

    shrunk = {v.op for v in diff.vanished}
    for key in sorted(set(base_cell_status) | set(cand_cells)):
        if key in newly_failing or key[0] in diff.new_ops or (key not in cand_cells and key[0] in shrunk):
            continue
        before = base_cell_status.get(key, "")
        after = cell_status(cand_cells[key]) if key in cand_cells else ""
        if before == after:
            continue
        cases = [c for c in candidate["cases"] if (c["op"], c["dtype"]) == key and c["status"] != "pass"]
        change = CellChange(key[0], key[1], before, after, cases)
        if after in ("pass", "xpass") and before in ("fail", "xfail", "fallback", "unsupported", ""):
            diff.newly_passing.append(change)
        else:
            diff.other_changes.append(change)

    if registered is not None:
        tested = {op for op, n in after_counts.items() if n}
        diff.unregistered = {op: overloads for op, overloads in sorted(registered.items()) if op not in tested}
    return diff

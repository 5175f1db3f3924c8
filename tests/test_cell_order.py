"""Under -n, conformance cells (xdist groups) start longest first, from the seconds an earlier run took
(gems/report/durations.py): no long cell is left to start last. tests/ still runs before any cell."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gems.report import durations
from gems.testing.xdist_groups import longest_groups_first

ROOT = Path(__file__).resolve().parents[1]


class FakeItem:
    def __init__(self, name, group=None):
        self.name, self.group = name, group

    def iter_markers(self, name):
        assert name == "xdist_group"
        return [pytest.mark.xdist_group(self.group).mark] if self.group else []


def test_longest_groups_first_keeps_other_tests_first_and_each_group_together():
    items = [FakeItem("t1"), FakeItem("a1", "a"), FakeItem("b1", "b"), FakeItem("m1", "module"),
             FakeItem("a2", "a"), FakeItem("c1", "c"), FakeItem("b2", "b"), FakeItem("t2")]
    ordered = [i.name for i in longest_groups_first(items, {"a": 1.0, "b": 5.0, "c": 3.0})]
    # "module" is not a timed cell (a tests/ module's group): it keeps its place among the other tests
    assert ordered == ["t1", "m1", "t2", "b1", "b2", "c1", "a1", "a2"]


def test_durations_load_both_forms_and_estimate_unknown_cells(tmp_path):
    report = {"cases": [{"op": "neg", "dtype": "float32", "duration_s": 0.25},
                        {"op": "neg", "dtype": "float32", "duration_s": 0.5},
                        {"op": "mm", "dtype": "float16", "duration_s": 4.0},
                        {"op": "mm", "dtype": "float16", "duration_s": None}]}
    (tmp_path / "conformance.json").write_text(json.dumps(report))
    seconds = durations.load(tmp_path / "conformance.json")
    assert seconds == {"neg::float32": 0.75, "mm::float16": 4.0}
    (tmp_path / "durations.json").write_text(durations.durations_text(seconds))
    assert durations.load(tmp_path / "durations.json") == seconds
    assert durations.load(tmp_path / "absent.json") == {}
    # an unknown cell: its cases times the median seconds per case of the known cells (0.375 and 4.0 -> 2.1875)
    expected = durations.expected_seconds({"neg::float32": 2, "abs::float32": 4}, seconds)
    assert expected == {"neg::float32": 0.75, "abs::float32": pytest.approx(4 * 0.375)}
    assert durations.expected_seconds({"abs::float32": 3}, {}) == {"abs::float32": 3.0}


@pytest.mark.parametrize("text", ["[1, 2]", "{\"neg::float32\": \"slow\"}", "{not json"])
def test_a_bad_durations_file_names_itself_and_the_fix(tmp_path, text):
    path = tmp_path / "durations.json"
    path.write_text(text)
    with pytest.raises(ValueError, match=r"durations\.json.*(gems-gate promote|delete it)"):
        durations.load(path)


# Each worker writes the order it collected the cases in.
RECORD_ORDER = """
import json, os


def pytest_collection_finish(session):
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(os.path.join(os.environ["ORDER_DIR"], worker + ".json"), "w") as f:
        json.dump([item.nodeid for item in session.items], f)
"""


def _run(tmp_path, *args):
    (tmp_path / "record_order.py").write_text(RECORD_ORDER)
    env = {**os.environ, "ORDER_DIR": str(tmp_path),
           "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "conformance", "--vendor", "interpreter", "--quick", "--ops", "neg,abs",
         "--dtypes", "float32,int32", "-p", "no:randomly", "-p", "record_order", "-q",
         "--report-dir", str(tmp_path / "report"), *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)


def test_workers_collect_the_longest_cells_first(tmp_path):
    (tmp_path / "durations.json").write_text(durations.durations_text(
        {"neg::int32": 2.0, "abs::float32": 1.9, "abs::int32": 1.8, "neg::float32": 1.7}))
    done = _run(tmp_path, "-n", "2", "--cell-durations", str(tmp_path / "durations.json"))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    for worker in ("gw0", "gw1"):
        order = json.loads((tmp_path / f"{worker}.json").read_text())
        groups = list(dict.fromkeys(nodeid.split("@")[1] for nodeid in order if "@" in nodeid))
        # 7.4 s over 2 workers: cells over 1.85 s are cut in two
        assert groups == ["abs-int32", "neg-float32", "neg-int32-part0", "neg-int32-part1", "abs-float32-part0",
                          "abs-float32-part1"]
    report = json.loads((tmp_path / "report" / "conformance.json").read_text())
    assert {c["status"] for c in report["cases"]} == {"pass"}


def test_a_missing_cell_durations_file_is_a_usage_error(tmp_path):
    done = _run(tmp_path, "-n", "2", "--cell-durations", str(tmp_path / "nowhere.json"))
    assert done.returncode == 4
    assert "--cell-durations: no file" in done.stdout + done.stderr


def test_a_cell_longer_than_half_a_workers_share_is_cut_into_parts():
    expected = {"sdpa::float32": 300.0, "mm::float32": 120.0, **{f"op{i}::float32": 10.0 for i in range(100)}}
    parts = durations.parts_per_cell(expected, workers=10)  # share 142 s a worker: parts of at most 71 s
    assert parts["sdpa::float32"] == 5 and parts["mm::float32"] == 2 and parts["op0::float32"] == 1
    assert durations.parts_per_cell(expected, workers=1) == {key: 1 for key in expected}


def test_workers_collect_the_parts_of_a_long_cell_as_groups_of_their_own(tmp_path):
    (tmp_path / "durations.json").write_text(durations.durations_text(
        {"neg::float32": 100.0, "neg::int32": 1.0, "abs::float32": 1.0, "abs::int32": 1.0}))
    done = _run(tmp_path, "-n", "2", "--cell-durations", str(tmp_path / "durations.json"))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    order = json.loads((tmp_path / "gw0.json").read_text())
    groups = list(dict.fromkeys(nodeid.split("@")[1] for nodeid in order if "@" in nodeid))
    # 103 s over 2 workers: parts of at most 25.75 s, so neg::float32 in 4 parts, each 25 s, first
    assert groups == [f"neg-float32-part{i}" for i in range(4)] + ["abs-float32", "abs-int32", "neg-int32"]
    neg = [nodeid.split("@")[0] for nodeid in order if "@neg-float32" in nodeid]
    other = json.loads((tmp_path / "gw1.json").read_text())
    cases = [nodeid.split("@")[0] for nodeid in other if "@neg-float32" in nodeid]
    assert sorted(neg) == sorted(cases) and len(set(neg)) == len(neg)  # every case once, in the same parts
    report = json.loads((tmp_path / "report" / "conformance.json").read_text())
    assert {c["status"] for c in report["cases"]} == {"pass"}
    assert len([c for c in report["cases"] if c["op"] == "neg" and c["dtype"] == "float32"]) == len(neg)


def test_cells_are_reordered_only_where_one_is_long_beside_a_workers_share():
    even = {f"op{i}::float32": 1.0 for i in range(100)}  # CI's interpreter runs: many short cells
    assert not durations.worth_ordering(even, workers=2)
    assert durations.worth_ordering({**even, "sdpa::float32": 20.0}, workers=2)  # 20 s > 120 s / 2 / 8
    assert not durations.worth_ordering({**even, "sdpa::float32": 20.0}, workers=1)


"""pytest conformance --time-limit: no case starts after the limit, the cases not started are skipped with the
reason, and the report is written from the cases that ran, with a note of how many did. SIGTERM (a lent
machine's time running out) stops a run the same way."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# After the first case, the deadline is moved to now: the time limit "passes" at a known point of the run.
LIMIT_AFTER_FIRST_CASE = """
import time


def pytest_runtest_teardown(item):
    run = item.config.gems_conformance
    run.deadline = min(run.deadline, time.time())
"""


# After the first case, the process group gets SIGTERM, as `timeout` sends it: the controller and every worker.
SIGTERM_AFTER_FIRST_CASE = """
import os, signal, time


def pytest_runtest_teardown(item):
    time.sleep(1)  # the first case's result reaches the controller first
    os.killpg(os.getpgid(0), signal.SIGTERM)
"""


# SIGTERM while the report is written: the report is still written whole.
SIGTERM_WHILE_WRITING = """
import os, signal

from gems.report import conformance_report

_write = conformance_report.write


def write(report_dir, report):
    os.kill(os.getpid(), signal.SIGTERM)
    return _write(report_dir, report)


conformance_report.write = write
"""


def _conformance(tmp_path, *args):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "conformance", "--vendor", "interpreter", "--quick", "--ops", "neg",
         "--dtypes", "float32", "-p", "no:randomly", "--report-dir", str(tmp_path / "report"), "-rs", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, start_new_session=True)


def test_cases_after_the_limit_are_skipped_and_the_report_says_how_many_ran(tmp_path):
    (tmp_path / "limit_after_first_case.py").write_text(LIMIT_AFTER_FIRST_CASE)
    done = _conformance(tmp_path, "--time-limit", "3600", "-p", "limit_after_first_case")
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "not run: --time-limit 3600 s had passed" in output, output
    report = json.loads((tmp_path / "report" / "conformance.json").read_text())
    total = sum(report["collected"].values())
    assert len(report["cases"]) == 1 < total, report["summary"]
    assert f"stopped by --time-limit 3600 s: 1 of the {total} collected cases ran" in " ".join(report["notes"])


def test_a_limit_already_passed_skips_every_case_in_every_worker(tmp_path):
    done = _conformance(tmp_path, "--time-limit", "0", "-n", "2")
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "passed" not in output.splitlines()[-1] and "skipped" in output.splitlines()[-1], output
    assert not (tmp_path / "report" / "conformance.json").exists()  # nothing ran: no report


def test_sigterm_stops_the_run_and_the_report_says_how_many_cases_ran(tmp_path):
    (tmp_path / "sigterm_after_first_case.py").write_text(SIGTERM_AFTER_FIRST_CASE)
    for workers in ([], ["-n", "2"]):
        report_dir = tmp_path / "report"
        done = _conformance(tmp_path, "-p", "sigterm_after_first_case", *workers)
        output = done.stdout + done.stderr
        assert done.returncode == 2, output  # interrupted
        report = json.loads((report_dir / "conformance.json").read_text())
        total = sum(report["collected"].values())
        ran = len(report["cases"])
        assert 1 <= ran < total, (workers, report["summary"])
        assert f"stopped by SIGTERM: {ran} of the {total} collected cases ran" in " ".join(report["notes"]), workers
        (report_dir / "conformance.json").unlink()


def test_sigterm_while_the_report_is_written_leaves_it_whole(tmp_path):
    (tmp_path / "sigterm_while_writing.py").write_text(SIGTERM_WHILE_WRITING)
    done = _conformance(tmp_path, "-p", "sigterm_while_writing")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((tmp_path / "report" / "conformance.json").read_text())
    assert len(report["cases"]) == sum(report["collected"].values()) > 1
    assert not any("stopped by" in note for note in report["notes"])

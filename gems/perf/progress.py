"""A dependency-free progress bar on stderr: redrawn in place on a terminal, one line per case in CI logs."""

from __future__ import annotations

import sys
import time
import warnings

# numpy's complaints inside Triton's interpreter (NaN and overflow of the inputs' special values, its deprecated
# scalar conversions) are expected, as pyproject.toml's pytest filters say; printed, they break the progress bar.
_INTERPRETER = r"triton\.runtime\.interpreter"


def quiet_warnings() -> None:
    """Silence the interpreter's expected numpy warnings (in gems-perf and in each process it starts)."""
    for category in (RuntimeWarning, DeprecationWarning):
        warnings.filterwarnings("ignore", category=category, module=_INTERPRETER)
    warnings.filterwarnings("ignore", "(invalid value|overflow|divide by zero) encountered in", RuntimeWarning, "numpy")


class Progress:
    """label: before every line (a device's shard, whose lines mix with another's: always one line per case).
    every: on a log, not a terminal, a line every ``every`` cases and at the last one (the precompile workers)."""

    WIDTH = 24

    def __init__(self, total: int, enabled: bool = True, stream=None, label: str = "", every: int = 1):
        self.total, self.enabled, self.label_prefix, self.every = total, enabled, label, max(every, 1)
        self.stream = stream or sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty() and not label
        self.count, self.label, self.started = 0, "", time.perf_counter()

    def _bar(self) -> str:
        filled = self.WIDTH * self.count // max(self.total, 1)
        elapsed = time.perf_counter() - self.started
        bar = "#" * filled + "." * (self.WIDTH - filled)
        return f"{self.label_prefix}[{bar}] {self.count}/{self.total} {elapsed:5.0f}s"

    def note(self, text: str) -> None:
        if self.enabled:
            self.stream.write(("\r\033[K" if self.tty else "") + self.label_prefix + text + "\n")
            self.stream.flush()

    def start(self, label: str) -> None:
        self.label = label
        if self.enabled and self.tty:
            self.stream.write(f"\r\033[K{self._bar()} {label}")
            self.stream.flush()

    def done(self, outcome: str) -> None:
        self.count += 1
        if not self.enabled:
            return
        if self.tty:
            self.stream.write(f"\r\033[K{self._bar()} {self.label}: {outcome}")
        elif self.count % self.every == 0 or self.count == self.total:
            self.stream.write(f"{self._bar()} {self.label}: {outcome}\n")
        else:
            return
        self.stream.flush()

    def close(self) -> None:
        if self.enabled and self.tty:
            self.stream.write("\n")
            self.stream.flush()

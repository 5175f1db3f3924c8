"""A dependency-free progress bar on stderr: redrawn in place on a terminal, one line per case in CI logs."""

from __future__ import annotations

import sys
import time


class Progress:
    WIDTH = 24

    def __init__(self, total: int, enabled: bool = True, stream=None):
        self.total, self.enabled = total, enabled
        self.stream = stream or sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.count, self.label, self.started = 0, "", time.perf_counter()

    def _bar(self) -> str:
        filled = self.WIDTH * self.count // max(self.total, 1)
        elapsed = time.perf_counter() - self.started
        return f"[{'#' * filled}{'.' * (self.WIDTH - filled)}] {self.count}/{self.total} {elapsed:5.0f}s"

    def note(self, text: str) -> None:
        if self.enabled:
            self.stream.write(("\r\033[K" if self.tty else "") + text + "\n")
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
        else:
            self.stream.write(f"{self._bar()} {self.label}: {outcome}\n")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled and self.tty:
            self.stream.write("\n")
            self.stream.flush()

"""Progress for long work, on a terminal only.

A cold ``check`` or the first ``search`` on a large vault takes seconds; a line on
stderr (``parsing notes 1,200/10,000``, redrawn in place) says something is happening.
It is shown only when the command allows it (text output: never with ``--format json``,
``--json`` or ``-q``), only when stderr is a terminal, and only after a short delay, so
quick runs, pipes, hooks and CI logs never see it. The line is erased when the work is
done.
"""

from __future__ import annotations

import sys
import time

DELAY_S = 0.5  # quicker work shows nothing
INTERVAL_S = 0.1  # at most this often redrawn

_allowed = [False]


def allow(enabled: bool) -> None:
    """Let this command show progress (text output only; commands decide)."""
    _allowed[0] = bool(enabled)


class Progress:
    """``with Progress("parsing notes", total) as p: ... p.advance(n)``."""

    def __init__(self, label: str, total: int, stream=None):
        self.label = label
        self.total = total
        self.stream = stream or sys.stderr
        self.done = 0
        self.started = time.monotonic()
        self.drawn_at = 0.0
        self.width = 0
        self.active = _allowed[0] and total > 0 and _is_tty(self.stream)

    def __enter__(self) -> "Progress":
        return self

    def advance(self, n: int = 1) -> None:
        self.done += n
        if not self.active:
            return
        now = time.monotonic()
        if now - self.started < DELAY_S or now - self.drawn_at < INTERVAL_S:
            return
        self.drawn_at = now
        text = f"{self.label} {self.done:,}/{self.total:,}"
        self.width = max(self.width, len(text))
        self.stream.write("\r" + text.ljust(self.width))
        self.stream.flush()

    def __exit__(self, *exc) -> None:
        if self.width:  # erase the line: the command's own output follows
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()
            self.width = 0


def _is_tty(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False

"""Whether a process recorded earlier still runs.

A pid names a process only while it runs: the kernel hands it to a later process in time.
So "the process that wrote this record still runs" is asked with the record's time too: a
process of that pid that started after the record was written did not write it. Linux
gives a process's start in ``/proc``; elsewhere a live pid is all there is to go by.
"""

from __future__ import annotations

import os

# a process's start is known to the second of the boot time, a record's time to its second
_SLACK_S = 2


def alive(pid: int) -> bool:
    """Some process has the pid ``pid`` now (another user's counts)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # (another user's process: alive)
        return True
    return True


def started(pid: int) -> float | None:
    """When the process ``pid`` started, in seconds since the epoch, or None where
    ``/proc`` does not say (not Linux, or it ended meanwhile)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rpartition(b")")[2].split()
        with open("/proc/stat", "rb") as fh:
            boot = next(int(line.split()[1]) for line in fh if line.startswith(b"btime "))
        return boot + int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return None


def runs_since(pid: int, when: float | None) -> bool:
    """The process that was ``pid`` at ``when`` (seconds since the epoch) still runs: the
    pid is alive and its process started no later than ``when`` (where that can be told)."""
    if not alive(pid):
        return False
    began = started(pid)
    return began is None or when is None or began <= when + _SLACK_S

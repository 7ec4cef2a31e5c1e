"""Run ``vaultkit ARGV`` in this process from a folder, capturing its output."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from vaultkit.cli import main


def invoke(argv, cwd: Path) -> tuple[int, str, str]:
    """``(exit code, stdout, stderr)`` of ``vaultkit ARGV`` run in ``cwd``."""
    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = main(list(argv))
    return rc, out.getvalue(), err.getvalue()

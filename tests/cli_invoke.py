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


def modules_after_check(root: Path, expect: str | None = None) -> set[str]:
    """The modules a fresh interpreter holds after ``vaultkit check ROOT`` (whose report
    must hold ``expect``, when given): what a warm check costs to import."""
    import subprocess
    import sys

    probe = ("import sys, io, contextlib\nfrom vaultkit.cli import main\n"
             "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
             f"    main(['check', {str(root)!r}])\n"
             f"assert {expect!r} is None or {expect!r} in out.getvalue(), out.getvalue()\n"
             "print(' '.join(sorted(sys.modules)))")
    return set(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                              check=True).stdout.split())

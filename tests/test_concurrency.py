"""``vaultkit log`` from 8 processes while ``index`` and ``check --fix`` run: nothing lost,
nothing interleaved.

The day's journal carries a deprecated property (``tag:``), so ``check --fix`` rewrites
the very file the loggers append to; between fixes the test breaks it again (under the
journal lock, as any well-behaved writer would). Every entry must arrive whole, once.
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import multiprocessing as mp
import os
import re
from pathlib import Path

from vaultkit.cli import main

WRITERS = 8
ENTRIES = 25
DAY = "2026-03-01"
HEAD = f"---\ntag: [journal]\n---\n# {DAY}\n"


def _quiet(argv) -> int:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return main(argv)


def _logger(root: str, w: int, n: int, failures) -> None:
    os.chdir(root)
    for i in range(n):
        body = "\n".join(f"w{w}-e{i} line {k}" for k in range(1, 4))
        rc = _quiet(["log", "--root", root, "--date", DAY, "--time", "10:00",
                     "--title", f"w{w}-e{i}", body])
        if rc != 0:
            failures.put((w, i, rc))


def _break_again(journal: Path) -> None:
    """Turn ``tags:`` back into ``tag:`` under the journal lock (so --fix has work)."""
    fd = os.open(journal, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        data = journal.read_bytes()
        if data.startswith(b"---\ntags:"):
            new = data.replace(b"---\ntags:", b"---\ntag:", 1)
            os.pwrite(fd, new, 0)  # same length minus one: rewrite and cut
            os.ftruncate(fd, len(new))
    finally:
        os.close(fd)


def test_log_from_8_processes_while_index_and_fix_run(make_vault):
    root = make_vault({f"memory/{DAY}.md": HEAD, "MEMORY.md": "# Memory\n",
                       "memory/INDEX.md": "x\n"})
    journal = root / "memory" / f"{DAY}.md"
    ctx = mp.get_context("fork")
    failures = ctx.Queue()
    procs = [ctx.Process(target=_logger, args=(str(root), w, ENTRIES, failures))
             for w in range(WRITERS)]
    for p in procs:
        p.start()
    fixes = indexes = 0
    cwd = os.getcwd()
    os.chdir(root)
    try:
        while any(p.is_alive() for p in procs):
            _break_again(journal)
            assert _quiet(["check", "--fix", "--no-cache", "--select", "deprecated-property",
                           "."]) in (0, 1)
            fixes += 1
            assert _quiet(["index", "--no-cache", "."]) == 0
            indexes += 1
    finally:
        os.chdir(cwd)
        for p in procs:
            p.join(120)
    assert all(p.exitcode == 0 for p in procs)
    assert failures.empty()
    assert fixes >= 2 and indexes >= 2

    text = journal.read_text("utf-8")
    assert text.startswith("---\n") and f"# {DAY}\n" in text
    entries = re.findall(r"^### 10:00 \u2014 (w\d+-e\d+)\n\n((?:w\d+-e\d+ line \d\n)+)",
                         text, re.M)
    titles = [t for t, _ in entries]
    assert len(titles) == WRITERS * ENTRIES, f"{len(titles)} entries"
    assert len(set(titles)) == len(titles)  # nothing twice
    for title, body in entries:  # nothing interleaved: each body is its own three lines
        assert body == "".join(f"{title} line {k}\n" for k in range(1, 4)), (title, body)
    for w in range(WRITERS):  # each writer's entries in its own order
        mine = [int(t.split("-e")[1]) for t in titles if t.startswith(f"w{w}-")]
        assert mine == list(range(ENTRIES))
    # and nothing else crept in between the entries
    rest = re.sub(r"^### 10:00 \u2014 w\d+-e\d+\n\n(?:w\d+-e\d+ line \d\n)+", "", text, flags=re.M)
    assert rest.replace("\n", "") in (f"---tag: [journal]---# {DAY}", f"---tags: [journal]---# {DAY}")

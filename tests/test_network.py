"""vaultkit opens no network connection: every command runs with sockets blocked."""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import socket
from pathlib import Path

import pytest

from vaultkit.cli import COMMANDS, main

OLD = (dt.date.today() - dt.timedelta(days=40)).isoformat()
DAY = dt.date.today().isoformat()


class NetworkUsed(AssertionError):
    pass


@pytest.fixture
def no_network(monkeypatch):
    attempts = []

    def refuse(*args, **kwargs):
        attempts.append(args)
        raise NetworkUsed(f"network use: {args!r}")

    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket, "gethostbyname", refuse)
    monkeypatch.setattr(socket, "socketpair", refuse)
    return attempts


ARGVS = [
    ["init", "-q", "."],
    ["init", "--openclaw-snippet", "."],
    ["check", "."],
    ["check", "--select", "ALL", "--format", "sarif", "."],
    ["check", "--fix", "."],
    ["rules"],
    ["rule", "broken-link"],
    ["index", "."],
    ["index", "--check", "."],
    ["graph", "."],
    ["graph", "--format", "graphml", "."],
    ["graph", "--write-colors", "."],
    ["audit", "."],
    ["log", "--root", ".", "--title", "Offline", "what\nwhy\nnext"],
    ["promote", "--root", ".", f"memory/{DAY}.md:1"],  # the journal's title line
    ["search", "--root", ".", "memory"],
    ["get", "--root", ".", f"memory/{DAY}.md"],
    ["distill", "--root", "."],
    ["archive", "--root", ".", "--dry-run"],
    ["archive", "--root", "."],
    ["mcp", "--help"],  # the server itself: tests/test_mcp.py runs it with sockets blocked
    ["server", "--help"],  # the language server over stdio: tests/test_server.py
    ["history", "."],
    ["recover", "--all", "--dry-run"],
    ["snapshot", "."],  # snapshots stay local: only --push REMOTE contacts anything
    ["snapshot", "--report", "."],
    ["watch", "--service", "cron", "."],  # the loop itself: tests/test_watch.py
    ["report", ".", "-o", "report.html"],
    ["context", ".", "--show"],
]


def _commit_all(root: Path) -> None:
    import subprocess

    for args in (["init", "-q"], ["add", "-A"],
                 ["-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qm", "backup"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def test_every_command_is_listed():
    assert {a[0] for a in ARGVS} == set(COMMANDS)


def test_every_command_runs_offline(tmp_path, no_network):
    root = tmp_path / "vault"
    root.mkdir()
    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(root)
        for argv in ARGVS:
            if argv[0] == "archive" and "--dry-run" not in argv:
                journal = root / "memory" / f"{OLD}.md"
                journal.write_text(f"# {OLD}\n\n### 09:00 \u2014 Old\n\na\nb\nc\n")
            if argv[0] == "history":  # the history commands read a repository
                _commit_all(root)
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                rc = main(list(argv))
            assert rc in (0, 1), (argv, err.getvalue()[-2000:])
            assert "NetworkUsed" not in err.getvalue() and "internal error" not in err.getvalue()
    assert no_network == []
    assert (root / "memory" / "archive").is_dir()
    assert any((root / "memory" / "archive").rglob(f"{OLD}.md"))


def test_the_block_works(no_network):
    with pytest.raises(NetworkUsed):
        socket.create_connection(("example.com", 80))
    assert len(no_network) == 1

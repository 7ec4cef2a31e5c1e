"""vaultkit log: append-only journal entries, one locked O_APPEND write each."""

from __future__ import annotations

import datetime as dt
import io
import json
import multiprocessing as mp
import re
import sys

import pytest

from vaultkit.cli import main
from vaultkit.vault.profile import load_settings
from vaultkit.memory.journal import append_entry, render_entry, split_text

BODY = "- did the first thing\n- checked the second\n- next: the third"


def run_cli(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_creates_file_with_heading_and_entry(make_vault, capsys, monkeypatch):
    root = make_vault({})
    monkeypatch.chdir(root)  # paths are printed from the current folder
    code, out, err = run_cli(capsys, "log", BODY, "--title", "Deploy", "--date", "2026-02-15",
                             "--time", "14:30", "--root", str(root))
    assert code == 0, err
    text = (root / "memory/2026-02-15.md").read_text()
    assert text == ("# 2026-02-15\n\n### 14:30 — Deploy\n\n- did the first thing\n"
                    "- checked the second\n- next: the third\n")
    assert out.strip() == "memory/2026-02-15.md:3: ### 14:30 — Deploy"
    assert err == ""


def test_appends_without_touching_existing_bytes(make_vault, capsys, monkeypatch):
    before = "# 2026-02-15\n\n### 09:00 — Morning\n\nhand-written  \ttext\n"
    root = make_vault({"memory/2026-02-15.md": before})
    monkeypatch.chdir(root)
    code, out, _ = run_cli(capsys, "log", BODY, "-t", "Second", "--date", "2026-02-15",
                           "--time", "10:00", "--root", str(root))
    assert code == 0
    data = (root / "memory/2026-02-15.md").read_text()
    assert data.startswith(before)
    assert data[len(before):].startswith("\n### 10:00 — Second\n")
    assert out.startswith("memory/2026-02-15.md:7:")


def test_missing_final_newline_gets_one_in_the_same_write(make_vault, capsys):
    root = make_vault({"memory/2026-02-15.md": "# 2026-02-15\n\nno newline at end"})
    run_cli(capsys, "log", BODY, "-t", "X", "--date", "2026-02-15", "--time", "11:00",
            "--root", str(root))
    data = (root / "memory/2026-02-15.md").read_text()
    assert "no newline at end\n\n### 11:00 — X\n" in data
    lines = data.split("\n")
    assert lines[4] == "### 11:00 — X"  # line 5: the reported line
    out = capsys.readouterr()  # nothing left over


def test_reported_line_matches_file(make_vault, capsys):
    root = make_vault({"memory/2026-02-15.md": "# 2026-02-15\n\nno newline at end"})
    code, out, _ = run_cli(capsys, "log", BODY, "-t", "Y", "--date", "2026-02-15", "--time",
                           "11:00", "--root", str(root), "--json")
    result = json.loads(out)
    lines = (root / "memory/2026-02-15.md").read_text().split("\n")
    assert lines[result["line"] - 1] == "### 11:00 — Y"
    assert result["created"] is False and result["warnings"] == []


def test_crlf_journal_gets_crlf_entry(make_vault, capsys):
    root = make_vault({"memory/2026-02-15.md": b"# 2026-02-15\r\n\r\n### 09:00 \xe2\x80\x94 A\r\n"})
    run_cli(capsys, "log", BODY, "-t", "B", "--date", "2026-02-15", "--time", "10:00",
            "--root", str(root))
    data = (root / "memory/2026-02-15.md").read_bytes()
    assert data.count(b"\n") == data.count(b"\r\n")
    assert b"\r\n### 10:00 \xe2\x80\x94 B\r\n" in data


def test_stdin_and_first_line_title(make_vault, capsys, monkeypatch):
    root = make_vault({})
    monkeypatch.setattr(sys, "stdin", io.StringIO("Backup fixed\n\n" + BODY + "\n"))
    code, out, err = run_cli(capsys, "log", "-", "--date", "2026-02-15", "--time", "08:05",
                             "--root", str(root))
    assert code == 0, err
    text = (root / "memory/2026-02-15.md").read_text()
    assert "### 08:05 — Backup fixed\n\n- did the first thing\n" in text


ENTRY_RULES = ("entry-too-short", "entry-too-long", "filler-entry")
LOG_CASES = [
    # (case, text, what log does: "written", "folded" into one line, or the refusing rule)
    ("one line", "Restarted the gateway", "written"),
    ("one short line", "one line", "written"),
    ("a title and a line that says enough",
     "Gateway\nRestarted it after the token expired; raised the memory limit to 2G", "written"),
    ("a title and too little", "Short\none line only", "folded"),
    ("a title and two bullets", "Deploy\n- done\n- ok", "folded"),
    ("three lines", "Deploy\n- a\n- b\n- c", "written"),
    ("too long", "Long\n" + "\n".join(f"- point {i}" for i in range(31)), "entry-too-long"),
    # over the seeds' 15 lines: refused when written now, though a whole-vault check
    # reports only entries over twice that
    ("over the seeds' limit", "Long\n" + "\n".join(f"- point {i}" for i in range(20)),
     "refused"),
    ("filler", "Heartbeat\nsystem idle\nno changes\nnothing to report", "filler-entry"),
    ("filler in Chinese", "系统检查\n无变化\n一切正常\n无更新", "filler-entry"),
    ("a filler line alone", "HEARTBEAT_OK", "filler-entry"),
]


@pytest.mark.parametrize("text,outcome", [c[1:] for c in LOG_CASES], ids=[c[0] for c in LOG_CASES])
def test_log_never_writes_an_entry_check_reports(make_vault, capsys, text, outcome):
    """Both ways: what `log` writes, `check` accepts; what `log` refuses, `check` would
    report if it were written by hand."""
    from test_rules_support import findings

    root = make_vault({"memory/2026-02-14.md": "# 2026-02-14\n"})
    journal = root / "memory/2026-02-15.md"
    code, out, err = run_cli(capsys, "log", text, "--date", "2026-02-15", "--time", "10:00",
                             "--root", str(root))
    if outcome in ("written", "folded"):
        assert code == 0, err
        written = journal.read_text(encoding="utf-8")
        assert written.count("### ") == 1
        if outcome == "folded":  # the body joined onto the title: one line, nothing lost
            title, body = split_text(text, None)
            assert "### 10:00 — " + title + ": " in written and written.rstrip().count("\n") == 2
            assert all(ln.lstrip("- ") in written for ln in body)
        assert findings(root, *ENTRY_RULES) == []
        return
    assert code == 1 and f"refused" in err and "nothing written" in err
    assert not journal.exists()
    title, body = split_text(text, None)
    journal.write_text("# 2026-02-15\n" + render_entry("10:00", title, body), encoding="utf-8")
    assert [f[0] for f in findings(root, *ENTRY_RULES)] == ([] if outcome == "refused"
                                                            else [outcome])


def test_a_folded_entry_would_be_reported_as_written(make_vault):
    """The fold is no loophole: the same text as a heading and a body is too short."""
    from test_rules_support import findings

    root = make_vault({"memory/2026-02-15.md": "# 2026-02-15\n"
                       + render_entry("10:00", "Short", ["one line only"])})
    assert findings(root, "entry-too-short") == [("entry-too-short", "memory/2026-02-15.md", 3)]


def test_headings_inside_the_text_still_warn(make_vault, capsys):
    root = make_vault({})
    code, out, err = run_cli(capsys, "log", "Split\n- a\n- b\n## Not a subheading\n- c",
                             "--date", "2026-02-15", "--root", str(root))
    assert code == 0
    assert "headings of level 1-3" in err and "warning" in err
    assert (root / "memory/2026-02-15.md").read_text().count("### ") == 1


def test_refusal_as_json(make_vault, capsys):
    root = make_vault({"memory/2026-02-14.md": "# 2026-02-14\n"})
    code, out, err = run_cli(capsys, "log", "HEARTBEAT_OK", "--json", "--root", str(root))
    assert code == 1
    assert json.loads(out)["rule"] == "filler-entry" and json.loads(out)["refused"] is True


def test_good_entry_has_no_warning(make_vault, capsys):
    root = make_vault({})
    code, out, err = run_cli(capsys, "log", "Deploy\n" + BODY, "--root", str(root))
    assert code == 0 and err == ""


def test_timezone_from_config(make_vault, monkeypatch):
    root = make_vault({"vaultkit.toml": 'timezone = "Pacific/Kiritimati"\n'})
    settings = load_settings(root)
    from zoneinfo import ZoneInfo

    expected = dt.datetime.now(ZoneInfo("Pacific/Kiritimati"))
    result = append_entry(root, settings, text="Title\n" + BODY)
    day = result.path.rsplit("/", 1)[-1][:-3]
    assert day in {expected.date().isoformat(),
                   (expected + dt.timedelta(minutes=1)).date().isoformat()}
    assert re.match(r"### \d\d:\d\d — Title", result.heading)


@pytest.mark.parametrize("argv,message", [
    (["--time", "25:00"], "--time"),
    (["--time", "9.30"], "--time"),
    (["--date", "2026-02-30"], "--date"),
    (["--date", "2026-2-3"], "--date"),
])
def test_bad_time_or_date_is_a_one_line_error(make_vault, capsys, argv, message):
    root = make_vault({})
    code, out, err = run_cli(capsys, "log", "T\n" + BODY, *argv, "--root", str(root))
    assert code == 2 and message in err and "Traceback" not in err
    assert not (root / "memory").exists() or not any((root / "memory").iterdir())


def test_bad_timezone_is_a_one_line_error(make_vault, capsys):
    root = make_vault({"vaultkit.toml": 'timezone = "Mars/Olympus"\n'})
    code, out, err = run_cli(capsys, "log", "T\n" + BODY, "--root", str(root))
    assert code == 2 and "Mars/Olympus" in err


def test_empty_text_is_refused(make_vault, capsys, monkeypatch):
    root = make_vault({})
    monkeypatch.setattr(sys, "stdin", io.StringIO("   \n"))
    code, out, err = run_cli(capsys, "log", "-", "--root", str(root))
    assert code == 2 and "nothing to log" in err


def test_render_and_split():
    assert render_entry("14:30", "T", ["- a"]) == "\n### 14:30 — T\n\n- a\n"
    assert split_text("\n\n# Title here\n\nbody\n\n", None) == ("Title here", ["body"])


# -- concurrency: 8 processes x 200 calls ------------------------------------------

def _writer(root: str, worker: int, count: int) -> None:
    for i in range(count):
        text = "\n".join(f"- worker {worker} call {i} line {n}" for n in (1, 2, 3))
        code = main(["log", text, "--title", f"w{worker}-{i}",
                     "--date", "2026-03-01", "--time", "12:00", "--root", root])
        assert code == 0


def test_concurrent_writers_never_interleave(make_vault):
    root = make_vault({})
    ctx = mp.get_context("fork")
    procs = [ctx.Process(target=_writer, args=(str(root), w, 200)) for w in range(8)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(300)
        assert p.exitcode == 0
    text = (root / "memory/2026-03-01.md").read_text()
    assert text.startswith("# 2026-03-01\n\n### ")
    assert text.count("# 2026-03-01\n") == 1  # created exactly once
    blocks = text.split("\n### 12:00 — ")[1:]
    assert len(blocks) == 1600
    seen = set()
    for block in blocks:
        lines = block.rstrip("\n").split("\n")
        m = re.fullmatch(r"w(\d)-(\d+)", lines[0])
        assert m, lines[0]
        w, i = m.groups()
        assert lines[1] == ""
        assert lines[2:] == [f"- worker {w} call {i} line {n}" for n in (1, 2, 3)]
        seen.add((int(w), int(i)))
    assert seen == {(w, i) for w in range(8) for i in range(200)}


def test_journal_moved_while_waiting_for_the_lock(make_vault, monkeypatch):
    """archive moves a journal while log waits for its lock: the entry must not follow it."""
    import fcntl
    import os

    from vaultkit.memory import journal

    root = make_vault({"memory/2026-01-05.md": "# 2026-01-05\n"})
    (root / "memory/archive").mkdir()
    real_flock = fcntl.flock
    moved = []

    def flock(fd, op):
        if not moved and op == fcntl.LOCK_EX:
            os.rename(root / "memory/2026-01-05.md", root / "memory/archive/2026-01-05.md")
            moved.append(True)
        return real_flock(fd, op)

    monkeypatch.setattr(journal.fcntl, "flock", flock)
    result = append_entry(root, load_settings(root), text="T\n" + BODY, date="2026-01-05",
                          time="10:00")
    assert moved and result.created
    assert (root / "memory/archive/2026-01-05.md").read_text() == "# 2026-01-05\n"
    assert "### 10:00 — T" in (root / "memory/2026-01-05.md").read_text()

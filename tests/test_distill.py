"""vaultkit distill: the weekly report; it changes nothing."""

from __future__ import annotations

import datetime as dt
import json
import os

import pytest

from vaultkit.cli import main

TODAY = dt.date(2026, 3, 8)


def d(n):
    return (TODAY - dt.timedelta(days=n)).isoformat()


FILES = {
    "MEMORY.md": (
        "# MEMORY\n\n## Facts\n"
        "- Currently migrating the blog to the new VPS.\n"
        "- Ray's timezone is Asia/Shanghai (2025-06-01).\n"
        "- Use printf >> for every memory write.\n"
        "- See [[old-choice]] for the storage engine.\n"
        "- See [[gone-note]] for details.\n"
        "- Beijing time maps to US trading days Tuesday through Saturday every week.\n"
        "- 目前 正在 迁移 服务器\n"
    ),
    "memory/decisions/old-choice.md": "---\ntype: decision\nstatus: superseded\n---\n# Old\n",
    "memory/lessons/cron.md": (
        "---\ntype: lesson\n---\n# Cron\n\n## Alignment (2026-02-13)\n"
        "Beijing time maps to US trading days Tuesday through Saturday.\n"),
    f"memory/{d(1)}.md": (
        f"# {d(1)}\n\n### 10:00 — Decided to keep SQLite\n\n- compared options\n- chose FTS5\n"
        "- no vector DB\n\n### 11:00 — Deploy\n\n- shipped v2\n- lesson learned: roll back first\n"
        "- noted\n\n### 12:00 — Tagged\n\n- #preference Ray wants numbers first\n- a\n- b\n"),
    f"memory/{d(2)}.md": (
        f"# {d(2)}\n\n### 09:00 — Heartbeat\n\nsystem idle, no changes\n\n"
        "### 10:00 — 心跳\n\n无变化\n"),
    f"memory/{d(3)}.md": f"# {d(3)}\n\n### 09:00 — 复盘\n\n- 经验教训：先止损\n- a\n- b\n",
    f"memory/{d(10)}.md": f"# {d(10)}\n\n### 09:00 — Decided long ago\n\n- x\n- y\n- z\n",
}


@pytest.fixture
def vault_dir(make_vault, monkeypatch):
    monkeypatch.setattr("vaultkit.memory.memset.today", lambda settings: TODAY)
    return make_vault(FILES)


def report(capsys, root, *argv):
    code = main(["distill", "--root", str(root), *argv])
    out = capsys.readouterr()
    assert code == 0, out.err
    return out.out


def test_json_report(vault_dir, capsys):
    data = json.loads(report(capsys, vault_dir, "--format", "json"))
    assert data["window"]["from"] == d(6) and data["window"]["to"] == TODAY.isoformat()
    assert len(data["window"]["journals"]) == 3  # d(10) is outside the window
    kinds = {(c["kind"], c["heading"]) for c in data["candidates"]}
    assert ("decision", "Decided to keep SQLite") in kinds
    assert ("lesson", "Deploy") in kinds
    assert ("preference", "Tagged") in kinds
    assert ("lesson", "复盘") in kinds
    assert not any(c["heading"] == "Decided long ago" for c in data["candidates"])
    reasons = {c["heading"]: c["reason"] for c in data["candidates"]}
    assert reasons["Tagged"].startswith("tag #preference")
    assert "heading" in reasons["Decided to keep SQLite"]
    assert [f["date"] for f in data["fillerDays"]] == [d(2)]
    assert data["fillerDays"][0]["entries"] == 2


@pytest.mark.parametrize("line,problem,detail", [
    (4, "stale", "time-bound wording 'Currently'"),
    (5, "stale", "dated 2025-06-01"),
    (7, "stale", "status is superseded"),
    (8, "stale", "does not exist"),
    (9, "duplicate", "memory/lessons/cron.md:7"),
    (10, "stale", "'目前'"),
])
def test_memory_findings(vault_dir, capsys, line, problem, detail):
    data = json.loads(report(capsys, vault_dir, "--format", "json"))
    found = [m for m in data["memory"] if m["line"] == line and m["problem"] == problem]
    assert found and detail in found[0]["detail"], data["memory"]


def test_durable_entry_not_flagged(vault_dir, capsys):
    data = json.loads(report(capsys, vault_dir, "--format", "json"))
    assert not [m for m in data["memory"] if m["line"] == 6]


def test_markdown_report_and_checklist(vault_dir, capsys):
    out = report(capsys, vault_dir)
    assert out.startswith(f"# Distillation {d(6)} – {TODAY.isoformat()}")
    for heading in ("## Decision candidates (1)", "## Lesson candidates (2)",
                    "## Preference candidates (1)", "## MEMORY.md review",
                    "## Filler-only days (1)",
                    "## Checklist"):
        assert heading in out
    checklist = out.split("## Checklist")[1]
    assert checklist.count("- [ ] ") >= 5
    assert "memory/decisions/" in checklist and "memory/lessons/" in checklist


def test_changes_nothing(vault_dir, capsys):
    def snapshot():
        out = {}
        for folder, dirs, files in os.walk(vault_dir):
            dirs[:] = [x for x in dirs if x != ".vaultkit"]
            for name in files:
                p = os.path.join(folder, name)
                out[p] = (open(p, "rb").read(), os.stat(p).st_mtime_ns)
        return out

    before = snapshot()
    report(capsys, vault_dir)
    report(capsys, vault_dir, "--format", "json")
    assert snapshot() == before


def test_days_option(vault_dir, capsys):
    data = json.loads(report(capsys, vault_dir, "--format", "json", "--days", "14"))
    assert any(c["heading"] == "Decided long ago" for c in data["candidates"])
    code = main(["distill", "--root", str(vault_dir), "--days", "0"])
    assert code == 2


def test_a_candidate_quotes_the_line_that_made_it_one_with_the_command_that_promotes_it(
        vault_dir, capsys, monkeypatch):
    """The line holding "lesson learned" (or the tag), not the entry's first line, is
    quoted, numbered and named in the `vaultkit promote` command; that command promotes
    exactly it."""
    data = json.loads(report(capsys, vault_dir, "--format", "json"))
    by = {c["heading"]: c for c in data["candidates"]}
    journal = f"memory/{d(1)}.md"
    lines = (vault_dir / journal).read_text().split("\n")
    deploy = by["Deploy"]  # entry at line 9: "- shipped v2", then "- lesson learned: ..."
    assert deploy["line"] == 9 and deploy["excerptLine"] == 12
    assert lines[11] == "- lesson learned: roll back first"
    assert deploy["excerpt"] == "lesson learned: roll back first"
    assert deploy["command"] == f"vaultkit promote {journal}:12"
    tagged = by["Tagged"]
    assert tagged["excerpt"] == "#preference Ray wants numbers first"
    assert tagged["command"] == f"vaultkit promote {journal}:{tagged['excerptLine']}"
    assert lines[tagged["excerptLine"] - 1] == "- #preference Ray wants numbers first"
    heading = by["Decided to keep SQLite"]  # the heading made it one: the heading is promoted
    assert heading["excerptLine"] == heading["line"] == 3
    assert heading["excerpt"] == "Decided to keep SQLite"
    out = report(capsys, vault_dir)
    assert (f"**Deploy** — 'lesson learned' in the entry; line 12: “lesson learned: roll back "
            f"first”; promote: `vaultkit promote {journal}:12`") in out
    assert (f"**Decided to keep SQLite** — heading says 'Decided'; promote: "
            f"`vaultkit promote {journal}:3`") in out
    # the command does what it says: that line lands in MEMORY.md
    monkeypatch.chdir(vault_dir)
    assert main(deploy["command"].split()[1:] + ["--format", "json"]) == 0
    promoted = json.loads(capsys.readouterr().out)["promoted"]
    assert [p["text"] for p in promoted] == ["lesson learned: roll back first"]


def test_a_candidate_already_promoted_names_where_it_is_and_no_command(vault_dir, capsys,
                                                                      monkeypatch):
    """After `vaultkit promote` (or a person) put a candidate's line in MEMORY.md, distill
    says where it is instead of offering to promote it again; the others keep their
    command."""
    journal = f"memory/{d(1)}.md"
    monkeypatch.chdir(vault_dir)
    assert main(["promote", f"{journal}:12"]) == 0
    capsys.readouterr()
    data = json.loads(report(capsys, vault_dir, "--format", "json"))
    by = {c["heading"]: c for c in data["candidates"]}
    memory = (vault_dir / "MEMORY.md").read_text().split("\n")
    where = by["Deploy"]["promoted"]
    assert where.startswith("MEMORY.md:") and by["Deploy"]["command"] == ""
    assert memory[int(where.split(":")[1]) - 1] == "- lesson learned: roll back first"
    assert by["Tagged"]["promoted"] is None and by["Tagged"]["command"].startswith("vaultkit promote")
    out = report(capsys, vault_dir)
    assert f"first”; already in {where}" in out
    assert f"promote: `vaultkit promote {journal}:12`" not in out


def test_each_stale_or_duplicated_memory_line_names_the_command_that_archives_it(
        vault_dir, capsys, monkeypatch):
    """distill names `vaultkit archive MEMORY.md:N` for each stale or duplicated line, and
    the command does what it says: the line leaves MEMORY.md for the archive note, kept."""
    data = json.loads(report(capsys, vault_dir, "--format", "json"))
    commands = {(m["line"], m["command"]) for m in data["memory"]}
    assert commands == {(n, f"vaultkit archive MEMORY.md:{n}") for n in (4, 5, 7, 8, 9, 10)}
    out = report(capsys, vault_dir)
    assert "- line 4 (stale): Currently migrating the blog to the new VPS. — time-bound " \
           "wording 'Currently'; archive: `vaultkit archive MEMORY.md:4`" in out
    checklist = out.split("## Checklist")[1]
    assert "archive it with the `vaultkit archive MEMORY.md:LINE` it names" in checklist
    assert "(`vaultkit archive MEMORY.md:LINE` moves the MEMORY.md copy" in checklist
    line = (vault_dir / "MEMORY.md").read_text(encoding="utf-8").splitlines()[3]
    [command] = [m["command"] for m in data["memory"] if m["line"] == 4]
    monkeypatch.chdir(vault_dir)  # (run in the vault, as the report's reader would)
    assert main(command.split()[1:]) == 0, capsys.readouterr().err
    capsys.readouterr()
    assert line not in (vault_dir / "MEMORY.md").read_text(encoding="utf-8").splitlines()
    archived = (vault_dir / "memory/archive/MEMORY-archive.md").read_text(encoding="utf-8")
    assert archived.splitlines()[-1] == line
    assert archived.splitlines()[-2].startswith("<!-- vaultkit-archived:MEMORY.md:4 left:")
    data = json.loads(report(capsys, vault_dir, "--format", "json"))
    assert all("Currently migrating" not in m["text"] for m in data["memory"])

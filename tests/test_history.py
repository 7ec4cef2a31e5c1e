"""``vaultkit history``, ``vaultkit recover`` and the audit's ``history`` check, on a
generated repository with one of each loss event (tests/history_repo.py)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

import history_repo as hr
from vaultkit.cli import main
from vaultkit.memory.history import lost_lines, scan_history
from vaultkit.vault.loss import lost_lines as exact_lost_lines
from vaultkit.vault.profile import load_settings

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return hr.build(tmp_path_factory.mktemp("history") / "vault")


@pytest.fixture
def repo(built, tmp_path):
    """A private copy of the generated repository (tests may write to it)."""
    dest = tmp_path / "vault"
    shutil.copytree(built.path, dest, symlinks=True)
    return hr.HistoryRepo(dest, built.env, dict(built.commits))


def scan(repo, **kw):
    return scan_history(repo.path, load_settings(repo.path), **kw)


def snapshot(path):
    return {p.relative_to(path).as_posix(): p.read_bytes() for p in path.rglob("*")
            if p.is_file() and ".git" not in p.relative_to(path).parts}


# -- history -----------------------------------------------------------------------------

def test_exactly_one_event_of_each_kind_with_commit_and_count(built):
    history = scan(built)
    got = [(e.kind, e.path, e.subject, e.author.split(" <")[0]) for e in history.events]
    assert got == [(x.kind, x.path, x.subject, x.author) for x in hr.EXPECTED]
    for event, want in zip(history.events, hr.EXPECTED):
        assert event.commit == built.commits[want.subject]
        if want.lines:
            assert event.lines == want.lines, event
    assert history.commits == 9


def test_rename_archive_move_and_appends_are_not_losses(built):
    paths = {e.path for e in scan(built).events}
    assert hr.KNOWLEDGE_OLD not in paths and hr.KNOWLEDGE_NEW not in paths
    assert hr.OLD_JOURNAL not in paths and hr.LATER_JOURNAL not in paths
    assert hr.REFERENCE not in paths
    kinds = [e.kind for e in scan(built).events]
    assert kinds.count("mass-deletion") == 0  # the AGENTS.md trim moved its lines to a note


def test_event_details(built):
    events = {e.kind: e for e in scan(built).events}
    rewrite = events["journal-rewrite"]
    assert [line for line in rewrite.lost if line.strip()] == hr.JOURNAL_LOST
    assert rewrite.date.startswith(hr.day(1) + "T03:00:00")
    assert rewrite.bytes == sum(len(line.encode()) + 1 for line in rewrite.lost)
    shrink = events["memory-shrink"]
    assert shrink.before == 20 and shrink.lost == hr.MEMORY_LOST
    deleted = events["note-deleted"]
    assert deleted.blob == hr.DECISION_TEXT.encode() and deleted.bytes == len(deleted.blob)
    period = events["bootstrap-truncated"]
    assert period.days == pytest.approx(3.0)
    assert period.end_commit == built.commits["backup: trim AGENTS.md"]
    assert period.limit == 20000 and period.chars > 0
    assert period.recovered  # it ended
    assert not any(e.recovered for e in events.values() if e is not period)


def test_since_keeps_later_commits_only(built):
    history = scan(built, since=hr.day(3))
    assert [e.kind for e in history.events] == ["bootstrap-truncated", "note-deleted"]


def test_cli_text_and_json(built, capsys, monkeypatch):
    assert main(["history", str(built.path)]) == 0
    out = capsys.readouterr().out
    assert "journal-rewrite  " + hr.JOURNAL in out
    assert "8 journal lines" in out and "by cron <cron@example.com>: 'cron: nightly summary'" in out
    assert "4 loss events in 9 commits, 3 not recovered." in out
    assert main(["history", str(built.path), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [e["kind"] for e in data["events"]] == [x.kind for x in hr.EXPECTED]
    assert data["events"][-1]["commit"] == built.commits["cron: nightly summary"]


@pytest.mark.parametrize("args, message", [
    (["--since", "last tuesday"], "give a date written YYYY-MM-DD"),
    (["--since", "2026-02-30"], "give a date written YYYY-MM-DD"),
])
def test_bad_since_is_a_usage_error(built, capsys, args, message):
    assert main(["history", str(built.path), *args]) == 2
    assert message in capsys.readouterr().err


def test_outside_git_answers_the_same_way_with_or_without_a_loss(tmp_path, capsys):
    # a folder without git: exit 0 and the same summary shape, before any snapshot and
    # once the snapshots hold a loss
    vault = tmp_path / "v"
    (vault / ".obsidian").mkdir(parents=True)
    assert main(["history", str(vault)]) == 0
    out = capsys.readouterr().out
    assert out == ("0 loss events between commits (/{0} is not in a git repository: only "
                   "vaultkit's snapshots were read), 0 not recovered.\n").format(
        str(vault).lstrip("/"))
    journal = vault / "memory" / "2026-12-01.md"
    journal.parent.mkdir()
    journal.write_text("# 2026-12-01\n\n## 09:00 Kept\n- one\n- two\n- three\n")
    assert main(["snapshot", str(vault)]) == 0
    journal.write_text("# 2026-12-01\n")
    capsys.readouterr()
    assert main(["history", str(vault)]) == 0
    out = capsys.readouterr().out
    assert "journal-rewrite" in out and out.rstrip().endswith(
        "only vaultkit's snapshots were read), 1 not recovered.")
    assert main(["history", str(vault), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["outsideGit"].endswith("is not in a git repository") and data["commits"] == 0


def test_empty_repository_has_no_events(tmp_path, capsys):
    (tmp_path / ".obsidian").mkdir()
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    assert main(["history", str(tmp_path)]) == 0
    assert "0 loss events in 0 commits" in capsys.readouterr().out


def test_append_onto_a_line_without_newline_is_not_a_loss(tmp_path):
    repo = hr.HistoryRepo(tmp_path, hr.git_env())
    (tmp_path / ".obsidian").mkdir()
    repo.git("init", "-q")
    repo.write("memory/2026-02-01.md", "# 2026-02-01\n\n### 09:00 — A\n- one")
    repo.commit("one", "2026-02-01T10:00:00")
    repo.write("memory/2026-02-01.md", "# 2026-02-01\n\n### 09:00 — A\n- one more\n- two\n")
    repo.commit("two", "2026-02-01T11:00:00")
    repo.write("memory/2026-02-01.md", "# 2026-02-01\n\n### 09:00 — A\n- one more\n")
    repo.commit("three", "2026-02-01T12:00:00")
    events = scan(repo).events
    assert [(e.subject, e.lost) for e in events] == [("three", ["- two"])]


def test_a_committed_journal_line_corrected_is_listed_as_an_edit(tmp_path, capsys):
    """The model of loss: a typo fixed in a committed journal line is an edit, listed by
    `history` so the change is seen, never counted as a loss nor brought back."""
    repo = hr.HistoryRepo(tmp_path, hr.git_env())
    (tmp_path / ".obsidian").mkdir()
    repo.git("init", "-q")
    repo.write("memory/2026-02-01.md", "# 2026-02-01\n\n### 09:00 — A\n- Deplyoed v1.2\n- two\n")
    repo.commit("one", "2026-02-01T10:00:00")
    repo.write("memory/2026-02-01.md", "# 2026-02-01\n\n### 09:00 — A\n- Deployed v1.2\n- two\n")
    repo.commit("typo", "2026-02-01T11:00:00")
    events = scan(repo).events
    assert [(e.kind, e.subject, e.lines, e.is_loss, e.recovered) for e in events] == [
        ("journal-edit", "typo", 1, False, False)]
    assert main(["history", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "journal-edit" in out and "an edit, not a loss" in out
    assert "0 loss events in 2 commits, 0 not recovered; 1 journal edit." in out
    before = repo.read("memory/2026-02-01.md")
    assert main(["recover", "--all", "--root", str(tmp_path)]) == 0
    assert main(["recover", events[0].id, "--root", str(tmp_path)]) == 0
    assert "edited, not lost" in capsys.readouterr().out
    assert repo.read("memory/2026-02-01.md") == before  # nothing written back


def test_a_renames_link_rewrite_is_not_a_loss():
    old = "# d\n- see [[deploys]] and [notes](deploys.md)\n- plain\n"
    new = "# d\n- see [[deploy-checklist]] and [notes](deploy-checklist.md)\n- plain\n"
    assert lost_lines(old, new) == []
    # the same text with other words changed is no rename: the exact comparison loses
    # the line, and the judgement of a loss calls it an edit (it keeps most of the line)
    assert exact_lost_lines(old, new.replace("see", "saw")) == [
        "- see [[deploys]] and [notes](deploys.md)"]
    assert lost_lines(old, new.replace("see", "saw")) == []
    assert lost_lines(old, new.replace("see [[deploy-checklist]] and", "drop")) == [
        "- see [[deploys]] and [notes](deploys.md)"]


def test_lost_lines_is_a_multiset_difference():
    assert lost_lines("a\nb\na\nc\n", "c\na\nb\n") == ["a"]
    assert lost_lines("a\nb\n", "b\na\n") == []
    assert lost_lines("a\r\nb\r\n", "a\nb\nc\n") == []


# -- recover -------------------------------------------------------------------------------

def test_recover_all_restores_every_line_and_a_second_run_changes_nothing(repo, capsys):
    journal_before = repo.read(hr.JOURNAL)
    assert main(["recover", "--all", "--root", str(repo.path)]) == 0
    out = capsys.readouterr().out
    assert out.count("put back") == 1 and out.count("appended") == 1 \
        and out.count("restored") == 1, out
    journal = repo.read(hr.JOURNAL)
    # a commit sealed the loss: the lines follow the committed text, untouched before them,
    # as they stood (blank line between the entries kept), with no heading of vaultkit's
    assert journal.startswith(journal_before)
    added = journal[len(journal_before):]
    assert added == "\n" + "\n".join(hr.JOURNAL_LOST[:4]) + "\n\n" \
        + "\n".join(hr.JOURNAL_LOST[4:]) + "\n", added
    assert "vaultkit" not in added and "Recovered" not in added
    note = repo.read("memory/semantic/recovered.md")
    assert all(line in note.splitlines() for line in hr.MEMORY_LOST)
    assert repo.read("MEMORY.md") == hr.MEMORY_CUT  # the curated file is not rewritten
    assert repo.read(hr.DECISION) == hr.DECISION_TEXT
    after = snapshot(repo.path)
    assert main(["recover", "--all", "--root", str(repo.path)]) == 0
    assert "nothing to recover" in capsys.readouterr().out
    assert snapshot(repo.path) == after
    assert all(e.recovered for e in scan(repo).events)


def test_dry_run_writes_nothing(repo, capsys):
    before = snapshot(repo.path)
    assert main(["recover", str(repo.path), "--all", "--dry-run"]) == 0
    assert capsys.readouterr().out.count("would ") == 3
    assert snapshot(repo.path) == before


def test_recover_one_event_by_id_and_a_taken_path_restores_beside(repo, capsys):
    repo.write(hr.DECISION, "# Another note now lives here\n")
    event = next(e for e in scan(repo).events if e.kind == "note-deleted")
    assert main(["recover", str(repo.path), event.id[:6]]) == 0  # PATH, then EVENT
    beside = hr.DECISION.replace(".md", f".recovered-{event.commit[:7]}.md")
    assert repo.read(beside) == hr.DECISION_TEXT
    assert repo.read(hr.DECISION) == "# Another note now lives here\n"
    assert f"as {beside}" in capsys.readouterr().out
    assert not (repo.path / "memory/semantic/recovered.md").exists()  # only that event
    assert next(e for e in scan(repo).events if e.kind == "note-deleted").recovered


def test_lines_put_back_by_hand_count_as_recovered(repo):
    repo.write("MEMORY.md", hr.MEMORY_TEXT)
    shrink = next(e for e in scan(repo).events if e.kind == "memory-shrink")
    assert shrink.recovered


@pytest.mark.parametrize("args, message", [
    (["nope"], "give an event id"),
    (["ffffffffff"], "no such loss event"),
    ([], "give one EVENT id"),
    (["abcd", "ef01", "--all"], "give one EVENT id"),
    (["a", "b", "abcd"], "give one EVENT id"),
])
def test_recover_usage_errors(repo, capsys, args, message):
    assert main(["recover", *args, "--root", str(repo.path)]) == 2
    assert message in capsys.readouterr().err


def test_recover_truncation_period_explains_there_is_nothing_to_bring_back(repo, capsys):
    event = next(e for e in scan(repo).events if e.kind == "bootstrap-truncated")
    assert main(["recover", event.id, "--root", str(repo.path)]) == 0
    assert "nothing to bring back" in capsys.readouterr().out


def test_recovered_vault_passes_check(repo, capsys):
    assert main(["recover", "--all", "--root", str(repo.path)]) == 0
    assert main(["index", "--root", str(repo.path)]) == 0
    capsys.readouterr()
    code = main(["check", str(repo.path), "--format", "json"])
    findings = json.loads(capsys.readouterr().out)
    assert code == 0
    assert [f["rule"] for f in findings if f["severity"] == "error"] == []
    new_files = {hr.JOURNAL, "memory/semantic/recovered.md", hr.DECISION}
    assert [f for f in findings if f["path"] in new_files and f["rule"] != "orphan-note"] == []


# -- the audit -------------------------------------------------------------------------------

def test_audit_warns_until_recovered(repo, capsys):
    assert main(["audit", str(repo.path), "--format", "json"]) in (0, 1)
    check = next(c for c in json.loads(capsys.readouterr().out) if c["id"] == "history")
    assert check["status"] == "warn"
    assert "3 memory-loss events in the last 30 days not recovered" in check["found"]
    assert "vaultkit recover --all" in check["hint"]
    main(["recover", "--all", "--root", str(repo.path)])
    capsys.readouterr()
    main(["audit", str(repo.path), "--format", "json"])
    check = next(c for c in json.loads(capsys.readouterr().out) if c["id"] == "history")
    assert check["status"] == "pass", check


def test_audit_outside_git_passes_history(tmp_path, capsys):
    (tmp_path / ".obsidian").mkdir()
    main(["audit", str(tmp_path), "--format", "json"])
    check = next(c for c in json.loads(capsys.readouterr().out) if c["id"] == "history")
    assert check["status"] == "pass" and "no git history" in check["found"]


# -- a memory-only vault inside the workspace's repository ------------------------------------

def test_memory_only_vault_sees_its_journals_and_the_workspace_memory_md(tmp_path, capsys):
    repo = hr.HistoryRepo(tmp_path, hr.git_env())
    repo.git("init", "-q")
    repo.write("memory/vaultkit.toml", 'memory-dir = "."\n')
    repo.write("MEMORY.md", hr.MEMORY_TEXT)
    repo.write("memory/2026-02-01.md", hr.JOURNAL_TEXT)
    repo.commit("backup: first", "2026-02-01T09:00:00")
    repo.write("MEMORY.md", hr.MEMORY_CUT)
    repo.write("memory/2026-02-01.md", hr.JOURNAL_REWRITE)
    repo.commit("cron: rewrite", "2026-02-02T03:00:00", author="cron")
    vault = tmp_path / "memory"
    events = scan_history(vault, load_settings(vault)).events
    assert sorted((e.kind, e.path) for e in events) == [
        ("journal-rewrite", "2026-02-01.md"), ("memory-shrink", "../MEMORY.md")]
    assert main(["recover", "--all", "--root", str(vault)]) == 0
    assert all(line in repo.read("memory/2026-02-01.md") for line in hr.JOURNAL_LOST)
    note = repo.read("memory/semantic/recovered.md")
    assert "## From MEMORY.md, cut by" in note
    assert all(line in note for line in hr.MEMORY_LOST)
    assert repo.read("MEMORY.md") == hr.MEMORY_CUT
    assert all(e.recovered for e in scan_history(vault, load_settings(vault)).events)


def test_by_design_rewrites_are_not_losses_and_trash_is_a_deletion(tmp_path):
    repo = hr.HistoryRepo(tmp_path, hr.git_env())
    (tmp_path / ".obsidian").mkdir()
    repo.git("init", "-q")
    notes = {"NOW.md": "# NOW\n\n- [ ] a\n- [ ] b\n- [ ] c\n- [ ] d\n",
             "memory/INDEX.md": "# Index\n\n- one\n- two\n- three\n- four\n",
             "memory/2026-01-01.md": "# 2026-01-01\n\n### 09:00 — A\n- one\n- two\n- three\n",
             "memory/people/ada.md": "---\ntype: person\n---\n# Ada\n\n- Engineer\n- Likes tea\n",
             "memory/semantic/tools.md": "# Tools\n\n- git\n- make\n- ripgrep\n"}
    for path, text in notes.items():
        repo.write(path, text)
    repo.commit("first", "2026-01-02T09:00:00")
    repo.write("NOW.md", "# NOW\n\n- [ ] e\n")  # the status board is rewritten by design
    repo.write("memory/INDEX.md", "# Index\n\n- one\n")  # generated
    repo.git("rm", "-q", "memory/2026-01-01.md")  # archived with a header added by hand:
    repo.write("memory/archive/2026-01-01.md", "<!-- archived -->\n" + "# 2026-01-01\n\n"
               "### 09:00 — A\n- one\n- two\n- three\n")
    (tmp_path / ".trash").mkdir()
    repo.git("mv", "memory/people/ada.md", ".trash/ada.md")  # Obsidian's trash
    repo.commit("second", "2026-01-03T09:00:00")
    # a note whose whole text went into another note in the same commit
    repo.git("rm", "-q", "memory/semantic/tools.md")
    repo.write("memory/semantic/toolbox.md", "# Toolbox\n\n## Tools\n- git\n- make\n"
               "- ripgrep\n")
    repo.commit("third", "2026-01-04T09:00:00")
    events = scan(repo).events
    assert [(e.kind, e.path, e.subject) for e in events] == [
        ("note-deleted", "memory/people/ada.md", "second")]


def test_recover_json_names_what_was_written(repo, capsys):
    assert main(["recover", "--all", "--json", "--root", str(repo.path)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["dryRun"] is False
    got = {(r["kind"], r["action"], r["path"], r["lines"]) for r in data["recovered"]}
    assert got == {("journal-rewrite", "put-back", hr.JOURNAL, len(hr.JOURNAL_LOST)),
                   ("memory-shrink", "append", "memory/semantic/recovered.md",
                    len(hr.MEMORY_LOST)),
                   ("note-deleted", "restore", hr.DECISION, hr.EXPECTED[1].lines),
                   ("bootstrap-truncated", "skip", "AGENTS.md", 0)}


def _memory_repo(tmp_path):
    repo = hr.HistoryRepo(tmp_path, hr.git_env())
    (tmp_path / ".obsidian").mkdir()
    repo.git("init", "-q")
    repo.write("MEMORY.md", MEMORY_HEAD + "\n".join(hr.MEMORY_LINES) + "\n")
    repo.commit("first", _days_ago(10))
    return repo


def _days_ago(days: float) -> str:
    """A commit date ``days`` before now (the audit reads the last 30 days)."""
    import datetime as dt

    return (dt.datetime.now() - dt.timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%S")


MEMORY_HEAD = "# MEMORY\n\n## approved_durable_entries\n"


def test_memory_md_cuts_of_any_size_in_git_history_are_losses(tmp_path, capsys):
    """With no pruning allowed (`memory-md-prune-ratio = 0`), durable lines that vanish
    from every note are lost however few: one line, then two, each well under half of
    the file, in separate commits and days."""
    repo = _memory_repo(tmp_path)
    repo.write("vaultkit.toml", "[git]\nmemory-md-prune-ratio = 0\n")
    lines = hr.MEMORY_LINES
    repo.write("MEMORY.md", MEMORY_HEAD + "\n".join(lines[:-1]) + "\n")
    repo.commit("trim one", _days_ago(5))
    repo.write("MEMORY.md", MEMORY_HEAD + "\n".join(lines[:-3]) + "\n")
    repo.commit("trim two", _days_ago(3))
    events = scan(repo).events
    assert [(e.kind, e.subject, e.lines, e.before) for e in events] == [
        ("memory-shrink", "trim two", 2, 19), ("memory-shrink", "trim one", 1, 20)]
    assert events[0].lost == lines[-3:-1] and events[1].lost == lines[-1:]
    assert "2 of its 19 non-blank lines" in events[0].describe()
    assert not any(e.recovered for e in events)
    assert main(["history", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "trim one" in out and "trim two" in out
    main(["audit", str(tmp_path), "--format", "json"])
    [check] = [c for c in json.loads(capsys.readouterr().out) if c["id"] == "history"]
    assert check["status"] == "warn"
    assert "2 memory-loss events" in check["found"] and "memory-shrink" in check["found"]
    assert main(["recover", str(tmp_path), "--all"]) == 0
    capsys.readouterr()
    assert not any(e for e in scan(repo).events if not e.recovered)


def test_a_distillation_into_other_notes_is_not_a_memory_md_loss(tmp_path, capsys):
    """The weekly distillation: lines of MEMORY.md moved into lessons and a topic note in
    the same commit lose nothing; one line dropped in that commit is the only loss."""
    repo = _memory_repo(tmp_path)
    lines = hr.MEMORY_LINES
    repo.write("memory/lessons/deploys.md", "# Deploys\n\n" + "\n".join(lines[2:6]) + "\n")
    repo.write("memory/projects/service.md", "# Service\n\n" + lines[6] + "\n")
    repo.write("MEMORY.md", MEMORY_HEAD + "\n".join(lines[:2] + lines[7:]) + "\n")
    repo.commit("weekly distillation", _days_ago(8))
    assert scan(repo).events == []
    assert main(["history", str(tmp_path)]) == 0
    capsys.readouterr()
    repo.write("memory/lessons/ops.md", "# Ops\n\n" + lines[7] + "\n")
    repo.write("MEMORY.md", MEMORY_HEAD + "\n".join(lines[:2] + lines[9:]) + "\n")
    repo.commit("next distillation", _days_ago(1))
    [event] = scan(repo).events  # one of 15 durable lines dropped: within the allowance
    assert (event.kind, event.subject, event.lost) == ("memory-pruned", "next distillation",
                                                       [lines[8]])


def test_memory_md_prune_within_the_allowance_is_listed_as_pruned(tmp_path, capsys):
    """A person prunes two stale lines of 20 (10%): within the default allowance (a
    quarter, 5 lines), so history lists it as pruned, not as a loss to recover; a
    consolidation rewrite that then drops 8 of the 18 left (44%) is a loss."""
    repo = _memory_repo(tmp_path)
    lines = hr.MEMORY_LINES
    repo.write("MEMORY.md", MEMORY_HEAD + "\n".join(lines[:-2]) + "\n")
    repo.commit("prune stale lines", _days_ago(4))
    [event] = scan(repo).events
    assert (event.kind, event.lines, event.before, event.limit) == ("memory-pruned", 2, 20, 5)
    assert event.lost == lines[-2:]
    assert "2 of its 20 durable lines" in event.describe()
    assert "pruned, within the allowance of 5" in event.describe()
    assert main(["history", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "memory-pruned  MEMORY.md" in out and "pruned on purpose, not a loss" in out
    assert out.rstrip().endswith("0 loss events in 2 commits, 0 not recovered; 1 MEMORY.md "
                                 "prune within the allowance.")
    main(["audit", str(tmp_path), "--format", "json"])
    [check] = [c for c in json.loads(capsys.readouterr().out) if c["id"] == "history"]
    assert check["status"] == "pass"
    assert main(["recover", str(tmp_path), "--all"]) == 0  # a prune was meant: left alone
    capsys.readouterr()
    assert not (tmp_path / "memory/semantic/recovered.md").exists()
    # a consolidation rewrite keeps 8 of the 16 entries left: 8 dropped, past the allowance
    repo.write("MEMORY.md", MEMORY_HEAD + "\n".join(lines[:-10]) + "\n")
    repo.commit("dreaming consolidation", _days_ago(2))
    events = scan(repo).events
    assert [(e.kind, e.subject, e.lines) for e in events] == [
        ("memory-shrink", "dreaming consolidation", 8), ("memory-pruned", "prune stale lines", 2)]


def test_history_names_openclaws_loss_fraction_as_the_pruning_allowance(tmp_path,
                                                                        monkeypatch):
    """With OpenClaw's `phases.deep.maxPriorEntryLossFraction` set in openclaw.json (0.5),
    a cut of 8 durable lines of 20 (40%) is a prune, and history says where the share came
    from; without it the same cut is a loss (the default quarter)."""
    repo = _memory_repo(tmp_path)
    lines = hr.MEMORY_LINES
    repo.write("MEMORY.md", MEMORY_HEAD + "\n".join(lines[:-8]) + "\n")
    repo.commit("dreaming consolidation", _days_ago(2))
    [event] = scan(repo).events
    assert event.kind == "memory-shrink"
    config = tmp_path.parent / "oc-config.json"
    config.write_text('{"plugins": {"entries": {"memory-core": {"config": {"dreaming": '
                      '{"phases": {"deep": {"maxPriorEntryLossFraction": 0.5}}}}}}}}')
    monkeypatch.setenv("OPENCLAW_CONFIG_PATH", str(config))
    [event] = scan(repo).events
    assert (event.kind, event.lines, event.before, event.limit) == ("memory-pruned", 8, 20, 10)
    assert event.describe().endswith(
        f"pruned, within the allowance of 10 ({config}: plugins.entries.memory-core.config."
        "dreaming.phases.deep.maxPriorEntryLossFraction)")
    assert event.to_dict()["allowanceSource"].startswith(str(config))


def test_a_fifo_where_a_lost_note_was_is_never_opened(repo, capsys):
    import os
    import stat

    os.mkfifo(repo.path / hr.DECISION)  # opening it for reading would block for ever
    event = next(e for e in scan(repo).events if e.kind == "note-deleted")
    assert not event.recovered
    assert main(["recover", str(repo.path), event.id]) == 0
    beside = hr.DECISION.replace(".md", f".recovered-{event.commit[:7]}.md")
    assert repo.read(beside) == hr.DECISION_TEXT
    assert stat.S_ISFIFO(os.lstat(repo.path / hr.DECISION).st_mode)
    os.unlink(repo.path / hr.JOURNAL)
    os.mkfifo(repo.path / hr.JOURNAL)  # no journal to append to: the recovery note takes them
    assert main(["recover", str(repo.path), "--all"]) == 0
    note = repo.read("memory/semantic/recovered.md")
    assert f"## From {hr.JOURNAL}, cut by" in note
    assert all(line in note.splitlines() for line in hr.JOURNAL_LOST)
    assert stat.S_ISFIFO(os.lstat(repo.path / hr.JOURNAL).st_mode)


def test_a_journal_archived_after_its_loss_gets_its_lines_where_it_is_now(tmp_path, capsys):
    repo = hr.HistoryRepo(tmp_path, hr.git_env())
    (tmp_path / ".obsidian").mkdir()
    repo.git("init", "-q")
    repo.write("memory/2026-01-05.md", hr.JOURNAL_TEXT)
    repo.commit("first", "2026-01-05T09:00:00")
    repo.write("memory/2026-01-05.md", hr.JOURNAL_REWRITE)
    repo.commit("cron", "2026-01-06T03:00:00", author="cron")
    (tmp_path / "memory/archive").mkdir()
    repo.git("mv", "memory/2026-01-05.md", "memory/archive/2026-01-05.md")
    repo.commit("archive", "2026-02-10T09:00:00")
    [event] = scan(repo).events
    assert (event.path, event.current) == ("memory/2026-01-05.md", "memory/archive/2026-01-05.md")
    assert main(["history", str(tmp_path)]) == 0
    assert "memory/2026-01-05.md (now memory/archive/2026-01-05.md)" in capsys.readouterr().out
    assert main(["recover", str(tmp_path), "--all"]) == 0
    archived = repo.read("memory/archive/2026-01-05.md")
    assert archived.startswith(hr.JOURNAL_REWRITE)
    assert all(line in archived for line in hr.JOURNAL_LOST)
    assert not (tmp_path / "memory/2026-01-05.md").exists()


def test_a_deleted_topic_note_is_listed(tmp_path):
    """memory/homelab.md (a topic note, the usual OpenClaw layout) deleted: a loss event."""
    repo = hr.HistoryRepo(tmp_path, hr.git_env())
    (tmp_path / ".obsidian").mkdir()
    repo.git("init", "-q")
    repo.write("memory/homelab.md", "# Homelab\n\n- NAS at 10.0.0.5\n- Router: OpenWrt\n")
    repo.write("memory/2026-02-01.md", "# 2026-02-01\n\n### 09:00 — A\n- one\n")
    repo.commit("one", "2026-02-01T10:00:00")
    (tmp_path / "memory/homelab.md").unlink()
    repo.commit("two", "2026-02-01T11:00:00")
    events = scan(repo).events
    assert [(e.kind, e.path, e.subject) for e in events] == [
        ("note-deleted", "memory/homelab.md", "two")]


def test_recover_puts_journal_lines_back_in_place_without_a_heading(tmp_path, capsys):
    # recover used to append the lines under 'HH:MM — Restored lines lost on <date>
    # <time>' and a marker comment: vaultkit's own text in memory. They go back where they
    # stood, as watch puts them, and the help says so
    from vaultkit.cli.commands.recover import DESCRIPTION

    assert "put back where they stood" in DESCRIPTION and "no heading or marker" in DESCRIPTION
    vault = tmp_path / "v"
    (vault / "memory").mkdir(parents=True)
    (vault / ".obsidian").mkdir()
    journal = vault / "memory" / "2026-12-01.md"
    old = "# 2026-12-01\n\n## 09:00 Kept\n- one\n- two\n- three\n"
    journal.write_text(old)
    assert main(["snapshot", str(vault)]) == 0
    journal.write_text("# 2026-12-01\n\n## 23:00 Summary\n- a quiet day\n")
    assert main(["recover", str(vault), "--all"]) == 0
    assert "put back 4 lines where they stood in memory/2026-12-01.md" in \
        capsys.readouterr().out
    # the overwritten journal: its old lines, then the summary, as an append leaves it
    assert journal.read_text() == old + "\n## 23:00 Summary\n- a quiet day\n"


# -- between commits: each change listed once, a branch switch no change -------------------

JOURNAL = "memory/2026-12-07.md"


def _snapshot_vault(tmp_path):
    """A vault in git with a committed journal and a first snapshot."""
    from cli_invoke import invoke
    from test_git import commit_all, init_repo

    root = init_repo(tmp_path / "vault")
    (root / ".obsidian").mkdir()
    (root / "memory").mkdir()
    (root / JOURNAL).write_text(
        "# 2026-12-07\n\n### 09:00 — Deployed the billing service\n\n"
        "Rolled out version 2.3 after the smoke tests passed on staging.\n", encoding="utf-8")
    commit_all(root, "journal")
    assert invoke(["snapshot", "--quiet"], root)[0] == 0
    return root


def _listed(root, *steps):
    """Run ``steps`` (a git command as a tuple, an entry to append as a str, a snapshot as
    None), then ``vaultkit history --format json``: ``(kind, source or commit subject)``
    of each event."""
    from cli_invoke import invoke
    from test_git import git

    for step in steps:
        if step is None:
            assert invoke(["snapshot", "--quiet"], root)[0] == 0
        elif isinstance(step, tuple):
            git(root, *step)
        else:
            with open(root / JOURNAL, "a", encoding="utf-8") as fh:
                fh.write(step)
    rc, out, err = invoke(["history", "--format", "json"], root)
    assert rc == 0, err
    return [(e["kind"], e.get("source") or e["subject"]) for e in json.loads(out)["events"]]


def _edit(root):
    text = (root / JOURNAL).read_text(encoding="utf-8")
    (root / JOURNAL).write_text(text.replace("version 2.3", "version 2.4"), encoding="utf-8")


def test_an_edit_seen_by_a_snapshot_and_then_committed_is_listed_once(tmp_path):
    """A line edited, a snapshot taken, then the edit committed: the commit's journal-edit
    is the one event (the snapshot's was listed beside it)."""
    root = _snapshot_vault(tmp_path)
    _edit(root)
    assert _listed(root, None) == [("journal-edit", "snapshot")]  # not committed yet
    assert _listed(root, ("commit", "-q", "--no-verify", "-am", "fix version")) == [
        ("journal-edit", "fix version")]


def test_a_loss_seen_by_a_snapshot_committed_then_recovered_is_listed_once(tmp_path):
    """A committed entry overwritten, a snapshot taken, the loss committed past the hook,
    then recovered and the recovery committed: the commit's journal-rewrite is the one
    event, recovered (the snapshot's was listed beside it once the lines were back in
    HEAD)."""
    from cli_invoke import invoke

    root = _snapshot_vault(tmp_path)
    (root / JOURNAL).write_text("# 2026-12-07\n\nSummary: deployed billing.\n",
                                encoding="utf-8")
    assert _listed(root, None, ("commit", "-q", "--no-verify", "-am", "summary")) == [
        ("journal-rewrite", "summary")]
    assert invoke(["recover", "--all"], root)[0] == 0
    assert _listed(root, None, ("commit", "-q", "--no-verify", "-am", "recovered")) == [
        ("journal-rewrite", "summary")]


BRANCH_ENTRY = "\n### 11:00 — Ran the test suite\n\nAll tests pass on the feature branch, 415 of 415.\n"
MAIN_ENTRY = "\n### 11:00 — Ran the test suite\n\nAll tests pass on the main branch, 412 of 412.\n"


def test_switching_branches_back_and_forth_is_no_edit_and_no_loss(tmp_path):
    """Each branch committed its own entry at the same place, one line like the other's;
    switching between them with snapshots between swaps one branch's committed lines for
    the other's: neither an edit (the lines are 0.6 alike) nor a loss, nor a recovered one.
    An edit made after, not committed, is listed once."""
    root = _snapshot_vault(tmp_path)
    steps = [("checkout", "-q", "-b", "feature"), BRANCH_ENTRY,
             ("commit", "-q", "--no-verify", "-am", "branch entry"), None,
             ("checkout", "-q", "main"), MAIN_ENTRY,
             ("commit", "-q", "--no-verify", "-am", "main entry"), None,
             ("checkout", "-q", "feature"), None, ("checkout", "-q", "main"), None]
    assert _listed(root, *steps) == []
    _edit(root)
    assert _listed(root, None) == [("journal-edit", "snapshot")]


def test_a_switch_to_a_branch_without_an_entry_and_back_is_no_loss(tmp_path):
    """Main committed an entry the feature branch lacks; a snapshot on the feature branch
    saw main's lines go (and the branch's come), then main again: main's lines are back, so
    that switch is not listed as a recovered loss either."""
    root = _snapshot_vault(tmp_path)
    other = "\n### 10:30 — Met Dana about the roadmap\n\nSearch rework moves to next sprint.\n"
    steps = [("checkout", "-q", "-b", "feature"), BRANCH_ENTRY,
             ("commit", "-q", "--no-verify", "-am", "branch entry"), None,
             ("checkout", "-q", "main"), None, other,
             ("commit", "-q", "--no-verify", "-am", "main entry"), None,
             ("checkout", "-q", "feature"), None, ("checkout", "-q", "main"), None]
    assert _listed(root, *steps) == []


def test_a_loss_after_switching_branches_is_still_listed(tmp_path):
    """The counterpart: after a switch to a branch and back, committed lines the work tree
    lost (no commit since) are still a loss, listed, not taken for a switch."""
    root = _snapshot_vault(tmp_path)
    steps = [("checkout", "-q", "-b", "feature"), BRANCH_ENTRY,
             ("commit", "-q", "--no-verify", "-am", "branch entry"),
             ("checkout", "-q", "main"), None]
    assert _listed(root, *steps) == []
    (root / JOURNAL).write_text("# 2026-12-07\n\nSummary: deployed billing.\n", encoding="utf-8")
    assert _listed(root, None) == [("journal-rewrite", "snapshot")]


# -- what recover, history and audit say of themselves --------------------------------------

def test_a_dry_run_says_its_answer_is_as_of_the_last_snapshot(tmp_path):
    """`recover --dry-run` records no snapshot, so a loss since the last one is not seen:
    its "nothing to recover" says so (it used to say every loss was recovered, and the run
    without --dry-run then put the lines back). The help says it too."""
    from cli_invoke import invoke

    root = _snapshot_vault(tmp_path)
    with open(root / JOURNAL, "a", encoding="utf-8") as fh:
        fh.write("\n### 10:00 — Met Dana\n\nThe search rework moves to next sprint.\n")
    assert invoke(["snapshot", "--quiet"], root)[0] == 0
    text = (root / JOURNAL).read_text(encoding="utf-8")
    (root / JOURNAL).write_text(text.split("\n### 10:00")[0] + "\n", encoding="utf-8")
    rc, out, _ = invoke(["recover", "--all", "--dry-run"], root)
    assert rc == 0
    assert out == ("nothing to recover: every loss event is recovered (as of the last "
                   "snapshot: --dry-run records none)\n")
    rc, out, _ = invoke(["recover", "--all"], root)
    assert rc == 0 and "put back 2 lines where they stood" in out
    rc, out, _ = invoke(["recover", "--all", "--dry-run"], root)
    assert out.startswith("nothing to recover: every loss event is recovered (as of")
    rc, out, _ = invoke(["recover", "--help"], root)
    assert "not even the snapshot a run records first" in " ".join(out.split())


def test_the_help_of_history_recover_and_audit_says_what_they_do(tmp_path):
    """Read as a new user would: history reads the snapshots (recording one first) beside
    the git history; recover --all leaves what is not a loss; audit names every status it
    prints and every mark --symbols draws, and its exit codes."""
    from cli_invoke import invoke
    from vaultkit.audit.render import _SYMBOLS, _WORDS

    def helped(*argv):
        rc, out, _ = invoke([*argv, "--help"], tmp_path)
        assert rc == 0
        return " ".join(out.split())

    history = helped("history")
    assert "first records a snapshot of the files" in history
    assert "only commits and snapshots from DATE on" in history
    assert "MEMORY.md cut past its pruning allowance" in history
    recover = helped("recover")
    assert "every loss event not recovered yet (a journal edit" in recover
    assert "its first four characters or more" in recover
    audit = helped("audit")
    for word in _WORDS.values():
        assert f"({word.strip()})" in audit or f"{word.strip()}/" in audit \
            or f"/{word.strip()} " in audit, word
    for mark in _SYMBOLS.values():
        assert mark.strip() in audit, mark
    assert "Exit 1 when any check fails (warnings, unknowns and tips do not), 2 on a usage " \
        "error" in audit

"""Regression tests for the first-day defects and frictions (issue 16)."""

from __future__ import annotations

import json
import re
import os
import subprocess
from pathlib import Path

import pytest

from vaultkit.cli import main


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _tree(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


# -- no vault marker: not a vault ---------------------------------------------------------

READING = [["check"], ["index", "--check"], ["graph"], ["search", "kickoff"],
           ["get", "MEMORY.md"], ["distill"], ["audit"], ["archive", "--dry-run"]]
WRITING = [["index"], ["log", "hello there"], ["graph", "--write-colors"], ["archive"],
           ["check", "--fix"]]


@pytest.mark.parametrize("argv", READING + WRITING, ids=lambda a: " ".join(a))
def test_a_folder_without_marker_is_not_a_vault(tmp_path, capsys, monkeypatch, argv):
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "notes.md").write_text("# just a note\n")
    monkeypatch.chdir(empty)
    before = _tree(empty)
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "not a vault" in lines[0] and "vaultkit init" in lines[0]
    assert _tree(empty) == before  # nothing written, not even a cache


def test_inside_a_code_repository_nothing_is_written_at_the_git_root(tmp_path, capsys,
                                                                     monkeypatch):
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "README.md").write_text("# a project\n")
    monkeypatch.chdir(repo / "src")
    before = _tree(repo)
    for argv in (["index"], ["log", "hello"], ["graph", "--write-colors"]):
        code, _, err = run(capsys, *argv)
        assert code == 2 and "not a vault" in err
    assert _tree(repo) == before


def test_root_option_needs_a_marker_too(tmp_path, capsys):
    bare = tmp_path / "bare"
    bare.mkdir()
    code, _, err = run(capsys, "index", "--root", str(bare))
    assert code == 2 and "not a vault" in err
    assert list(bare.iterdir()) == []


@pytest.mark.parametrize("marker", ["vaultkit.toml", ".obsidian/", "MEMORY.md", "AGENTS.md",
                                    "memory/"])
def test_each_marker_makes_a_vault(tmp_path, capsys, monkeypatch, marker):
    vault = tmp_path / "v"
    vault.mkdir()
    if marker.endswith("/"):
        (vault / marker).mkdir()
    else:
        (vault / marker).write_text("# Memory\n" if marker.endswith(".md") else "")
    monkeypatch.chdir(vault)
    code, out, err = run(capsys, "check", "--select", "VK101", "--no-cache")
    assert code == 0, err
    assert "All checks passed!" in out


def test_two_vaults_in_one_check_are_both_checked(make_vault, capsys, monkeypatch):
    one = make_vault({"memory/2026-2-3.md": "# x\n"}, root_name="one")
    two = make_vault({"memory/2026-13-01.md": "# y\n"}, root_name="two")
    monkeypatch.chdir(one.parent)
    code, out, _ = run(capsys, "check", "one", "two", "--select", "VK102", "--no-cache")
    assert code == 1
    assert "one/memory/2026-2-3.md:1:1: VK102" in out
    assert "two/memory/2026-13-01.md:1:1: VK102" in out
    assert "Found 2 findings" in out


def test_output_paths_are_relative_to_the_current_folder(make_vault, capsys, monkeypatch):
    vault = make_vault({"memory/2026-2-3.md": "# x\n"})
    monkeypatch.chdir(vault.parent)
    _, out, _ = run(capsys, "check", "vault", "--select", "VK102", "--no-cache")
    assert out.startswith("vault/memory/2026-2-3.md:1:1: VK102 ")
    monkeypatch.chdir(vault / "memory")
    _, out, _ = run(capsys, "check", "--select", "VK102", "--no-cache")
    assert out.startswith("2026-2-3.md:1:1: VK102 ")
    _, out, _ = run(capsys, "check", "--select", "VK102", "--no-cache", "--format", "github")
    assert out.startswith("::warning file=2026-2-3.md,line=1") or \
        out.startswith("::error file=2026-2-3.md,line=1")
    # machine formats keep the vault path
    _, out, _ = run(capsys, "check", "--select", "VK102", "--no-cache", "--format", "json")
    assert json.loads(out)[0]["path"] == "memory/2026-2-3.md"


# -- log refuses a journal that is not UTF-8 ---------------------------------------------

def test_log_refuses_to_append_to_a_journal_that_is_not_utf8(make_vault, capsys, monkeypatch):
    latin1 = "# 2026-12-01\n\n### 09:00 - Café\nnoted\n".encode("latin-1")
    vault = make_vault({"memory/2026-12-01.md": latin1})
    monkeypatch.chdir(vault)
    code, out, err = run(capsys, "log", "--date", "2026-12-01", "--time", "10:00", "Lunch\nate")
    assert code == 2
    assert "not valid UTF-8" in err and "nothing appended" in err
    assert (vault / "memory/2026-12-01.md").read_bytes() == latin1
    # a UTF-8 journal (with a BOM too) still takes entries
    (vault / "memory/2026-12-02.md").write_bytes("\ufeff# 2026-12-02\n\n### 09:00 — Café\nok\n"
                                                .encode("utf-8"))
    code, _, err = run(capsys, "log", "--date", "2026-12-02", "--time", "10:00", "Lunch\nate")
    assert code == 0, err


# -- a bad timezone is a config error for every command ----------------------------------

@pytest.mark.parametrize("argv", [["check"], ["index"], ["graph"], ["audit"]],
                         ids=lambda a: a[0])
def test_bad_timezone_is_caught_with_the_rest_of_the_config(make_vault, capsys, monkeypatch,
                                                             argv):
    vault = make_vault({"vaultkit.toml": 'timezone = "Mars/Olympus"\n'})
    monkeypatch.chdir(vault)
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.strip() == ("vaultkit: error: vaultkit.toml: timezone: unknown time zone "
                           "'Mars/Olympus' (use an IANA name such as 'Asia/Shanghai')")
    assert not (vault / "memory").exists()


def test_good_timezone_is_accepted(make_vault, capsys, monkeypatch):
    vault = make_vault({"vaultkit.toml": 'timezone = "Asia/Shanghai"\n'})
    monkeypatch.chdir(vault)
    code, _, err = run(capsys, "check", "--select", "VK101")
    assert code == 0, err


# -- audit: one word for a missing openclaw.json ------------------------------------------

def test_audit_names_a_missing_config_the_same_way_in_every_check(tmp_path, capsys,
                                                                   monkeypatch):
    from vaultkit.cli.starter import init_vault

    init_vault(tmp_path / "v")
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, "audit", "v", "--openclaw-config", "missing.json",
                       "--format", "json")
    checks = {c["id"]: c for c in json.loads(out)}
    mentions = {cid: c["found"] for cid, c in checks.items() if "missing.json" in c["found"]}
    assert {"memory-flush", "reserve-floor", "bootstrap-truncation"} <= set(mentions)
    assert all("does not exist" in found for found in mentions.values()), mentions
    assert not any("does not parse" in found for found in mentions.values())


# -- graph: plumbing files are not attachments ---------------------------------------------

def test_graph_counts_only_real_attachments_and_json_agrees(make_vault, capsys, monkeypatch):
    vault = make_vault({
        "vaultkit.toml": "", "unclosed_work.yaml": "items: []\n", "memory/decisions/.gitkeep": "",
        ".pre-commit-config.yaml": "repos: []\n",
        "memory/a.md": "# A\n![[chart.png]]\n", "attachments/chart.png": b"PNG",
        "attachments/unused.pdf": b"%PDF", "data/export.csv": "a,b\n",
    })
    monkeypatch.chdir(vault)
    _, out, _ = run(capsys, "graph")
    assert "attachments  2 (1 linked from notes)" in out
    _, out, _ = run(capsys, "graph", "--format", "json")
    data = json.loads(out)
    assert data["attachments"] == ["attachments/chart.png", "attachments/unused.pdf"]
    assert [n["id"] for n in data["nodes"] if n["kind"] == "attachment"] == \
        ["attachments/chart.png"]


# -- distill: a link's words are not the entry's ----------------------------------------------

def test_distill_ignores_decision_words_inside_links(make_vault, capsys, monkeypatch):
    vault = make_vault({
        "memory/decisions/pricing.md": "# Pricing\n",
        "memory/2026-12-01.md": (
            "# 2026-12-01\n\n### 09:00 — Call with Ada\n\n- went over [[pricing|the decision]]\n"
            "- see [the decision record](decisions/pricing.md)\n- nothing new\n\n"
            "### 10:00 — Storage\n\n- decided to keep SQLite\n- FTS5 is enough\n- no vectors\n"),
    })
    monkeypatch.chdir(vault)
    monkeypatch.setenv("TZ", "UTC")
    code, out, _ = run(capsys, "distill", "--format", "json", "--days", "100000")
    assert code == 0
    titles = [c["heading"] for c in json.loads(out)["candidates"] if c["kind"] == "decision"]
    assert titles == ["Storage"]


# -- check and audit agree on bootstrap truncation -------------------------------------------

def test_check_and_audit_count_bootstrap_characters_the_same_way(tmp_path, capsys,
                                                                  monkeypatch):
    from vaultkit.cli.starter import init_vault

    init_vault(tmp_path / "v")
    # 10,002 emoji: 10,002 code points, 20,004 UTF-16 units (what the runtime counts), plus
    # trailing blank lines the runtime trims
    (tmp_path / "v" / "MEMORY.md").write_text("# M\n" + "😀" * 10_000 + "\n\n\n",
                                              encoding="utf-8")
    monkeypatch.chdir(tmp_path / "v")
    monkeypatch.setenv("OPENCLAW_CONFIG_PATH", str(tmp_path / "none.json"))
    _, out, _ = run(capsys, "check", "--select", "VK303", "--format", "json", "--no-cache")
    found = json.loads(out)
    assert [d["path"] for d in found] == ["MEMORY.md"]
    assert "of its 20,004 chars" in found[0]["message"]
    _, out, _ = run(capsys, "audit", "--format", "json")
    truncation = {c["id"]: c for c in json.loads(out)}["bootstrap-truncation"]
    assert truncation["status"] == "fail"
    assert "of the 20,004 chars of MEMORY.md" in truncation["found"]


def test_audit_flags_a_file_the_runtime_drops_under_the_total_limit(tmp_path, capsys,
                                                                     monkeypatch):
    from vaultkit.cli.starter import init_vault

    init_vault(tmp_path / "v")
    config = tmp_path / "openclaw.json"
    # the newest contract loads six of the starter files: 3,791 units before BOOTSTRAP.md's
    # marker (over 40 units with its path), so 3,850 leaves MEMORY.md under 64 units
    config.write_text('{agents: {defaults: {bootstrapMaxChars: 5000, '
                      'bootstrapTotalMaxChars: 3850}}}')
    monkeypatch.chdir(tmp_path / "v")
    _, out, _ = run(capsys, "check", "--select", "VK303", "--format", "json", "--no-cache",
                    "--exit-zero")
    cut = {d["path"] for d in json.loads(out)}
    _, out, _ = run(capsys, "audit", "--format", "json", "--openclaw-config", str(config))
    truncation = {c["id"]: c for c in json.loads(out)}["bootstrap-truncation"]
    assert cut, "the starter files should overflow this total"
    assert truncation["status"] == "fail"
    assert all(path in truncation["found"] for path in cut)


# -- --diff and --fix are the same set; the summary counts the findings' fixable flag ----------

DECISION_WITH_UNQUOTED_LINK = (
    "---\ndate: 2026-11-30\ntype: decision\nstatus: active\ntags: [pricing]\n"
    "description: [[Ada]]\n---\n# Pricing\n\n## Context\nx\n\n## Decision\ny\n\n"
    "## Alternatives Considered\nz\n")


def test_diff_count_and_fix_cover_the_index_a_fix_makes_stale(tmp_path, capsys, monkeypatch):
    from vaultkit.cli.starter import init_vault

    init_vault(tmp_path / "v")
    vault = tmp_path / "v"
    monkeypatch.chdir(vault)
    (vault / "memory/decisions/pricing.md").write_text(DECISION_WITH_UNQUOTED_LINK)
    assert run(capsys, "index")[0] == 0
    index_before = (vault / "memory/INDEX.md").read_text()
    _, out, _ = run(capsys, "check", "--no-cache")
    assert "[*] 1 fixable with `vaultkit check --fix`." in out  # the stale index comes later
    _, out, _ = run(capsys, "check", "--diff", "--no-cache")
    assert [ln for ln in out.splitlines() if ln.startswith("+++")] == \
        ["+++ b/memory/INDEX.md", "+++ b/memory/decisions/pricing.md"]
    assert (vault / "memory/INDEX.md").read_text() == index_before  # --diff writes nothing
    _, out, err = run(capsys, "check", "--fix", "--no-cache")
    assert "Fixed 2 findings." in err
    assert 'description: "[[Ada]]"' in (vault / "memory/decisions/pricing.md").read_text()
    assert (vault / "memory/INDEX.md").read_text() != index_before
    assert run(capsys, "index", "--check")[0] == 0


# -- --fix keeps YAML comments ------------------------------------------------------------------

@pytest.mark.parametrize("before, after", [
    ('alias: [Bobby, "B"]  # nick\n', 'aliases: [Bobby, "B"]  # nick\n'),
    ("tag: a, b  # from the import\n", "tags: [a, b]  # from the import\n"),
    ("aliases: [Rob]  # main\nalias: [Bobby, \"B\"]  # nick\n",
     "aliases: [Rob, Bobby, B]  # main\n# nick\n"),
    ("aliases: Rob  # main\nalias: Bobby  # nick\n", "aliases: [Rob, Bobby]  # main\n# nick\n"),
    ("tags:  # topics\n  - x\ntag: z\n", "tags:  # topics\n  - x\n  - z\n"),
    ('tag: "a#b"  # kept\n', 'tags: ["a#b"]  # kept\n'),
], ids=["flow-list", "text", "merge-flow", "merge-scalar", "merge-block", "hash-in-quotes"])
def test_fix_keeps_yaml_comments(make_vault, capsys, monkeypatch, before, after):
    vault = make_vault({"memory/people/bob.md": f"---\n{before}---\n# Bob\n"})
    monkeypatch.chdir(vault)
    code, _, err = run(capsys, "check", "--fix", "--select", "VK205", "--no-cache")
    assert "Fixed 1 finding." in err
    assert (vault / "memory/people/bob.md").read_text() == f"---\n{after}---\n# Bob\n"


# -- a rename's link rewrite in an old journal is not a loss --------------------------------

def _renamed_repo(make_vault, journal_line: str):
    from test_git import commit_all, git, init_repo

    root = make_vault({
        "MEMORY.md": "# MEMORY\n",
        "memory/people/ada.md": "# Ada\n", "memory/people/carol.md": "# Carol\n",
        "memory/2026-11-08.md": "# 2026-11-08\n\n### 09:10 — Kickoff\n"
                                f"{journal_line}\n- more\n- and more\n",
    })
    init_repo(root)
    commit_all(root, "first")
    git(root, "mv", "memory/people/ada.md", "memory/people/ada-lovelace.md")
    return root, git


@pytest.mark.parametrize("before, after", [
    ("- met [[ada]] about pricing", "- met [[ada-lovelace]] about pricing"),
    ("- met [[ada|Ada]] (see [[ada#Role]])", "- met [[ada-lovelace|Ada]] (see [[ada-lovelace#Role]])"),
    ("- met [Ada](people/ada.md)", "- met [Ada](people/ada-lovelace.md)"),
], ids=["wikilink", "alias-and-heading", "markdown"])
def test_rename_link_rewrite_in_a_journal_is_accepted(make_vault, before, after):
    from test_git import findings

    root, git = _renamed_repo(make_vault, before)
    journal = root / "memory/2026-11-08.md"
    journal.write_text(journal.read_text().replace(before, after))
    git(root, "add", "-A")
    assert [d for d in findings(root, staged=True) if d.rule == "journal-append-only"] == []


@pytest.mark.parametrize("after", [
    "- met [[carol]] about pricing",  # the old target still opens a note: another link
    "- met [[ada-lovelace]] about costs",  # the words changed too
    "- met [[nobody]] about pricing",  # the new target opens nothing
], ids=["other-note", "words-changed", "unresolved"])
def test_other_journal_edits_around_links_are_edits_too(make_vault, after):
    """The model of loss: a line that keeps most of its characters is an edit, whatever
    its links now name (broken-link reports a link that opens nothing): never refused."""
    from test_git import findings

    before = "- met [[ada]] about pricing"
    root, git = _renamed_repo(make_vault, before)
    journal = root / "memory/2026-11-08.md"
    journal.write_text(journal.read_text().replace(before, after))
    git(root, "add", "-A")
    assert [d for d in findings(root, staged=True) if d.rule == "journal-append-only"] == []


def test_a_journal_line_around_links_whose_content_is_gone_is_refused(make_vault):
    from test_git import findings

    before = "- met [[ada]] about pricing"
    root, git = _renamed_repo(make_vault, before)
    journal = root / "memory/2026-11-08.md"
    journal.write_text(journal.read_text().replace(before, "- see [[ada-lovelace]]"))
    git(root, "add", "-A")
    found = [d for d in findings(root, staged=True) if d.rule == "journal-append-only"]
    assert [(d.path, d.line) for d in found] == [("memory/2026-11-08.md", 4)]


# -- the starter vault's Obsidian settings put new notes where the rules accept them ---------

def test_obsidian_new_notes_land_where_the_rules_accept_them(tmp_path, capsys, monkeypatch):
    from vaultkit.cli.starter import init_vault

    vault = tmp_path / "v"
    init_vault(vault)
    app = json.loads((vault / ".obsidian/app.json").read_text())
    daily = json.loads((vault / ".obsidian/daily-notes.json").read_text())
    # Ctrl+N, or a click on an unresolved link: Obsidian's "Default location for new notes"
    assert app["newFileLocation"] == "folder"
    folder = vault / app["newFileFolderPath"]
    (folder / "Untitled.md").write_text("")
    (folder / "Untitled 1.md").write_text("# Kickoff notes\n\nsee [[Ada]]\n")
    (vault / daily["folder"] / "2026-12-24.md").write_text("# 2026-12-24\n")  # a daily note
    monkeypatch.chdir(vault)
    code, out, _ = run(capsys, "check", "--no-cache", "--format", "json", "--ignore",
                       "index-stale,orphan-note")
    assert [(d["path"], d["rule"]) for d in json.loads(out) if d["severity"] == "error"] == []
    assert code == 0


# -- the colours hook keeps a colour the user picked in Obsidian ---------------------------

def test_colour_changed_in_obsidian_wins_and_only_missing_groups_are_added(tmp_path, capsys,
                                                                           monkeypatch):
    from vaultkit.cli.starter import init_vault

    vault = tmp_path / "v"
    init_vault(vault)
    graph = vault / ".obsidian/graph.json"
    data = json.loads(graph.read_text())
    data["colorGroups"][0]["color"]["rgb"] = 0x123456  # recoloured in Obsidian
    data["colorGroups"].pop()  # and one group deleted
    graph.write_text(json.dumps(data, indent=2) + "\n")
    monkeypatch.chdir(vault)
    code, _, err = run(capsys, "graph", "--write-colors")
    assert code == 0
    after = json.loads(graph.read_text())
    assert after["colorGroups"][0]["color"]["rgb"] == 0x123456
    assert len(after["colorGroups"]) == len(data["colorGroups"]) + 1
    assert "[colors] in vaultkit.toml" in err  # where the added group's colour comes from
    first = graph.read_bytes()
    code, _, err = run(capsys, "graph", "--write-colors")  # the hook's second run: no change
    assert graph.read_bytes() == first and "Unchanged" in err
    _, out, _ = run(capsys, "audit", "--format", "json")
    assert {c["id"]: c["status"] for c in json.loads(out)}["obsidian"] == "pass"
    assert run(capsys, "graph", "--write-colors", "--recolor")[0] == 0
    assert json.loads(graph.read_text())["colorGroups"][0]["color"]["rgb"] != 0x123456


# -- memory-churn is quiet on day one ------------------------------------------------------------

def test_memory_churn_does_not_warn_on_day_one(tmp_path, monkeypatch):
    from test_git import findings, git

    from vaultkit.cli.starter import init_vault

    monkeypatch.setenv("GIT_AUTHOR_NAME", "t")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "t@example.com")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "t")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "t@example.com")
    root = tmp_path / "v"
    init_vault(root, git=True)  # the first commit creates MEMORY.md
    memory = root / "MEMORY.md"
    memory.write_text(memory.read_text() + "\n- Ray prefers numbers first.\n")
    git(root, "add", "MEMORY.md")
    assert findings(root, staged=True, rules=("memory-churn",)) == []  # one edit on day one
    git(root, "commit", "-q", "--no-verify", "-m", "edit")
    memory.write_text(memory.read_text() + "- and tables.\n")
    git(root, "add", "MEMORY.md")
    found = findings(root, staged=True, rules=("memory-churn",))
    assert [(d.rule, d.path) for d in found] == [("memory-churn", "MEMORY.md")]  # a second edit


# -- one archive window, from the profile --------------------------------------------------------

def test_archive_window_is_the_profiles_and_the_heartbeat_says_the_same(tmp_path, capsys,
                                                                         monkeypatch):
    import re

    from vaultkit.vault.profile import load_settings
    from vaultkit.cli.starter import init_vault

    vault = tmp_path / "v"
    init_vault(vault)
    keep = load_settings(vault, None).profile.budgets.journal_keep_days
    heartbeat = (vault / "HEARTBEAT.md").read_text()
    assert re.findall(r"older than (\d+) days", heartbeat) == [str(keep)]
    monkeypatch.chdir(vault)
    _, out, _ = run(capsys, "archive", "--dry-run", "--json")
    import datetime as dt
    assert json.loads(out)["cutoff"] == (dt.date.today() - dt.timedelta(days=keep)).isoformat()
    (vault / "vaultkit.toml").write_text((vault / "vaultkit.toml").read_text()
                                         + "\n[budgets]\njournal-keep-days = 7\n")
    _, out, _ = run(capsys, "archive", "--dry-run", "--json")
    assert json.loads(out)["cutoff"] == (dt.date.today() - dt.timedelta(days=7)).isoformat()


# -- every command takes the vault PATH the same way ---------------------------------------------

def test_every_command_takes_the_vault_path_as_a_positional(tmp_path, capsys, monkeypatch):
    from vaultkit.cli.starter import init_vault

    init_vault(tmp_path / "pv")
    monkeypatch.chdir(tmp_path)
    journal = f"memory/{__import__('datetime').date.today().isoformat()}.md"
    code, out, err = run(capsys, "log", "pv", "Kickoff with Ada")
    assert code == 0, err
    assert out.startswith(f"pv/{journal}:")  # from the current folder, as ruff prints paths
    assert run(capsys, "log", "--root", "pv", "Second entry")[0] == 0  # --root still works
    code, out, _ = run(capsys, "search", "./pv", "kickoff")
    assert code == 0 and out.startswith(f"pv/{journal}:")
    code, out, _ = run(capsys, "get", "pv", journal)
    assert code == 0 and "Kickoff with Ada" in out
    code, out, _ = run(capsys, "get", "--root", "pv", journal)
    assert code == 0 and "Second entry" in out
    code, _, err = run(capsys, "archive", "pv", "--dry-run")
    assert code == 0 and "Nothing to archive" in err
    code, out, _ = run(capsys, "distill", "pv", "--format", "json")
    assert code == 0 and json.loads(out)["window"]["journals"] == [journal]
    for argv in (["check", "pv"], ["index", "pv", "--check"], ["graph", "pv"], ["audit", "pv"]):
        assert run(capsys, *argv)[0] in (0, 1)
    # a one-word entry is the text, not a vault
    monkeypatch.chdir(tmp_path / "pv")
    code, out, _ = run(capsys, "log", "lunch")
    assert code == 0 and out.startswith(f"{journal}:")
    code, _, err = run(capsys, "log", "nowhere", "some text")
    assert code == 2 and "nowhere: no such folder" in err


# -- `vaultkit rules` fits 80 columns; every option has help text -------------------------------

def test_rules_fits_an_80_column_terminal(capsys):
    from vaultkit.lint.rules import all_rules

    code, out, _ = run(capsys, "rules")
    assert code == 0
    lines = out.splitlines()
    assert len(lines) >= 20
    assert max(len(line) for line in lines) <= 80
    # every summary is there whole, wrapped at words under its column: never cut to
    # "Reports a Markdown file…"
    blocks = re.split(r"\n(?=VK\d{3} )", out.rstrip("\n"))
    rules = all_rules()
    assert [b[:5] for b in blocks] == [r.code for r in rules]
    for block, rule in zip(blocks, rules):
        head, *rest = block.split("\n")
        column = 5 + 2 + max(len(r.name) for r in rules) + 2 + 7 + 2 + 3 + 2  # code name sev fix
        first = head[column:]
        if len(head) <= column:  # a word too long for the column: the summary starts below
            column, first = 6, ""
        words = " ".join([first, *(line.strip() for line in rest)]).split()
        said = rule.summary().split()
        if not rule.default:
            said = ["(off", "by", "default)", *said]
        assert words == said, rule.name  # whole, no word split
        assert all(line.startswith(" " * column) for line in rest), rule.name
    # summaries stay whole where there is no terminal to fit
    _, out, _ = run(capsys, "rules", "--format", "json")
    assert all(not r["summary"].endswith("…") for r in json.loads(out))


def test_every_option_of_every_command_has_help_text():
    import argparse

    from vaultkit.cli import build_parser

    missing = []

    def walk(parser, prefix):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                assert action.choices, "no subcommands"
                for name, sub in action.choices.items():
                    walk(sub, [*prefix, name])
                continue
            if not action.help or action.help == argparse.SUPPRESS:
                missing.append(" ".join([*prefix, *(action.option_strings or [action.dest])]))

    walk(build_parser(), ["vaultkit"])
    assert missing == []


# -- messages ----------------------------------------------------------------------------------------

def test_unknown_rule_names_get_a_did_you_mean(make_vault, capsys, monkeypatch):
    vault = make_vault({"vaultkit.toml": 'ignore = ["orphan"]\n'})
    monkeypatch.chdir(vault)
    code, _, err = run(capsys, "check", "--select", "broken-links")
    assert code == 2 and "unknown rule 'broken-links'; did you mean 'broken-link'?" in err
    code, _, err = run(capsys, "rule", "brokenlink")
    assert code == 2 and "did you mean 'broken-link'?" in err
    (vault / "vaultkit.toml").write_text('ignore = ["orphan"]\n')
    code, _, err = run(capsys, "check", "--no-cache")
    assert code == 2 and "vaultkit.toml: unknown rule 'orphan'; did you mean 'orphan-note'?" in err
    (vault / "vaultkit.toml").write_text('ignore = ["zzzzzz"]\n')
    code, _, err = run(capsys, "check", "--no-cache")
    assert "did you mean" not in err  # nothing close: no guess


def test_missing_folder_gets_a_did_you_mean(make_vault, capsys, monkeypatch):
    vault = make_vault({"memory/decisions/a.md": "# A\n"})
    monkeypatch.chdir(vault)
    code, _, err = run(capsys, "check", "memory/decision")
    assert code == 2
    assert "memory/decision: no such file or folder; did you mean 'memory/decisions'?" in err


def test_a_missing_path_beside_a_real_one_is_an_error_not_all_passed(make_vault, capsys,
                                                                      monkeypatch):
    # ruff's E902: a named path that does not exist fails the run; the rest is checked
    vault = make_vault({"memory/semantic/a.md": "# A\n"})
    monkeypatch.chdir(vault)
    code, out, err = run(capsys, "check", "--no-cache", "memory/semantic/a.md", "missing.md")
    assert code == 1
    assert "vaultkit: error: missing.md: no such file or folder" in err
    assert "All checks passed!" not in out
    assert "1 path not found" in out
    code, out, _ = run(capsys, "check", "--no-cache", "--exit-zero", "memory/semantic/a.md",
                       "missing.md")
    assert code == 0 and "1 path not found" in out
    code, out, _ = run(capsys, "check", "--no-cache", "memory/semantic/a.md")
    assert code == 0 and "All checks passed!" in out


def test_an_unknown_config_key_gets_a_did_you_mean(make_vault, capsys, monkeypatch):
    vault = make_vault({"memory/semantic/a.md": "# A\n"})
    monkeypatch.chdir(vault)
    cases = [
        ('ignroe = ["orphan-note"]\n', "unknown key 'ignroe' (did you mean 'ignore'?)"),
        ("strict-placment = true\n",
         "unknown key 'strict-placment' (did you mean 'strict-placement'?)"),
        ('[[layers]]\nname = "x"\npaths = ["a/*.md"]\nexlude = []\n',
         "unknown key 'layers.0.exlude' (did you mean 'exclude'?)"),
    ]
    for text, message in cases:
        (vault / "vaultkit.toml").write_text(text)
        code, _, err = run(capsys, "check", "--no-cache")
        assert code == 2 and message in err, (text, err)
    (vault / "vaultkit.toml").write_text("zzqqxx = 1\n")
    code, _, err = run(capsys, "check", "--no-cache")
    assert code == 2 and "unknown key 'zzqqxx'" in err and "did you mean" not in err


def test_heading_link_gets_the_heading_that_holds_the_words(make_vault, capsys, monkeypatch):
    vault = make_vault({
        "memory/2026-11-08.md": "# 2026-11-08\n\n### 09:10 — Kickoff\n\n- a\n- b\n- c\n",
        "memory/semantic/x.md": "# X\n\nsee [[2026-11-08#Kickoff]] and [[2026-11-08#Kikcoff meet]]\n",
    })
    monkeypatch.chdir(vault)
    _, out, _ = run(capsys, "check", "--select", "VK501", "--no-cache")
    assert ("has no heading 'Kickoff' (link [[2026-11-08#Kickoff]]); did you mean "
            "'09:10 — Kickoff'?") in out
    assert "has no heading 'Kikcoff meet' (link [[2026-11-08#Kikcoff meet]])\n" in out


def test_unquoted_links_in_a_property_get_a_quoting_hint(make_vault, capsys, monkeypatch):
    vault = make_vault({"memory/semantic/x.md":
                        "---\nrelated: [[Ada]], [[Carol]]\n---\n# X\n"})
    monkeypatch.chdir(vault)
    _, out, _ = run(capsys, "check", "--select", "VK002", "--no-cache")
    assert out.startswith("memory/semantic/x.md:2:1: VK002 ")
    assert 'links in properties must be quoted: related: ["[[Ada]]", "[[Carol]]"]' in out


def test_get_takes_a_path_from_the_current_folder_too(make_vault, capsys, monkeypatch):
    # (it said "paths are relative to the vault root ... did you mean memory/2026-12-01.md?")
    vault = make_vault({"memory/2026-12-01.md": "# 2026-12-01\n"})
    monkeypatch.chdir(vault / "memory")
    code, out, _ = run(capsys, "get", "2026-12-01.md")
    assert code == 0 and out == "# 2026-12-01\n"
    code, _, err = run(capsys, "get", "2026-12-02.md")  # no such file here either
    assert code == 2 and "'2026-12-02.md': not in the memory set" in err


def test_output_file_in_a_missing_folder_is_one_line_before_any_work(make_vault, capsys,
                                                                     monkeypatch):
    vault = make_vault({})
    monkeypatch.chdir(vault)
    for argv in (["check", "-o", "nodir/report.txt"],
                 ["graph", "--write-colors", "-o", "nodir/graph.json"]):
        code, out, err = run(capsys, *argv)
        assert code == 2 and out == ""
        assert err.strip().splitlines() == [
            f"vaultkit: error: {argv[-1]}: cannot write: the folder nodir does not exist; "
            "create it first"]
    assert not (vault / ".obsidian/graph.json").exists()  # nothing was done first


def test_check_of_a_file_that_is_not_a_note(make_vault, capsys, monkeypatch):
    vault = make_vault({"notes.txt": "hi\n", "memory/2026-2-3.md": "# x\n"})
    monkeypatch.chdir(vault)
    code, out, err = run(capsys, "check", "notes.txt")
    assert code == 2 and "All checks passed" not in out
    assert "notes.txt: not a note (vaultkit checks Markdown notes, *.md); skipped" in err
    code, out, err = run(capsys, "check", "notes.txt", "memory", "--select", "VK102")
    assert code == 1 and "memory/2026-2-3.md:1:1: VK102" in out


def test_git_rules_info_line_respects_quiet(make_vault, capsys, monkeypatch):
    vault = make_vault({})
    monkeypatch.chdir(vault)
    _, _, err = run(capsys, "check", "-q", "--no-cache")
    assert err == ""
    _, _, err = run(capsys, "check", "--no-cache")
    assert "info: git rules" in err


def test_init_next_steps_can_be_pasted_in_order(tmp_path, capsys, monkeypatch):
    import shutil
    import sys

    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, "init", "my vault", "-q")
    assert code == 0
    steps = out.split("Next (paste the lines in order):\n", 1)[1].splitlines()
    steps = [s.strip() for s in steps if s.strip()]
    assert steps[0] == "cd 'my vault'" and steps[-1].startswith("vaultkit audit")
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com",
               PATH=os.pathsep.join([os.path.dirname(sys.executable), os.environ["PATH"]]))
    if not shutil.which("vaultkit", path=env["PATH"]) or \
            not shutil.which("pre-commit", path=env["PATH"]):
        pytest.skip("vaultkit and pre-commit are not installed as commands here")
    # every step must succeed; the audit may report failing checks (exit 1)
    script = "set -e\n" + "\n".join(steps[:-1]) + "\nset +e\n" + steps[-1] + \
        "\ntest $? -le 1\n"
    proc = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Survival checklist" in proc.stdout
    assert (tmp_path / "my vault/.git/hooks/pre-commit").is_file()


# -- progress: on a terminal, on stderr, never in machine formats --------------------------------

class _Tty(__import__("io").StringIO):
    def isatty(self):
        return True


def _many_notes(make_vault, n=60):
    return make_vault({f"memory/semantic/n{i:03}.md": f"# Note {i}\n\nkickoff {i}\n"
                       for i in range(n)})


@pytest.mark.parametrize("argv, shown", [
    (["check", "--no-cache", "--select", "VK101"], True),
    (["check", "--no-cache", "--select", "VK101", "--format", "json"], False),
    (["check", "--no-cache", "--select", "VK101", "-q"], False),
    (["search", "kickoff", "--no-cache"], True),
    (["search", "kickoff", "--no-cache", "--json"], False),
    (["graph", "--no-cache"], True),
    (["graph", "--no-cache", "--format", "json"], False),
], ids=["check", "check-json", "check-quiet", "search", "search-json", "graph", "graph-json"])
def test_progress_only_on_a_terminal_and_never_in_machine_formats(make_vault, capsys,
                                                                  monkeypatch, argv, shown):
    import sys

    from vaultkit.core import progress

    vault = _many_notes(make_vault)
    monkeypatch.chdir(vault)
    monkeypatch.setattr(progress, "DELAY_S", 0.0)
    monkeypatch.setattr(progress, "INTERVAL_S", 0.0)
    tty = _Tty()
    monkeypatch.setattr(sys, "stderr", tty)
    main(argv)
    out = capsys.readouterr().out
    written = tty.getvalue()
    assert ("notes 60/60" in written) is shown, written
    if argv[0] == "check":
        assert ("running rules" in written) is shown
    assert "notes " not in out or "parsing" not in out  # never on stdout
    if shown:  # the line is erased before the command's own output
        import re

        assert re.search(r"60/60\r +\r", written), repr(written)


def test_no_progress_when_stderr_is_not_a_terminal(make_vault, capsys, monkeypatch):
    from vaultkit.core import progress

    vault = _many_notes(make_vault)
    monkeypatch.chdir(vault)
    monkeypatch.setattr(progress, "DELAY_S", 0.0)
    monkeypatch.setattr(progress, "INTERVAL_S", 0.0)
    run(capsys, "check", "--no-cache", "--select", "VK101")
    _, _, err = run(capsys, "check", "--no-cache", "--select", "VK101")
    assert "parsing" not in err and "\r" not in err


def test_index_and_graph_name_their_files_from_the_current_folder(make_vault, capsys,
                                                                  monkeypatch):
    vault = make_vault({"memory/semantic/a.md": "# A\n"})
    monkeypatch.chdir(vault.parent)
    _, _, err = run(capsys, "index", "vault")
    assert err.strip() == "Wrote vault/memory/INDEX.md"
    _, _, err = run(capsys, "graph", "vault", "--write-colors")
    assert err.startswith("Updated vault/.obsidian/graph.json (")


def test_the_fixable_count_runs_no_fix_plan(make_vault, capsys, monkeypatch):
    """The summary counts the findings' fixable flag: no rule runs again to plan fixes."""
    from vaultkit.cli.commands import check

    vault = make_vault({"memory/people/bob.md": "---\ntag: [x]\n---\n# Bob\n"})
    monkeypatch.chdir(vault)

    def no_plan(*args, **kwargs):
        raise AssertionError("the fix plan was built for the summary")

    monkeypatch.setattr(check, "FixPlan", no_plan)
    for extra in (["--no-cache"], [], []):  # cold, then from the results cache
        _, out, _ = run(capsys, "check", "--select", "VK205", *extra)
        assert "[*] 1 fixable with `vaultkit check --fix`." in out


def test_fixable_count_survives_the_results_cache(make_vault, capsys, monkeypatch):
    vault = make_vault({"memory/people/bob.md": "---\ntag: [x]\n---\n# Bob\n"})
    monkeypatch.chdir(vault)
    for _ in range(3):  # the later runs take their findings from the results cache
        _, out, _ = run(capsys, "check", "--select", "VK205")
        assert "[*] 1 fixable with `vaultkit check --fix`." in out


# -- the nightly backup from cron: the line docs/first-day.md shows ----------------------------

CRON_COMMAND = ('cd "$VAULT" && { vaultkit index; git add -A && git commit -q -m '
                '"backup: $(date +%Y-%m-%d)"; }')


def test_cron_backup_needs_vaultkit_on_its_path_and_works_with_it(tmp_path):
    """cron runs `sh -c` with PATH=/usr/bin:/bin: the hooks' `vaultkit` is not there unless
    the crontab's PATH line names the folder it is installed in."""
    import shutil
    import sys

    from vaultkit.cli.starter import init_vault

    bin_dir = os.path.dirname(sys.executable)
    if not (shutil.which("vaultkit", path=bin_dir) and shutil.which("pre-commit", path=bin_dir)):
        pytest.skip("vaultkit and pre-commit are not installed as commands beside python")
    vault = tmp_path / "ws"
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "LANG": "C.UTF-8", "VAULT": str(vault),
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
           "GIT_CONFIG_NOSYSTEM": "1", "PRE_COMMIT_HOME": str(home / "pc")}
    git_dir = os.path.dirname(shutil.which("git"))
    init_vault(vault, git=True)
    subprocess.run([os.path.join(bin_dir, "pre-commit"), "install"], cwd=vault, check=True,
                   capture_output=True, env={**env, "PATH": f"{bin_dir}:{git_dir}:/usr/bin:/bin"})
    (vault / "memory/semantic/deploy.md").write_text("# Deploy\n\n- step one\n")

    def cron(path):
        return subprocess.run(["sh", "-c", CRON_COMMAND], env={**env, "PATH": path},
                              capture_output=True, text=True, timeout=300)

    plain = cron(f"{git_dir}:/usr/bin:/bin")  # cron's own PATH (plus git wherever it is)
    assert plain.returncode != 0
    assert "vaultkit" in plain.stdout + plain.stderr
    fixed = cron(f"{bin_dir}:{git_dir}:/usr/bin:/bin")  # the crontab's PATH= line
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    log = subprocess.run(["git", "log", "--format=%s"], cwd=vault, capture_output=True,
                         text=True).stdout
    assert log.splitlines()[0].startswith("backup: ")


def test_hook_in_a_repository_that_is_no_vault_checks_nothing_and_passes(tmp_path, capsys,
                                                                         monkeypatch):
    repo = tmp_path / "repo"
    (repo / "docs").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "docs/guide.md").write_text("# Guide\n")
    monkeypatch.chdir(repo)
    code, out, err = run(capsys, "check", "--hook", "docs/guide.md")
    # the check hook is `verbose`: a line here would show under every commit of a
    # repository whose vault is elsewhere (or that has none): the hook says nothing
    assert (code, out, err) == (0, "", "")
    assert not (repo / ".vaultkit").exists()


def test_log_path_alone_with_the_entry_on_a_pipe(tmp_path, capsys, monkeypatch):
    import io
    import sys

    from vaultkit.cli.starter import init_vault

    init_vault(tmp_path / "pv")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.StringIO("Piped entry\n- a\n- b\n- c\n"))
    # (a date not today: the starter vault holds a journal for today already)
    code, out, err = run(capsys, "log", "pv", "--date", "2025-06-30", "--time", "07:00")
    assert code == 0, err
    assert out.startswith("pv/memory/2025-06-30.md:3: ### 07:00 — Piped entry")
    monkeypatch.setattr(sys, "stdin", io.StringIO("ignored\n"))
    code, out, _ = run(capsys, "log", "lunch", "--date", "2025-06-30", "--time", "08:00",
                       "--root", "pv")  # not a folder: the text
    assert code == 0 and "08:00 — lunch" in out


def test_get_guesses_from_the_current_folder(make_vault, capsys, monkeypatch):
    vault = make_vault({"memory/decisions/pricing.md": "# Pricing\n"})
    monkeypatch.chdir(vault / "memory/decisions")
    code, out, _ = run(capsys, "get", "pricing.md")
    assert code == 0 and out == "# Pricing\n"

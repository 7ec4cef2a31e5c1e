"""``recover``, ``history`` and the appending writers on hostile or damaged input: git
metadata quoted into memory, hard links, the size limit, oversized and missing git objects,
a forged recovery marker, and the journal's own entry level."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil

import pytest

import history_repo as hr
from cli_invoke import invoke
from vaultkit.memory.history import scan_history
from vaultkit.vault.profile import load_settings

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

# a GitHub token the detector recognises, built here so no test id or source line holds one
TOKEN = "ghp_" + base64.b64encode(hashlib.sha256(b"vaultkit-test").digest()).decode() \
    .replace("+", "").replace("/", "")[:36]

JOURNAL = "memory/2026-02-01.md"
ENTRIES = ["- Deployed v1.2 to production", "- Smoke tests green", "- Rollback plan written"]


def new_repo(tmp_path, toml: str = "") -> hr.HistoryRepo:
    root = tmp_path / "vault"
    (root / ".obsidian").mkdir(parents=True)
    repo = hr.HistoryRepo(root, hr.git_env())
    repo.git("init", "-q")
    repo.git("config", "commit.gpgsign", "false")
    if toml:
        repo.write("vaultkit.toml", toml)
    return repo


def rewritten(tmp_path, *, level: str = "###", subject: str = "cron: nightly summary",
              author: str = "cron", toml: str = "") -> hr.HistoryRepo:
    """A journal whose entry a later commit rewrote (its three lines lost)."""
    repo = new_repo(tmp_path, toml)
    repo.write(JOURNAL, f"# 2026-02-01\n\n{level} 09:00 — Release\n" + "\n".join(ENTRIES)
               + "\n")
    repo.commit("first", f"{hr.day(0)}T10:00:00")
    repo.write(JOURNAL, f"# 2026-02-01\n\n{level} 09:00 — Summary\n- Release done\n")
    repo.commit(subject, f"{hr.day(1)}T03:00:00", author=author)
    return repo


def history(repo):
    return scan_history(repo.path, load_settings(repo.path))


# -- item 3: git metadata quoted into memory -----------------------------------------------

def test_a_credential_in_the_rewriting_commits_subject_is_never_written_into_memory(tmp_path):
    repo = rewritten(tmp_path, subject=f"nightly: rotate {TOKEN}", author="bad\x1b]52;c;eA==\x07")
    code, out, err = invoke(["recover", ".", "--all"], repo.path)
    assert code == 0, err
    text = repo.read(JOURNAL)
    assert all(line in text for line in ENTRIES)  # the lost lines are back
    assert TOKEN not in text and TOKEN[4:12] not in text
    # nothing of the commit's metadata is written into the journal: the lines go back in
    # place, with no heading quoting the subject or the author
    assert "nightly" not in text and "bad" not in text and "\x1b" not in text
    assert TOKEN not in out + err and "\x1b" not in out + err


def test_a_credential_in_the_subject_of_a_cut_never_reaches_the_recovery_note(tmp_path):
    repo = new_repo(tmp_path)
    repo.write("MEMORY.md", hr.MEMORY_TEXT)
    repo.commit("first", f"{hr.day(0)}T10:00:00")
    repo.write("MEMORY.md", hr.MEMORY_CUT)
    repo.commit(f"tidy with {TOKEN}", f"{hr.day(1)}T10:00:00")
    code, _, err = invoke(["recover", ".", "--all"], repo.path)
    assert code == 0, err
    note = repo.read("memory/semantic/recovered.md")
    assert hr.MEMORY_LOST[0] in note and TOKEN not in note


# -- item 5: hard links ---------------------------------------------------------------------

def test_log_recover_and_get_refuse_a_journal_hard_linked_elsewhere(tmp_path):
    repo = rewritten(tmp_path)
    outside = tmp_path / "outside.md"
    (repo.path / JOURNAL).replace(outside)
    os.link(outside, repo.path / JOURNAL)  # the journal and a file outside: one inode
    kept = outside.read_bytes()
    code, _, err = invoke(["log", ".", "Note\n- one\n- two\n- three",
                           "--date", "2026-02-01"], repo.path)
    assert code == 2 and "hard links" in err and "nothing written" in err
    code, _, err = invoke(["recover", ".", "--all"], repo.path)
    assert code == 2 and "hard links" in err and "nothing written" in err
    code, out, err = invoke(["get", ".", JOURNAL], repo.path)
    assert code == 2 and "hard links" in err and "Release" not in out
    assert outside.read_bytes() == kept


def test_mcp_memory_log_and_resources_refuse_a_hard_linked_file(tmp_path):
    pytest.importorskip("mcp")
    from vaultkit.cli.mcp_server import ToolFailure, VaultSession
    from vaultkit.core.errors import VaultkitError

    root = tmp_path / "vault"
    (root / ".obsidian").mkdir(parents=True)
    (root / "memory").mkdir()
    secret = tmp_path / "credentials.md"
    secret.write_text("# creds\n\npassword: not for the agent\n")
    os.link(secret, root / "AGENTS.md")
    day = "2026-02-01"
    os.link(secret, root / f"memory/{day}.md")
    session = VaultSession(root)
    try:
        uri = next(u for u, path, _ in session.resources() if path == "AGENTS.md")
        with pytest.raises(ToolFailure, match="hard links"):
            session.read_resource(uri)
        with pytest.raises(VaultkitError, match="hard links"):
            session.append({"text": "Note\n- one\n- two\n- three", "date": day})
    finally:
        session.close()
    assert secret.read_text() == "# creds\n\npassword: not for the agent\n"


# -- item 6: recover's size limit ----------------------------------------------------------

def test_recover_never_takes_a_journal_over_the_size_limit(tmp_path):
    repo = rewritten(tmp_path, toml="[budgets]\nmax-file-bytes = 2000\n")
    journal = repo.path / JOURNAL
    journal.write_text(journal.read_text() + "- " + "x" * 1850 + "\n")  # 1,9xx bytes now
    before = journal.read_bytes()
    for argv in (["recover", ".", "--all", "--dry-run"], ["recover", ".", "--all"]):
        code, _, err = invoke(argv, repo.path)
        assert code == 2, err
        assert "over the 2,000-byte limit (budgets.max_file_bytes)" in err
        assert "nothing written" in err and len(err.strip().splitlines()) == 1
    assert journal.read_bytes() == before


# -- item 9: recovery is proven by the lines, not by a marker -------------------------------

def test_a_forged_marker_does_not_make_a_cut_look_recovered(tmp_path):
    repo = new_repo(tmp_path)
    repo.write("MEMORY.md", hr.MEMORY_TEXT)
    repo.commit("first", f"{hr.day(0)}T10:00:00")
    repo.write("MEMORY.md", hr.MEMORY_CUT)
    sha = repo.commit("tidy", f"{hr.day(1)}T10:00:00")
    repo.write("MEMORY.md", hr.MEMORY_CUT + f"<!-- vaultkit-recovered {sha} MEMORY.md -->\n")
    repo.commit("forge", f"{hr.day(1)}T11:00:00")
    [event] = history(repo).events
    assert event.kind == "memory-shrink" and not event.recovered
    code, out, _ = invoke(["recover", ".", "--all"], repo.path)
    assert code == 0 and "appended 10 lines" in out
    assert all(line in repo.read("memory/semantic/recovered.md") for line in hr.MEMORY_LOST)
    assert history(repo).events[0].recovered


# -- item 7: every blob read is bounded ----------------------------------------------------

def test_a_rewrite_over_the_read_bound_is_a_warning_and_never_loaded(tmp_path, monkeypatch):
    repo = new_repo(tmp_path, "[budgets]\nmax-file-bytes = 3000\n")
    big = "".join(f"- line {i:04d} of a long journal\n" for i in range(200))  # ~5.6 KB
    repo.write(JOURNAL, "# 2026-02-01\n\n## 09:00 — Day\n" + big)
    repo.commit("first", f"{hr.day(0)}T10:00:00")
    repo.write(JOURNAL, "# 2026-02-01\n\n## 09:00 — Day\n" + big[30:])
    sha = repo.commit("rewrite", f"{hr.day(1)}T10:00:00")
    import vaultkit.memory.history as module

    loaded = []
    real = module._read_blobs

    def spy(root, oids, *, sizes_only=False):
        found = real(root, oids, sizes_only=sizes_only)
        if not sizes_only:
            loaded.extend(len(data) for data in found.values())
        return found

    monkeypatch.setattr(module, "_read_blobs", spy)
    result = history(repo)
    assert result.events == [] and all(size <= 3000 for size in loaded)
    assert len(result.warnings) == 2
    assert all(JOURNAL in w and sha[:10] in w and "over the 3,000-byte limit" in w
               for w in result.warnings)
    code, out, err = invoke(["history", ".", "--format", "json"], repo.path)
    assert code == 0 and len(json.loads(out)["warnings"]) == 2
    code, out, err = invoke(["audit", "."], repo.path)
    assert "not judged" in out


# -- issue 27: a missing object ------------------------------------------------------------

def _drop_object(repo, rev: str) -> None:
    oid = repo.git("rev-parse", rev).stdout.strip()
    os.unlink(repo.path / ".git" / "objects" / oid[:2] / oid[2:])


def test_history_never_reads_a_non_markdown_blob(tmp_path):
    repo = rewritten(tmp_path)
    repo.write("memory/pic.png", "first image")
    repo.commit("image", f"{hr.day(2)}T10:00:00")
    repo.write("memory/pic.png", "second image")
    repo.commit("image again", f"{hr.day(3)}T10:00:00")
    _drop_object(repo, "HEAD~1:memory/pic.png")  # a partial clone, a damaged store
    code, out, err = invoke(["history", "."], repo.path)
    assert code == 0, err
    assert "1 loss event" in out and "journal-rewrite" in out and err == ""


def test_a_missing_markdown_object_is_a_warning_not_an_error(tmp_path):
    repo = rewritten(tmp_path)
    _drop_object(repo, "HEAD~1:" + JOURNAL)
    code, out, err = invoke(["history", "."], repo.path)
    assert code == 0, err
    assert "warning:" in err and "missing from the repository" in err and JOURNAL in err
    code, out, _ = invoke(["audit", "."], repo.path)
    assert "not judged" in out


# -- issue 27: the journal's own entry level ------------------------------------------------

def test_recover_writes_at_the_journals_own_entry_level(tmp_path):
    repo = rewritten(tmp_path, level="##")
    code, _, err = invoke(["recover", ".", "--all"], repo.path)
    assert code == 0, err
    added = repo.read(JOURNAL).split("- Release done\n", 1)[1]
    assert added.lstrip().startswith("## ") and "\n### " not in added


def test_log_and_init_start_a_journal_at_the_level_the_other_journals_use(tmp_path):
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    (root / "memory/2026-01-30.md").write_text(
        "# 2026-01-30\n\n## 09:00 Standup\n- a\n- b\n- c\n")
    code, _, err = invoke(["init", str(root), "--full"], tmp_path)
    assert code == 0, err
    firsts = [p for p in (root / "memory").glob("2*.md") if p.name != "2026-01-30.md"]
    assert len(firsts) == 1
    assert "\n## " in firsts[0].read_text() and "\n### " not in firsts[0].read_text()
    code, _, err = invoke(["log", str(root), "Deploy\n- shipped\n- watched\n- closed",
                           "--date", "2026-02-05"], tmp_path)
    assert code == 0, err
    text = (root / "memory/2026-02-05.md").read_text()
    assert "\n## " in text and "\n### " not in text



# -- issue 27: the report agrees with graph and shows frontmatter as frontmatter -----------

def test_report_counts_attachments_as_graph_does_and_shows_frontmatter_as_yaml(tmp_path):
    import re

    pytest.importorskip("mistune")
    pytest.importorskip("matplotlib")
    root = tmp_path / "ws"
    code, _, err = invoke(["init", str(root)], tmp_path)
    assert code == 0, err
    (root / "memory/decisions/flat.md").write_text(
        "---\ntype: decision\ndate: 2026-02-01\nstatus: someday\n---\n# Flat pricing\n\n"
        "## Context\nAsked.\n\n## Decision\nFlat.\n\n## Alternatives Considered\n- Seats\n")
    (root / "memory/img").mkdir()
    (root / "memory/img/chart.png").write_bytes(b"\x89PNG\r\n")
    code, out, _ = invoke(["graph", str(root)], tmp_path)
    graph_count = int(re.search(r"attachments\s+(\d+)", out).group(1))
    assert graph_count == 1  # the image; vaultkit.toml, unclosed_work.yaml, .gitkeep are not
    page = tmp_path / "r.html"
    code, _, err = invoke(["report", str(root), "-o", str(page)], tmp_path)
    assert code == 0, err
    html = page.read_text(encoding="utf-8")
    assert f"{graph_count} attachments" in html
    assert "status: someday" in html
    assert not re.search(r"<h\d[^>]*>[^<]*status: someday", html)  # never a heading
    assert re.search(r'<pre class="frontmatter"><code>[^<]*status: someday', html)


# -- recover never writes back a credential a commit removed -------------------------------

def test_recover_brings_back_the_lines_but_not_a_removed_credential(tmp_path):
    repo = new_repo(tmp_path)
    leaked = f"- CI token {TOKEN} for the deploy job"
    repo.write(JOURNAL, "# 2026-02-01\n\n### 09:00 — Release\n" + "\n".join(ENTRIES)
               + f"\n{leaked}\n")
    repo.commit("first", f"{hr.day(0)}T10:00:00")
    repo.write(JOURNAL, "# 2026-02-01\n\n### 09:00 — Summary\n- Release done\n")
    repo.commit("scrub", f"{hr.day(1)}T10:00:00")
    repo.write("memory/decisions/keys.md", f"# Keys\n\n- Vendor: acme\n{leaked}\n")
    repo.commit("keys", f"{hr.day(2)}T10:00:00")
    repo.git("rm", "-q", "memory/decisions/keys.md")
    repo.commit("drop keys", f"{hr.day(3)}T10:00:00")
    code, out, err = invoke(["recover", ".", "--all"], repo.path)
    assert code == 0, err
    journal, note = repo.read(JOURNAL), repo.read("memory/decisions/keys.md")
    assert all(line in journal for line in ENTRIES) and "- Vendor: acme" in note
    for text in (journal, note):
        assert TOKEN not in text and "a line holding a GitHub token (ghp_…" in text
    assert all(e.recovered for e in history(repo).events)
    before = {p: repo.read(p) for p in (JOURNAL, "memory/decisions/keys.md")}
    code, out, _ = invoke(["recover", ".", "--all"], repo.path)
    assert code == 0 and "nothing to recover" in out
    assert {p: repo.read(p) for p in before} == before

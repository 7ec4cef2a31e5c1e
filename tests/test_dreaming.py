"""What OpenClaw's nightly writer (dreaming) writes, on a clean workspace of its own:
``tests/fixtures/workspaces/dreaming-clean/`` holds the Dream Diary (DREAMS.md), the phase
reports (memory/dreaming/<phase>/), promoted blocks in MEMORY.md with their markers (the
append form and the consolidation form), a journal with a managed `## Light Sleep` block, a
session-memory note (memory/YYYY-MM-DD-<slug>.md) and the machine state in memory/.dreams/
(recall store, phase signals, events, the session corpus, a lock). None of it is a fault
(docs/dreaming.md)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from test_rules_support import findings, isolated_openclaw  # noqa: F401

from vaultkit.cli import main
from vaultkit.memory.search import search_vault
from vaultkit.vault.loader import load_vault
from vaultkit.vault.snapshots import memory_files

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "workspaces" / "dreaming-clean"
GIT_RULES = ("journal-append-only", "mass-deletion", "memory-churn")
DREAMING = ("DREAMS.md", "memory/dreaming", "memory/.dreams")


def _copy(tmp_path, name="dreaming-clean") -> Path:
    root = tmp_path / name
    shutil.copytree(FIXTURE, root)
    return root


def test_a_clean_dreaming_workspace_gives_no_finding_at_all(tmp_path, capsys):
    root = _copy(tmp_path)
    assert [f for f in findings(root) if f[0] not in GIT_RULES] == []
    assert main(["check", str(root), "--no-cache", "--select", "ALL"]) == 0
    assert "All checks passed!" in capsys.readouterr().out


def test_the_dream_state_is_never_a_note_searched_or_snapshotted(tmp_path):
    """memory/.dreams/ may hold Markdown (the session corpus is .md or .txt): it is no
    note (no rule reads it: its [[no-such-note]] is no broken link), search never returns
    it, and a snapshot never records it."""
    root = _copy(tmp_path)
    vault = load_vault(root, root=root, use_cache=False)
    assert not [p for p in vault.notes if ".dreams" in p]
    assert vault.layer_of(vault.note("DREAMS.md")) == "dreaming"
    assert vault.layer_of(vault.note("memory/dreaming/deep/2026-12-04.md")) == "dreaming"
    # the session-memory hook's notes, by their header: a slug, the HHMM fallback, a topic's
    for path in ("memory/2026-12-03-card-terminal.md", "memory/2026-12-04-0912.md",
                 "memory/topics/topic-11/2026-12-03-1605.md"):
        assert vault.layer_of(vault.note(path)) == "session", path
    assert vault.layer_of(vault.note("memory/2026-12-01-winter-service.md")) == "dated"
    hits = search_vault(vault, "is the winter service list final", min_score=0.0)
    assert hits and not [h for h in hits if ".dreams" in h.path]
    recorded = memory_files(root, vault.settings)
    assert "memory/2026-12-02.md" in recorded
    assert not [p for p in recorded if ".dreams" in p]


def _audit(tmp_path, capsys, strip: bool) -> list[tuple]:
    root = _copy(tmp_path)
    if strip:  # the same workspace without anything dreaming wrote
        for rel in DREAMING:
            path = root / rel
            shutil.rmtree(path) if path.is_dir() else path.unlink()
    main(["audit", str(root), "--format", "json"])
    data = json.loads(capsys.readouterr().out)
    checks = data["checks"] if isinstance(data, dict) else data
    return sorted((c["id"], c["status"]) for c in checks)


def test_the_audit_says_nothing_new_of_a_dreaming_workspace(tmp_path, capsys):
    with_dreams = _audit(tmp_path / "a", capsys, strip=False)
    without = _audit(tmp_path / "b", capsys, strip=True)
    assert with_dreams == without


def test_dreaming_pruning_its_own_state_is_no_loss(tmp_path, capsys):
    """Dreaming rewrites and deletes its session corpus (Markdown there too) every night; a
    workspace that tracks memory/.dreams/ in git commits that churn: the commit hook and
    history never take it for a memory file deleted or cut."""
    import subprocess

    root = _copy(tmp_path)

    def git(*args):
        subprocess.run(["git", "-c", "user.email=a@example.org", "-c", "user.name=a", *args],
                       cwd=root, check=True, capture_output=True)

    git("init", "-q")
    git("add", "-A")
    git("commit", "-qm", "backup")
    (root / "memory/.dreams/session-corpus/2026-12-02.md").unlink()
    (root / "memory/.dreams/session-corpus/2026-12-03.txt").write_text("pruned\n")
    git("add", "-A")
    assert main(["check", str(root), "--no-cache", "--staged", "--select", "ALL"]) == 0
    assert "mass-deletion" not in capsys.readouterr().out
    git("commit", "-qm", "dreaming pruned its corpus")
    assert main(["history", str(root)]) == 0
    assert "0 loss events" in capsys.readouterr().out

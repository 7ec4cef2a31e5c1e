"""The session floor: Workspace.check with an overlay answers what `vaultkit check` says
of the same texts saved, byte for byte; its fixes, baseline and dependents."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cli_invoke import invoke
from test_git import JOURNAL, commit_all, git, init_repo

from vaultkit.lint.report import render
from vaultkit.session.workspace import Workspace, finding_key

ALICE = "---\ntype: person\n---\n# Alice\n\nWorks with [[bob#Work]] on [[site]].\n"
BOB = "---\ntype: person\n---\n# Bob\n\n## Work\n\nBuilds things.\n"
MEMORY = "# MEMORY\n\n" + "".join(f"- durable fact number {i}\n" for i in range(1, 11))
J = "memory/2026-02-13.md"


def _vault(make_vault):
    return make_vault({"memory/people/alice.md": ALICE, "memory/people/bob.md": BOB,
                       "MEMORY.md": MEMORY, "AGENTS.md": "# Agents\n\nRead MEMORY.md.\n",
                       J: JOURNAL})


def _on_disk(root: Path, overlay: dict, tmp_path: Path, paths=()) -> str:
    """`vaultkit check --no-cache --format json` of a copy of ``root`` with the overlay
    written: what the workspace must answer."""
    copy = tmp_path / "copy"
    shutil.copytree(root, copy, symlinks=True)
    for rel, text in overlay.items():
        (copy / rel).write_bytes(text.encode("utf-8"))
    code, out, err = invoke(["check", "--no-cache", "--format", "json", "-q", *paths], copy)
    assert code in (0, 1), err
    return out


def _answer(ws: Workspace, overlay: dict, paths=None) -> str:
    return render(ws.check(paths, overlay=overlay), "json")


OVERLAYS = [
    # a heading renamed breaks a link elsewhere; a property Obsidian dropped (fixable)
    {"memory/people/bob.md": BOB.replace("## Work", "## Jobs").replace(
        "type: person\n", "type: person\ntag: [x]\n")},
    # a bootstrap file grown past its budget; a journal line rewritten (a git rule)
    {"MEMORY.md": MEMORY + "".join(f"- fact {i} " + "x" * 200 + "\n" for i in range(80)),
     J: JOURNAL.replace("Smoke tests green", "Smoke tests red")},
    # the overlay back to what is committed while the file on disk differs
    {J: JOURNAL},
]


@pytest.mark.parametrize("overlay", OVERLAYS, ids=["heading", "bootstrap+journal", "restore"])
@pytest.mark.parametrize("with_git", [False, True], ids=["no-git", "git"])
def test_overlay_check_equals_check_of_the_saved_texts(make_vault, tmp_path, overlay,
                                                        with_git):
    root = _vault(make_vault)
    if with_git:
        init_repo(root)
        commit_all(root)
        (root / J).write_text(JOURNAL.replace("Deployed v1.2 to production", "Deployed v1.3"),
                              encoding="utf-8")
    invoke(["check", "-q"], root)  # a parse cache with facts, as an editor finds one
    ws = Workspace(root.resolve())
    before = _answer(ws, {})  # warm first: the overlay must not be hidden by what is kept
    assert before == _on_disk(root, {}, tmp_path / "a")
    got = _answer(ws, overlay)
    want = _on_disk(root, overlay, tmp_path / "b")
    assert got == want
    assert got != before or overlay == {J: JOURNAL} and not with_git
    # and for the paths named, as `vaultkit check PATH` reports on them
    paths = sorted(overlay)
    assert _answer(ws, overlay, paths) == _on_disk(root, overlay, tmp_path / "c", paths)
    # the overlay leaves no trace: the disk's answer again
    assert _answer(ws, {}) == before
    ws.close()


def test_git_overlay_sees_a_rewrite_the_disk_does_not_have(make_vault, tmp_path):
    root = _vault(make_vault)
    init_repo(root)
    commit_all(root)
    ws = Workspace(root.resolve())
    assert not [d for d in ws.check(None) if d.rule == "journal-append-only"]
    edited = {J: JOURNAL.replace("Smoke tests green", "Summary: a quiet day")}
    found = [d for d in ws.check(None, overlay=edited) if d.rule == "journal-append-only"]
    assert [(d.path, d.line) for d in found] == [(J, 5)]


def test_fixed_text_is_check_fix_on_the_overlay(make_vault, tmp_path):
    root = _vault(make_vault)
    text = BOB.replace("type: person\n", "type: person\ntag: [x]\nalias: Bobby\n")
    ws = Workspace(root.resolve())
    overlay = {"memory/people/bob.md": text}
    fixable = [d for d in ws.check(None, overlay=overlay) if d.fixable]
    assert {d.rule for d in fixable} == {"deprecated-property"}
    one = ws.fixed_text("memory/people/bob.md", overlay, finding_key(fixable[0]))
    assert one is not None and one.count("tags: [x]") + one.count("aliases: [Bobby]") == 1
    every = ws.fixed_text("memory/people/bob.md", overlay)
    # what `vaultkit check --fix` writes for the same text saved
    copy = tmp_path / "copy"
    shutil.copytree(root, copy)
    (copy / "memory/people/bob.md").write_text(text, encoding="utf-8")
    invoke(["check", "--fix", "--no-cache", "-q"], copy)
    assert every == (copy / "memory/people/bob.md").read_text(encoding="utf-8")
    assert (root / "memory/people/bob.md").read_text(encoding="utf-8") == BOB  # not written
    assert ws.fixed_text("memory/people/alice.md", overlay) is None


def test_accept_records_one_finding_as_the_baseline_does(make_vault):
    root = _vault(make_vault)
    ws = Workspace(root.resolve())
    broken = [d for d in ws.check(None) if d.rule == "broken-link"]
    assert len(broken) == 1
    path = ws.accept(broken[0].path, finding_key(broken[0]))
    assert path == root.resolve() / "vaultkit-baseline.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    assert [(e["rule"], e["path"], e["count"]) for e in data["findings"]] == [
        ("broken-link", "memory/people/alice.md", 1)]
    assert not [d for d in ws.check(None) if d.rule == "broken-link"]
    code, out, _ = invoke(["check", "--format", "json", "-q"], root)
    assert "broken-link" not in out
    # a second finding of the same fingerprint is new, and accepting it counts two
    overlay = {"memory/people/alice.md": ALICE + "And [[site]] again.\n"}
    again = [d for d in ws.check(None, overlay=overlay) if d.rule == "broken-link"]
    assert len(again) == 1
    ws.accept(again[0].path, finding_key(again[0]), overlay)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert [e["count"] for e in data["findings"]] == [2]


def test_dependents_are_the_notes_linking_to_it_and_the_bootstrap_set(make_vault):
    root = _vault(make_vault)
    ws = Workspace(root.resolve())
    assert ws.dependents("memory/people/bob.md") == {"memory/people/alice.md"}
    assert ws.dependents("MEMORY.md") == {"AGENTS.md"}


def test_link_at_uses_the_vaults_resolver(make_vault):
    root = _vault(make_vault)
    ws = Workspace(root.resolve())
    link, res = ws.link_at("memory/people/alice.md", 6, 13)
    assert link.raw == "[[bob#Work]]" and res.path == "memory/people/bob.md" and res.ok
    overlay = {"memory/people/bob.md": BOB.replace("## Work", "## Jobs")}
    _, res = ws.link_at("memory/people/alice.md", 6, 13, overlay)
    assert res.missing == "heading" and res.detail == "Work"
    assert ws.link_at("memory/people/alice.md", 6, 1) is None


def test_two_workspaces_share_nothing(make_vault, tmp_path):
    a = _vault(make_vault)
    b = make_vault({"memory/people/carol.md": "# Carol\n\n[[nobody]]\n"}, root_name="other")
    wa, wb = Workspace(a.resolve()), Workspace(b.resolve())
    assert {d.path for d in wa.check(None) if d.rule == "broken-link"} == {
        "memory/people/alice.md"}
    assert {d.path for d in wb.check(None) if d.rule == "broken-link"} == {
        "memory/people/carol.md"}

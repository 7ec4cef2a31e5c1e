"""A commit hook's work grows with the staged files, not with the vault times the files.

pre-commit passes every staged file: a commit that touches hundreds of notes (a rename whose
links Obsidian rewrote everywhere) names them all. The files are grouped by vault with one
search per folder, and the reported paths are found in the vault's listing read once.
"""

import json
import os

import pytest

from vaultkit.cli import main


@pytest.fixture
def vault(make_vault):
    files = {f"memory/semantic/n{i:02}.md": f"# N{i}\n[[missing-{i}]]\n" for i in range(12)}
    files.update({"memory/2026-11-29.md": "# 2026-11-29\n\n### 10:00 — A\n- [[gone]]\n",
                  "memory/lessons/l.md": "# L\n"})
    return make_vault(files)


def _hook(capsys, root, paths):
    cwd = os.getcwd()
    os.chdir(root)
    try:
        main(["check", "--hook", "--no-cache", "--format", "json", *paths])
    finally:
        os.chdir(cwd)
    return sorted((d["rule"], d["path"], d["line"]) for d in json.loads(capsys.readouterr().out))


def test_a_hook_searches_for_the_vault_once_per_folder(vault, capsys, monkeypatch):
    from vaultkit.vault import loader, scan  # noqa: F401 (its own find_root is not counted)

    real = scan.find_root
    searched = []
    monkeypatch.setattr(scan, "find_root", lambda start, *a, **k: searched.append(str(start))
                        or real(start, *a, **k))
    staged = [f"memory/semantic/n{i:02}.md" for i in range(12)] + ["memory/2026-11-29.md"]
    found = _hook(capsys, vault, staged)
    # one search for memory/semantic/, one for memory/ (before: one per staged file)
    assert searched == ["memory/semantic/n00.md", "memory/2026-11-29.md"]
    assert {p for _, p, _ in found} >= set(staged)


def test_a_symlinked_file_gets_a_search_of_its_own(vault, capsys, monkeypatch, tmp_path):
    """A staged symlink lies in the vault its target lies in, not its folder's."""
    from vaultkit.vault import loader, scan  # noqa: F401 (its own find_root is not counted)

    (vault / "memory/semantic/link.md").symlink_to(vault / "memory/semantic/n00.md")
    real = scan.find_root
    searched = []
    monkeypatch.setattr(scan, "find_root", lambda start, *a, **k: searched.append(str(start))
                        or real(start, *a, **k))
    _hook(capsys, vault, ["memory/semantic/n01.md", "memory/semantic/link.md",
                          "memory/semantic/n02.md"])
    assert searched == ["memory/semantic/n01.md", "memory/semantic/link.md"]


def test_the_reported_paths_come_from_one_read_of_the_listing(vault, monkeypatch):
    """Each named file used to be matched against every path of the vault, and the listing
    built again for each: 300 staged notes of a 10,000-note vault took seconds."""
    from vaultkit.cli.commands import _common
    from vaultkit.cli.commands.check import _targets
    from vaultkit.vault.loader import load_vault

    loaded = load_vault(vault, use_cache=False)
    reads = []

    class Counting(type(loaded)):
        @property
        def paths(self):
            reads.append(1)
            return super().paths

    loaded.__class__ = Counting
    cwd = os.getcwd()
    os.chdir(vault)
    try:
        named = [f"memory/semantic/n{i:02}.md" for i in range(12)]
        assert _targets(loaded, named, _common.vault_relative, hook=True) == set(named)
        assert len(reads) == 1
        # a folder still names every file below it, and only those
        assert _targets(loaded, ["memory/lessons", "memory/semantic/n03.md"],
                        _common.vault_relative) == {"memory/lessons/l.md",
                                                    "memory/semantic/n03.md"}
        assert _targets(loaded, ["memory/semantic/"], _common.vault_relative) == {
            f"memory/semantic/n{i:02}.md" for i in range(12)}
        # a path the listing lacks (a staged deletion) is reported on as named
        assert _targets(loaded, ["memory/old.md"], _common.vault_relative,
                        hook=True) == {"memory/old.md"}
    finally:
        os.chdir(cwd)


def test_a_hook_on_a_journal_without_phrases_compiles_no_phrase_list(make_vault, capsys,
                                                                    monkeypatch):
    """The entry rules ask the profile's phrase lists (runtime and topic sections, filler)
    of every entry; compiling those lists was ~15-20 ms of a one-note hook. A journal
    whose entries hold none of the phrases compiles none of them."""
    import re

    from vaultkit.vault import phrases

    root = make_vault({"memory/2026-11-29.md": "# 2026-11-29\n\n### 10:00 — Deploy\n"
                       "- Moved the nightly job to 02:00.\n- Checked the logs twice.\n"
                       "- The API answers again.\n"})
    phrases._cached.cache_clear()  # (matchers are shared by every run of this process)
    compiled = []
    real = re.compile
    monkeypatch.setattr(re, "compile", lambda p, *a, **k: compiled.append(p) or real(p, *a, **k))
    found = _hook(capsys, root, ["memory/2026-11-29.md"])
    assert found is not None
    # (each plain phrase list is one alternation with its words joined by \s+)
    assert [p for p in compiled if isinstance(p, str) and
            any(w in p for w in (r"light\s+sleep", r"next\s+step", r"nothing\s+to"))] == []
    assert phrases._cached.cache_info().currsize >= 2  # (the entry rules did ask)


def test_a_hook_looks_up_the_type_of_the_notes_it_reports_on_only(make_vault, capsys,
                                                                  monkeypatch):
    """The per-note rules ask each reported note's type; that used to build the type of
    every note of the vault (10,000 lookups for one staged journal)."""
    from vaultkit.vault.profile import Profile

    files = {f"memory/decisions/d{i:02}.md": f"# D{i}\n" for i in range(30)}
    files["memory/2026-11-29.md"] = "# 2026-11-29\n\n### 10:00 — Deploy\n- Moved the job.\n"
    root = make_vault(files)
    asked = []
    real = Profile.type_of
    monkeypatch.setattr(Profile, "type_of", lambda self, path: asked.append(path)
                        or real(self, path))
    cwd = os.getcwd()
    os.chdir(root)
    try:
        main(["check", "--hook", "--no-cache", "--ignore", "index-stale", "--format", "json",
              "memory/2026-11-29.md"])
    finally:
        os.chdir(cwd)
    assert json.loads(capsys.readouterr().out) is not None
    assert asked and set(asked) <= {"memory/2026-11-29.md"}

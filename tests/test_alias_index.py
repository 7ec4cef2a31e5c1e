"""The alias index (vaultkit.vault.aliases) is kept by each note's listing key, as arrays:
a commit hook whose staged note links a note that does not exist asks the changed note for
its aliases and makes no other (it used to load the whole vault, every note's record, for
that one question), and the answer is always the one a ``--no-cache`` run gives."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cli_invoke import invoke
from test_git import git, init_repo
from test_hook_work import made_notes
from vault_files import age_files, write_files

JOURNAL = "memory/2026-11-29.md"


def _files(count: int = 30) -> dict:
    files = {f"memory/decisions/d{i:02}.md": f"---\ndate: 2026-01-{i % 28 + 1:02}\n---\n"
             f"# D{i}\n\nSee [[d{(i + 1) % count:02}]].\n" for i in range(count)}
    files["memory/decisions/d02.md"] = "---\naliases: [Second, Zwei]\n---\n# D2\n\n[[d03]]\n"
    files[JOURNAL] = "# 2026-11-29\n\n### 10:00 — Deploy\n- Moved the job to [[d03]].\n"
    files["MEMORY.md"] = "# Memory\n\n- [[d01]]\n"
    return files


def _hook(root: Path, *extra: str) -> tuple:
    return invoke(["check", "--hook", "--format", "json", *extra, JOURNAL], root)


def _append(root: Path, text: str) -> None:
    with open(root / JOURNAL, "a", encoding="utf-8") as fh:
        fh.write(text)


def _watch(monkeypatch) -> tuple[list, list]:
    """The notes made (from the parse cache or read) and the notes asked for their aliases."""
    from vaultkit.vault import aliases, loader

    made, asked = made_notes(monkeypatch), []
    real_fact = loader.Vault.fact

    def fact(self, path, key, compute, **kw):
        if key == aliases.FACT:
            asked.append(path)
        return real_fact(self, path, key, compute, **kw)

    monkeypatch.setattr(loader.Vault, "fact", fact)
    return made, asked


def test_a_hook_whose_new_link_names_no_note_makes_no_other_note(make_vault, monkeypatch):
    """The broken-link rule asks which notes hold a missing target as an alias: answered
    from the kept index and the listing, not by loading every note's record."""
    root = make_vault({**_files(), JOURNAL: _files()[JOURNAL] + "- See [[No such note]].\n"})
    age_files(root)
    invoke(["check", "--format", "json", "."], root)  # (asks the index, and keeps it)
    _append(root, "\n### 11:00 — Review\n- Asked [[Also missing]] and [[zwei]].\n")
    made, asked = _watch(monkeypatch)
    code, out, err = _hook(root)
    assert not any(p.startswith("memory/decisions/") for p in made), made
    assert asked == [JOURNAL]
    found = [d["message"] for d in json.loads(out) if d["rule"] == "broken-link"]
    assert len(found) == 3
    assert any("it is an alias of 'memory/decisions/d02.md'" in m for m in found)
    monkeypatch.undo()
    assert (code, out, err) == _hook(root, "--no-cache")


def test_a_hook_that_had_to_ask_every_note_keeps_the_index_for_the_next(make_vault,
                                                                       monkeypatch):
    """No full run asked for aliases (no link was missing): the first hook with a missing
    link asks every note, loading the vault past a few, and keeps the index it built, so
    the next hook asks only the changed note."""
    from vaultkit.vault import aliases

    monkeypatch.setattr(aliases, "_MAKE_AT_MOST", 4)
    root = make_vault(_files(12))
    age_files(root)
    invoke(["check", "--format", "json", "."], root)
    _append(root, "\n### 11:00 — Review\n- Asked [[Nobody]].\n")
    first = _hook(root)
    assert first == _hook(root, "--no-cache")
    _append(root, "- And [[second]].\n")
    made, asked = _watch(monkeypatch)
    again = _hook(root)
    assert asked == [JOURNAL]
    assert not any(p.startswith("memory/decisions/") for p in made), made
    assert "it is an alias of 'memory/decisions/d02.md'" in again[1]
    monkeypatch.undo()
    assert again == _hook(root, "--no-cache")


def test_an_index_made_in_the_racy_margin_is_stamped_anew_once_its_notes_are_confirmed(
        make_vault):
    """An index written within 2 s of its notes' ctimes (a check right after a clone) holds
    their blob ids; a later hook that finds their bytes unchanged keeps it under its own
    time, so the runs after it trust their stats instead of hashing them all again. An
    alias changed after that by an edit that keeps the size and the mtime (``cp -p``) is
    seen all the same: the ctime moved."""
    from vaultkit.vault import aliases
    from vaultkit.vault.deferred import DeferredVault
    from vaultkit.vault.loader import scan_vault

    root = make_vault({**_files(), JOURNAL: _files()[JOURNAL] + "- See [[No such note]].\n"})
    age_files(root)
    invoke(["check", "--format", "json", "."], root)

    def kept():
        return aliases._stored(DeferredVault(scan_vault(root, root=root)))

    first = kept()
    assert first is not None and "memory/decisions/d02.md" in first[4]  # (racy: its blob id)
    time.sleep(2.1)  # (the notes' ctimes leave the racy margin)
    _append(root, "- And [[zwei]].\n")
    assert _hook(root) == _hook(root, "--no-cache")
    second = kept()
    assert second[1] > first[1] and second[4] == {}
    assert second[2:4] == first[2:4] and second[5] == first[5]  # (only stamped anew)
    note = root / "memory/decisions/d02.md"
    copy = root.parent / "d02-copy.md"
    copy.write_text(note.read_text().replace("Zwei", "Drei"))
    shutil.copystat(note, copy)
    shutil.copy2(copy, note)  # (`cp -p`: the same size and mtime)
    _append(root, "- And [[drei]].\n")
    code, out, err = _hook(root)
    assert "no note 'drei': it is an alias of 'memory/decisions/d02.md'" in out
    assert "no note 'zwei': it is an alias" not in out
    assert (code, out, err) == _hook(root, "--no-cache")


# -- property: whatever edits the notes holding aliases see, the answer is --no-cache's ---

NOTES = ["People/a.md", "People/b.md", "People/c.md"]
# one length each, so a rewrite keeps the size
LINES = ["aliases: [Ana]\n", "aliases: [Bea]\n", "aliases: [ana]\n", "tags: [people]\n",
         "aliases: Bea  \n"]
assert len({len(line) for line in LINES}) == 1
LINKS = ["Ana", "bea", "Cid", "people", "Nobody"]  # what a grown journal links, by line
DAY = "Daily/2026-03-02.md"
DAY_TEXT = "# 2026-03-02\n\nCalled [[Ana]], [[bea|her]] and ![[Cid#Plans]]; [[a]].\n"

note = st.sampled_from(NOTES)
line = st.sampled_from(LINES)
EDITS = st.tuples(st.sampled_from(["same-size-mtime-back", "copy2", "rename-save", "add",
                                   "remove", "journal"]), note, line)
RUNS = st.sampled_from(["full", "hook"])


def _text(body: str) -> str:
    return f"---\n{body}---\n# Person\n"


def _edit(root: Path, outside: Path, edit) -> None:
    kind, what, body = edit
    path = root / what
    if kind == "remove":
        path.unlink(missing_ok=True)
    elif kind == "journal":  # (the hook's staged note, grown)
        with open(root / DAY, "a", encoding="utf-8") as fh:
            fh.write(f"Also [[{LINKS[LINES.index(body)]}]].\n")
    elif kind == "add" or not path.exists():
        path.write_text(_text(body.replace("Ana", "Cid")), encoding="utf-8")
    elif kind == "same-size-mtime-back":
        old = os.stat(path)
        path.write_text(_text(body), encoding="utf-8")
        os.utime(path, ns=(old.st_atime_ns, old.st_mtime_ns))
    elif kind == "rename-save":
        old = os.stat(path)
        temp = path.with_name(f".{path.name}.swp")
        temp.write_text(_text(body), encoding="utf-8")
        os.utime(temp, ns=(old.st_atime_ns, old.st_mtime_ns))
        os.replace(temp, path)
    else:  # copy2: `cp -p` of a copy with the old mtime
        old = os.stat(path)
        source = outside / f"copy-{path.name}"
        source.write_text(_text(body), encoding="utf-8")
        os.utime(source, ns=(old.st_atime_ns, old.st_mtime_ns))
        shutil.copy2(source, path)


@settings(max_examples=25, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(st.lists(st.tuples(EDITS, RUNS), min_size=1, max_size=5),
       st.lists(line, min_size=3, max_size=3))
def test_cached_alias_answers_are_the_fresh_ones_over_any_edits(steps, bodies):
    with tempfile.TemporaryDirectory() as tmp:
        root, outside = Path(tmp) / "vault", Path(tmp) / "outside"
        outside.mkdir()
        (root / ".obsidian").mkdir(parents=True)
        write_files(root, {"vaultkit.toml": 'profile = "obsidian"\n', DAY: DAY_TEXT,
                           **{p: _text(b) for p, b in zip(NOTES, bodies)}})
        init_repo(root)
        git(root, "add", "-A")
        age_files(root)
        for edit, run in [(None, "full"), *steps]:
            if edit is not None:
                _edit(root, outside, edit)
                git(root, "add", "-A")  # (the commit holds the work tree: the hook's view)
            args = ["check", "--select", "broken-link", "--format", "json"]
            args += ["--hook", DAY] if run == "hook" else ["."]
            cached = invoke(args, root)
            assert cached[:2] == invoke([*args, "--no-cache"], root)[:2], (edit, run)


@pytest.mark.parametrize("count", [0, 1, 513, 1500])
def test_the_kept_arrays_are_aligned_to_the_notes_listed_now(count):
    """A note added, removed or renamed since the index was kept: the kept numbers are
    taken by path, and a note not kept gets numbers no file has."""
    from array import array

    from vaultkit.vault.aliases import _aligned

    paths = [f"n{i:05}.md" for i in range(count)]
    kept = tuple(array("q", [i * k for i in range(count)]) for k in (1, 2, 3, 4))
    now = [p for i, p in enumerate(paths) if i % 3] + ["zz-new.md"]
    got = _aligned(paths, kept, now)
    for k, column in enumerate(got):
        assert list(column[:-1]) == [i * (k + 1) for i in range(count) if i % 3]
        assert column[-1] == -1

"""What keeps a cold check's memory flat: no note's text crosses from the parse workers,
and none is held once that note's per-note rules ran (read from its file again on use)."""

import os

import vaultkit.vault.loader as vault_mod
from vaultkit.lint.engine import Selection, run_rules, select_rules
from vaultkit.lint.rule import Context
from vaultkit.vault.loader import Lent, load_vault


def _holds_text(note) -> bool:
    return note.holds_text()


def _files(n: int) -> dict:
    return {f"memory/semantic/n{i}.md":
            f"# N{i}\n\nSee [[n{i + 1}]] and `memory/semantic/n{i + 2}.md`. #t{i}\n"
            for i in range(n)}


def test_the_main_process_receives_no_note_text_from_the_workers(make_vault, monkeypatch):
    files = _files(60)
    root = make_vault(files)
    # what a worker sends back: the parse and its facts, never the text
    items = [(str(root / p), p, 1 << 20, None) for p in sorted(files)]
    for sent in vault_mod._parse_chunk(items):
        assert not any(isinstance(part, str) and "See [[" in part for part in sent), sent
        assert not any(isinstance(part, bytes) and b"See [[" in part for part in sent)
    monkeypatch.setattr(vault_mod, "_PARALLEL_MIN", 10)
    vault = load_vault(root, use_cache=False)
    assert len(vault.notes) == 60
    for path, note in vault.notes.items():
        assert not _holds_text(note), path
        assert note.headings[0].text == path[16:-3].upper()
        assert note.text == files[path]  # read from its file on first use


def test_the_paths_a_note_names_are_found_where_it_is_parsed(make_vault, monkeypatch):
    from vaultkit.vault.mentions import FACT

    files = _files(60)
    root = make_vault(files)
    monkeypatch.setattr(vault_mod, "_PARALLEL_MIN", 10)
    vault = load_vault(root, use_cache=False)
    read = []
    monkeypatch.setattr(vault_mod, "_read_text", lambda note: read.append(note.path))
    i = 7
    path = f"memory/semantic/n{i}.md"
    assert vault.fact(path, FACT, lambda: 1 / 0) == [f"memory/semantic/n{i + 2}.md"]
    assert read == []  # no note's text was read for it


def _note_rules(vault):
    return [r for r in select_rules(vault.settings, Selection()) if r.scope == "note"]


def test_a_cold_check_keeps_no_note_text_after_its_per_note_rules_ran(make_vault, monkeypatch):
    files = _files(60)
    files["memory/semantic/bad.md"] = "---\ntype: [unclosed\n---\n# Bad\n"
    root = make_vault(files)
    for parallel in (True, False):
        monkeypatch.setattr(vault_mod, "_PARALLEL_MIN", 10 if parallel else 10_000)
        vault = load_vault(root, use_cache=False)
        for note in vault.notes.values():
            note.text  # (held, as after any rule that read it)
        held_while_checked = []
        rules = _note_rules(vault)
        first = rules[0].rule if hasattr(rules[0], "_rule") else rules[0]
        real = first.check

        def spy(note, ctx, real=real):
            # when a note's rules start, every note before it has let go of its text
            held_while_checked.append(sum(_holds_text(n) for n in vault.notes.values()))
            return real(note, ctx)

        monkeypatch.setattr(first, "check", spy, raising=False)
        found = run_rules(Context(vault), rules)
        assert any(d.path == "memory/semantic/bad.md" for d in found)
        assert not [p for p, n in vault.notes.items() if _holds_text(n)]
        # note k's rules start with the notes from k on still holding theirs
        assert held_while_checked == [len(files) - k for k in range(len(files))]
        monkeypatch.undo()


def test_a_released_note_whose_file_changed_is_parsed_again(make_vault, monkeypatch):
    root = make_vault({"memory/semantic/a.md": "# A\n\n[[b]]\n", "memory/semantic/b.md": "# B\n"})
    vault = load_vault(root, use_cache=False)
    note = vault.notes["memory/semantic/a.md"]
    assert note.release_text() and not _holds_text(note)
    assert note.lines == ["# A", "", "[[b]]"]  # the same text, read again
    assert note.release_text()
    path = root / "memory/semantic/a.md"
    path.write_text("# Changed heading\n")
    os.utime(path, ns=(note.mtime_ns + 5_000_000_000,) * 2)
    # its parse and its text stay one: the file as it is now, parsed again
    assert note.text == "# Changed heading\n"
    assert [h.text for h in note.headings] == ["Changed heading"] and note.links == []


def test_a_note_made_in_memory_keeps_its_text(make_vault):
    from vaultkit.vault.model import Note

    note = Note(path="x.md", text="# X\n", line_count=1)
    assert not note.release_text()
    assert note.text == "# X\n"


def test_the_progress_of_a_check_counts_the_notes_as_their_rules_run(make_vault, monkeypatch):
    from vaultkit.core import progress

    files = _files(30)
    root = make_vault(files)
    vault = load_vault(root, use_cache=False)
    counted = []

    class Spy(progress.Progress):
        def advance(self, n: int = 1) -> None:
            super().advance(n)
            counted.append((self.label, self.done))

    monkeypatch.setattr(progress, "Progress", Spy)
    rules = select_rules(vault.settings, Selection())
    run_rules(Context(vault), rules)
    assert [d for label, d in counted if label == "checking notes"] == list(range(1, 31))
    assert [d for label, d in counted if label == "running rules"][-1] == len(rules)


def test_a_parsed_note_holds_the_listings_objects_and_strings_shared_once(make_vault,
                                                                          monkeypatch):
    """What a cold check of a big vault holds per note: its path, size and mtime are the
    listing's objects, a note without block ids holds no dict of its own, equal link targets
    and headings are one string, and the table that shared them is gone after the parse."""
    from vaultkit.vault import model
    from vaultkit.vault.loader import scan_vault

    files = {f"memory/semantic/n{i}.md": f"# Context\n\nSee [[hub]] and [[hub#Context]].\n"
             for i in range(40)}
    files["memory/semantic/hub.md"] = "# Context\n\nA paragraph ^anchor\n"
    root = make_vault(files)
    monkeypatch.setattr(vault_mod, "_PARALLEL_MIN", 10)
    scan = scan_vault(root, use_cache=False)
    vault = load_vault(use_cache=False, lent=Lent(scan=scan))
    listed = {f.rel: f for f in scan.files}
    notes = [vault.notes[p] for p in sorted(files)]
    for note in notes:
        f = listed[note.path]
        assert note.path is f.rel and note.size is f.size and note.mtime_ns is f.mtime_ns
    plain = [n for n in notes if not n.path.endswith("hub.md")]
    assert len({id(n.block_ids) for n in plain}) == 1 and not plain[0].block_ids
    assert vault.notes["memory/semantic/hub.md"].block_ids == {"anchor": 3}
    assert type(plain[0].to_plain()[15]) is dict  # (marshal takes a dict, not the mapping)
    assert len({id(n.links[0].target) for n in plain}) == 1
    assert len({id(n.headings[0].text) for n in notes}) == 1
    assert model._STRINGS == {}
    with __import__("pytest").raises(TypeError):
        plain[0].block_ids["x"] = 1  # (shared: nobody may write into it)


def test_a_heading_link_keeps_a_set_of_the_target_headings_and_no_table(make_vault):
    from vaultkit.lint.engine import Selection

    files = {f"memory/semantic/n{i}.md": f"# Context {i % 2}\n\nSee [[hub#Context]].\n"
             for i in range(6)}
    files["memory/semantic/hub.md"] = "# Context\n\n## Next steps\n"
    files["memory/semantic/m.md"] = "See [[n0#Context 0]], [[n2#context 0]], [[hub#Gone]].\n"
    root = make_vault(files)
    vault = load_vault(root, use_cache=False)
    diags = run_rules(Context(vault), select_rules(vault.settings,
                                                   Selection(select=["broken-link"])))
    assert [d.path for d in diags] == ["memory/semantic/m.md"] and "Gone" in diags[0].message
    resolver = vault.resolver
    assert resolver._headings == {} and resolver._lenient == {}  # (one-part subpaths only)
    sets = resolver._heading_sets
    assert sets[("memory/semantic/n0.md", 0)] == {"context 0"}
    assert sets[("memory/semantic/n0.md", 0)] == sets[("memory/semantic/n2.md", 0)]
    first, second = (next(iter(sets[(p, 0)])) for p in ("memory/semantic/n0.md",
                                                        "memory/semantic/n2.md"))
    assert first is second  # (one string for the same heading in many notes)


_WORKER_IMPORTS = """
import os, sys
from pathlib import Path
import vaultkit.vault.loader as L

L._PARALLEL_MIN = 10
real = L._parse_chunk

def chunk(items):  # what each worker imported while it parsed, one file per worker
    before = set(sys.modules)
    out = real(items)
    with open(os.path.join(sys.argv[2], str(os.getpid())), "a") as f:
        f.write("".join(name + "\\n" for name in sorted(set(sys.modules) - before)))
    return out

L._parse_chunk = chunk
assert len(L.load_vault(Path(sys.argv[1]), use_cache=False).notes) == 60
"""


def test_the_parse_workers_import_nothing_the_main_process_could_import_once(make_vault,
                                                                              tmp_path):
    """A module a worker imports is compiled once per worker (the parser's patterns cost
    more than a tenth of a second each time on a loaded machine); imported before the fork
    it is shared. A fresh interpreter, so the test's own imports hide nothing."""
    import subprocess
    import sys

    root = make_vault(_files(60))
    seen = tmp_path / "imports"
    seen.mkdir()
    subprocess.run([sys.executable, "-c", _WORKER_IMPORTS, str(root), str(seen)], check=True,
                   cwd=tmp_path)
    reports = {p.name: p.read_text().split() for p in seen.iterdir()}
    assert reports, "no worker parsed"
    assert all(names == [] for names in reports.values()), reports

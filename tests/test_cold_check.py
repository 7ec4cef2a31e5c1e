"""What a cold check does once that it did more than once: the per-note work the rules share,
and the parse workers' reads."""

import os

import vaultkit.vault.entries as entries_mod
from vaultkit.lint.engine import Selection, run_rules, select_rules
from vaultkit.lint.rule import Context
from vaultkit.vault.loader import load_vault

_JOURNAL = ("# 2026-01-05\n\n### 09:00 — Kickoff\nSystem idle, no changes.\n\n"
            "### 10:00 — Work\n" + "".join(f"- step {i} of the migration\n" for i in range(40))
            + "\n### 11:00 — Short\nok\n")
_ENTRY_RULES = ("entry-too-long", "filler-entry", "entry-too-short")


def _entry_rules(vault):
    chosen = select_rules(vault.settings, Selection(extend_select=["entry-too-short"]))
    return [r for r in chosen if r.name in _ENTRY_RULES]


def _findings(vault):
    return [(d.rule, d.path, d.line, d.message)
            for d in run_rules(Context(vault), _entry_rules(vault))]


def test_the_entry_rules_read_a_notes_entries_once(make_vault, monkeypatch):
    root = make_vault({"memory/2026-01-05.md": _JOURNAL, "memory/2026-01-06.md": _JOURNAL})
    vault = load_vault(root, use_cache=False)
    assert len(_entry_rules(vault)) == 3
    made = []
    real = entries_mod.journal_entries
    monkeypatch.setattr(entries_mod, "journal_entries",
                        lambda note: made.append(note.path) or real(note))
    found = _findings(vault)
    assert made == ["memory/2026-01-05.md", "memory/2026-01-06.md"]  # (3 each before)
    assert {rule for rule, *_ in found} == set(_ENTRY_RULES)
    # the same findings as when every rule makes them itself
    monkeypatch.setattr(entries_mod, "note_entries", entries_mod._note_entries)
    import vaultkit.lint.rules.entry_too_long as too_long
    import vaultkit.lint.rules.entry_too_short as too_short
    import vaultkit.lint.rules.filler_entry as filler

    for mod in (too_long, too_short, filler):
        monkeypatch.setattr(mod, "note_entries", entries_mod._note_entries, raising=False)
    assert _findings(load_vault(root, use_cache=False)) == found


def test_a_notes_entries_are_made_again_once_its_lines_are_read_again(make_vault):
    root = make_vault({"memory/2026-01-05.md": _JOURNAL})
    vault = load_vault(root, use_cache=False)
    note = vault.notes["memory/2026-01-05.md"]
    first = entries_mod.note_entries(vault, note)
    again = entries_mod.note_entries(vault, note)
    assert again == first and again is not first  # (a list of its own: no rule changes another's)
    assert note.release_text()
    path = root / "memory/2026-01-05.md"
    path.write_text(_JOURNAL.replace("### 11:00 — Short\nok\n", ""))
    os.utime(path, ns=(note.mtime_ns + 5_000_000_000,) * 2)
    assert [e.label for e in entries_mod.note_entries(vault, note)] == \
        [e.label for e in first][:-1]  # the file as it is now


def test_a_parsed_note_is_decoded_without_a_python_call_per_string(make_vault, monkeypatch):
    """A cold check decodes every note the workers parsed: its shared strings (link targets,
    aliases, headings, tags, property names) are looked up in the table directly."""
    import marshal

    from vaultkit.vault import model
    from vaultkit.vault.parse import parse_note

    text = ("---\ntype: decision\ntags: [a]\n---\n# Launch\n\n[[Plan|the plan]] [[Plan]] "
            "[x](other.md#Risks) #topic\n")
    plain = marshal.loads(marshal.dumps(parse_note("a.md", text.encode()).to_plain(False)))
    calls = []
    real = model._shared
    monkeypatch.setattr(model, "_shared", lambda value: calls.append(value) or real(value))
    model.forget_shared()
    one, two = model.Note.from_plain(plain), model.Note.from_plain(plain)
    assert calls == []
    assert one.to_plain(False) == plain == two.to_plain(False)
    assert [lk.alias for lk in one.links] == ["the plan", None, "x"]
    for a, b in zip(one.links, two.links):  # (the one copy of each string)
        assert a.target is b.target and a.raw is b.raw and a.subpath is b.subpath
        assert a.alias is b.alias
    assert one.headings[0].text is two.headings[0].text and one.tags[0].name is two.tags[0].name
    assert list(one.frontmatter)[0] is list(two.frontmatter)[0]
    model.forget_shared()


def test_a_note_is_read_with_one_stat_of_its_path(make_vault, monkeypatch):
    """The worker's read takes the note's size, times and inode from the descriptor it read
    (``fstat``), not from a second ``stat`` of the path."""
    import vaultkit.vault.loader as loader

    root = make_vault({"memory/semantic/a.md": "# A\n\n[[b]]\n"})
    path = str(root / "memory/semantic/a.md")
    stats = []
    real = os.stat
    monkeypatch.setattr(os, "stat", lambda p, *a, **k: stats.append(p) or real(p, *a, **k))
    note = loader._read_one(path, "memory/semantic/a.md", 1 << 20)
    monkeypatch.undo()
    assert stats == [path]  # (the check that it is a regular file, before it is opened)
    st = os.stat(path)
    assert (note.size, note.mtime_ns, note.ctime_ns, note.ino) == \
        (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
    assert [lk.target for lk in note.links] == ["b"] and note.error is None


def _notes(count: int) -> dict:
    """``count`` knowledge notes linking each other (a heading too), and one more."""
    files = {f"memory/semantic/n{i}.md": f"# Note {i}\n\nWhat was found, and why it "
             f"matters.\n\n[[n{(i + 1) % count}#Note {(i + 1) % count}]] [[n{i - 1}]]\n"
             for i in range(1, count + 1)}
    files["memory/semantic/n0.md"] = "# Note 0\n\n[[n1]]\n"
    return files


def test_a_check_runs_no_import_statement_per_note(make_vault, monkeypatch):
    """What the rules call per note is imported once per run, not in each call: an import
    statement in a function (``from x import y``) costs ~2 µs each time (the module's
    ``__path__`` looked for, the AttributeError of its absence formatted), and the
    per-note accessors ran 90,000 of them in a cold check of 10,000 notes."""
    import builtins
    import sys
    from collections import Counter

    import vaultkit

    count = 30
    root = make_vault(_notes(count))
    vault = load_vault(root, use_cache=False)
    # (not index-stale: it describes each note INDEX.md lists, a few dozen in a big vault)
    rules = [r for r in select_rules(vault.settings, Selection()) if r.name != "index-stale"]
    ran = Counter()
    real = builtins.__import__
    package = os.path.dirname(vaultkit.__file__)

    def spy(name, globals=None, locals=None, fromlist=(), level=0):
        code = sys._getframe(1).f_code
        if code.co_filename.startswith(package):  # (vaultkit's own import statements)
            ran[(code.co_filename, code.co_name)] += 1
        return real(name, globals, locals, fromlist, level)

    monkeypatch.setattr(builtins, "__import__", spy)
    run_rules(Context(vault), rules)
    monkeypatch.undo()
    assert len(vault.notes) == count + 1
    assert {rule.name for rule in rules} >= {"entry-too-long", "secret-in-memory",
                                             "skill-frontmatter", "skill-shadows-bundled"}
    assert [(site, n) for site, n in ran.items() if n >= count] == []


def test_a_parse_worker_runs_no_import_statement_per_note(make_vault, monkeypatch):
    """A parse worker imports what it reads and scans notes with once a chunk: four
    ``from`` imports a note were ~0.08 s of the workers' CPU in a cold check of 10,000."""
    import builtins
    from collections import Counter

    import vaultkit.vault.loader as loader

    count = 30
    root = make_vault(_notes(count))
    items = [(str(root / rel), rel, 1 << 20, None) for rel in sorted(_notes(count))]
    loader._parse_chunk(items[:1])  # (the modules imported, as before the fork)
    ran = Counter()
    real = builtins.__import__

    def spy(name, globals=None, locals=None, fromlist=(), level=0):
        ran[(name, tuple(fromlist or ()))] += 1
        return real(name, globals, locals, fromlist, level)

    monkeypatch.setattr(builtins, "__import__", spy)
    found = loader._parse_chunk(items)
    monkeypatch.undo()
    assert len(found) == count + 1 and all(blob for _, blob, _, _ in found)
    # (seen_ns None: every note gets its blob id, whose import runs where it is needed)
    assert {k: n for k, n in ran.items() if n > 2 and k[0] != "vaultkit.core.digests"} == {}


def test_the_record_of_what_a_rule_read_is_found_on_the_rules_thread(make_vault):
    """A context's record slot is set on the thread that made it (the one running the
    rules): a lookup that misses on a ``threading.local`` formats an AttributeError, and a
    cold check of 10,000 notes looked ~100,000 times. Another thread still reads none."""
    import threading

    root = make_vault({"memory/semantic/a.md": "# A\n\n[[b]]\n", "memory/semantic/b.md": "# B\n"})
    ctx = Context(load_vault(root, use_cache=False))
    assert ctx._at.__dict__ == {"now": None}
    ctx._record_note("memory/semantic/b.md")
    assert ctx.read == {}
    ctx.reading("broken-link", "memory/semantic/a.md")
    beside = threading.Thread(target=ctx._record_note, args=("memory/semantic/b.md",))
    beside.start()
    beside.join()
    assert ctx.read == {}  # (the other thread runs no rule)
    ctx._record_note("memory/semantic/b.md")
    assert ctx.read == {"broken-link": {"memory/semantic/a.md": {"n\0memory/semantic/b.md"}}}


def test_conflict_markers_reads_no_note_text_after_the_parse_workers(make_vault, monkeypatch):
    """The conflicts git left in a note are a fact the parse workers compute beside the
    parse: the main process of a cold check read every note's text again for
    ``conflict-markers`` alone (10,000 reads of a file at 10,000 notes)."""
    import vaultkit.vault.loader as loader
    from vaultkit.vault import conflicts

    files = _notes(12)
    files["memory/semantic/n3.md"] = ("# Note 3\n\n<<<<<<< HEAD\n- ours\n=======\n- theirs\n"
                                      ">>>>>>> laptop\n")
    files["memory/semantic/n5.md"] = ("# Note 5\n\n```\n<<<<<<< HEAD\nours\n=======\n"
                                      "theirs\n>>>>>>> branch\n```\n")
    root = make_vault(files)
    monkeypatch.setattr(loader, "_PARALLEL_MIN", 1)  # (the workers, as at 400 notes and more)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    vault = load_vault(root, use_cache=False)
    monkeypatch.undo()
    assert all(not n.holds_text() for n in vault.notes.values())  # (sent by the workers)
    reads = []
    real = loader._read_text
    monkeypatch.setattr(loader, "_read_text", lambda note: reads.append(note.path)
                        or real(note))
    rules = [r for r in select_rules(vault.settings, Selection()) if r.name == "conflict-markers"]
    found = [(d.path, d.line, d.message) for d in run_rules(Context(vault), rules)]
    assert reads == []
    assert found == [("memory/semantic/n3.md", 3, "an unresolved merge conflict (lines 3-7): "
                      "keep the lines you mean from each side, then delete git's marker lines")]
    # the fact is what the note's own text gives (a vault parsed here, text held)
    here = load_vault(root, use_cache=False)
    for path, note in here.notes.items():
        assert vault.fact(path, conflicts.FACT, lambda: None) == conflicts.note_conflicts(note)

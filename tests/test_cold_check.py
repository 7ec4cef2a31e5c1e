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

"""A note is plain data: what was parsed is in its fields, and no attribute hook decodes a
note or loads a vault on first use. The laziness a commit hook needs (10,000 records, a few
used) is explicit: a vault's ``Notes`` holds a note of the parse cache as its ``Stored``
entry until the note is asked for (the store decodes it then), a note's text is read by its
``source``, and a deferred vault begins or loads through named methods."""

from vault_files import age_files
from vaultkit.vault.deferred import DeferredVault
from vaultkit.vault.loader import FILES, Stored, load_vault, scan_vault
from vaultkit.vault.model import _PARSE_FIELDS, Note

FILES_OF_VAULT = {"memory/semantic/a.md": "---\ntags: [x]\n---\n# A\n\nSee [[b]] #t ^id\n",
                  "memory/semantic/b.md": "# B\n\n[[a#A]]\n"}


def test_a_note_from_the_parse_cache_holds_its_parse_once_handed_out(make_vault):
    root = make_vault(FILES_OF_VAULT)
    age_files(root)
    fresh = load_vault(root, use_cache=False).notes["memory/semantic/a.md"]
    load_vault(root)  # (the parse cache)
    vault = load_vault(root)
    # the load decodes no record: each note is its store's entry until asked for
    entries = vault.notes.entries()
    assert sorted(entries) == sorted(FILES_OF_VAULT)
    assert all(type(e) is Stored and e.error is None for e in entries.values())
    assert vault.note_states() == [(p, e.size, e.mtime_ns, e.ctime_ns, e.ino)
                                   for p, e in entries.items()]
    assert all(type(e) is Stored for e in vault.notes.entries().values())  # (still)
    note = vault.notes["memory/semantic/a.md"]
    assert type(note) is Note and vault.notes.entry("memory/semantic/a.md") is note
    # every parsed field is set, without an attribute hook that fills it on first use
    assert "__getattr__" not in vars(Note)
    for name in _PARSE_FIELDS:
        if name not in ("_text", "_lines"):
            assert object.__getattribute__(note, name) == getattr(fresh, name), name
    # the text alone is read from the file, by the note's source, when asked for
    assert note.source is FILES and not note.holds_text()
    assert note.text == FILES_OF_VAULT["memory/semantic/a.md"] and note.holds_text()
    assert note.to_plain() == fresh.to_plain()
    # going through the values decodes the rest, once
    assert [n.path for n in vault.notes.values()] == sorted(FILES_OF_VAULT)
    assert all(type(e) is Note for e in vault.notes.entries().values())


def test_a_deferred_vault_begins_and_loads_through_named_steps(make_vault):
    root = make_vault(FILES_OF_VAULT)
    age_files(root)
    load_vault(root)
    vault = DeferredVault(scan_vault(root, root=root))
    assert "__getattr__" not in vars(DeferredVault)
    assert vault.attachments == {} and not vault.loaded  # (from the listing)
    assert vault.external == {} and vault._cache is not None and not vault.loaded
    note = vault.notes["memory/semantic/b.md"]  # made alone, decoded
    assert type(note) is Note and [lk.target for lk in note.links] == ["a"]
    assert not vault.loaded
    assert sorted(vault.notes) == sorted(FILES_OF_VAULT) and vault.loaded
    assert vault.notes["memory/semantic/b.md"] is note  # (the load took it over)

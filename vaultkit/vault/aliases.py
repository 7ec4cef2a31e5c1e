"""Which notes hold which ``aliases``: one index per vault for broken-link's alias links.

Building it asks every note for its frontmatter, which after a change (the commit hook)
would decode the cached record of every note. The index is kept in
the vault's store (entry ``aliases``) with each note's size and mtime, so a run after a change
reads the aliases of the notes that changed only; with ``--no-cache`` it is built afresh, and
the answer is the same.
"""

from __future__ import annotations

FACT = "aliases"  # the per-note fact: the note's `aliases` property, as written
NAME = "aliases"  # its entry in the vault's store (vaultkit.vault.store)
VERSION = 2  # (2: notes known by size, mtime, ctime and inode)


def aliases_of(note) -> list[str]:
    """The ``aliases`` property of a note: a list of names, or one name."""
    fm = note.frontmatter
    value = fm.get("aliases") if isinstance(fm, dict) else None
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, list):
        return []
    return [str(v).strip() for v in value
            if isinstance(v, (str, int, float)) and not isinstance(v, bool) and str(v).strip()]


def note_aliases(vault, path: str, note) -> list[str]:
    """A note's aliases, as a fact cached with the note."""
    if note is None or note.error:
        return []
    # (``note`` may be the vault's entry of a note not decoded: decoded only to compute it)
    return vault.fact(path, FACT, lambda: aliases_of(vault.notes.get(path) or note))


def _stored(vault) -> tuple[dict, int]:
    """The index the last run kept (path -> ((size, mtime, ctime, inode), None, names)) and
    the time before which
    its entries can be trusted; empty with ``--no-cache`` or when there is none."""
    memo = vault.__dict__.get("_alias_stored")
    if memo is not None:
        return memo
    from vaultkit.vault.store import RACY_NS

    memo = ({}, 0)
    if vault.caching:
        try:
            version, stamp, kept = vault.store.get(NAME)
            if version == VERSION and isinstance(stamp, int) and isinstance(kept, dict):
                memo = (kept, stamp - RACY_NS)
        except (EOFError, ValueError, TypeError):  # (none: TypeError)
            pass
    vault.__dict__["_alias_stored"] = memo
    return memo


def new_aliases(vault, paths) -> set[str]:
    """The case-folded aliases the notes ``paths`` hold now and did not hold when the kept
    index was made (all they hold, when there is none)."""
    stored, _ = _stored(vault)
    out = set()
    for path in paths:
        now = note_aliases(vault, path, vault.notes.get(path))
        hit = stored.get(path)
        before = {n.casefold() for n in hit[2]} if isinstance(hit, tuple) and len(hit) == 3 \
            and isinstance(hit[2], tuple) else set()
        out.update(n.casefold() for n in now if n.casefold() not in before)
    return out


def alias_index(vault, keep: bool = True) -> dict[str, list[str]]:
    """Case-folded alias -> the notes holding it (in the vault's order), once per vault.
    ``keep``: write the index for the next run (only a run whose findings the results cache
    keeps may: :func:`new_aliases` compares with the state those findings were made in)."""
    index = vault.__dict__.get("_alias_index")
    if index is not None:
        return index
    import marshal

    from vaultkit.vault.cachefile import packed

    stored, trusted_before = _stored(vault)
    record: dict = {}
    new = len(stored) != len(vault.notes)
    notes = vault.notes
    for path, note in notes.entries().items():  # (a note is decoded only when read again)
        # (by size, mtime, ctime and inode, as every stat key: an mtime can be put back)
        stat = (note.size, note.mtime_ns, note.ctime_ns, note.ino)
        hit = stored.get(path)
        # (a note changed in the tick the index was made may hold what the index does not)
        if isinstance(hit, tuple) and len(hit) == 3 and hit[0] == stat \
                and max(note.mtime_ns, note.ctime_ns) < trusted_before \
                and isinstance(hit[2], tuple):
            names = hit[2]
        else:
            names = tuple(note_aliases(vault, path, note))
            new = True
        record[path] = (stat, None, names)
    if vault.caching and new and keep:
        # (packed: mostly paths and stat keys, a fifth of the size; read only after a change)
        vault.store.put(NAME, packed(marshal.dumps((VERSION, vault.started_ns, record))))
    index = {}
    for path, (_, _, names) in record.items():
        for name in names:
            index.setdefault(name.casefold(), []).append(path)
    vault.__dict__["_alias_index"] = index
    return index

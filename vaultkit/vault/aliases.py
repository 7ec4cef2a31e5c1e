"""Which notes hold which ``aliases``: one index per vault for broken-link's alias links.

Building it asks every note for its frontmatter, which decodes the cached record of every
note (at 10,000 notes a commit hook whose staged note links a note that does not exist
paid that load in every run). The index is kept in the vault's store (entry ``aliases``)
as the listing's key of each note, the way the index memo keeps it: the notes' paths,
their sizes, mtimes, ctimes and inodes as four arrays, the blob ids of the notes whose
ctime lay in the racy margin, and the names of the notes that hold any. A run compares
the listing's arrays with the kept ones (vaultkit.vault.store.changed_since: a hook's
vault is not loaded for it) and asks the notes that differ only; with ``--no-cache`` it
is built afresh, and the answer is the same.
"""

from __future__ import annotations

FACT = "aliases"  # the per-note fact: the note's `aliases` property, as written
NAME = "aliases"  # its entry in the vault's store (vaultkit.vault.store)
VERSION = 3  # (3: the stats as arrays, the racy notes' blob ids, the names held)
# notes asked one by one before the vault is loaded instead (as vaultkit.vault.deferred)
_MAKE_AT_MOST = 64


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


def _stored(vault) -> tuple | None:
    """The index the last run kept: ``(record, stamp, paths, arrays, oids, names)``, the
    arrays of ``array("q")``; None with ``--no-cache``, when there is none or it is
    another version's or damaged."""
    if not vault.caching:
        return None
    from array import array

    try:
        record = vault.store.get(NAME)
        version, stamp, paths, sizes, mtimes, ctimes, inos, oids, names = record
        if version != VERSION or not isinstance(stamp, int) or not isinstance(paths, list) \
                or not isinstance(oids, dict) or not isinstance(names, dict):
            return None
        kept = tuple(array("q", a) for a in (sizes, mtimes, ctimes, inos))
    except (EOFError, ValueError, TypeError):  # (none: TypeError)
        return None
    if any(len(a) != len(paths) for a in kept):
        return None
    return record, stamp, paths, kept, oids, names


def _aligned(paths: list[str], kept: tuple, now: list[str]) -> tuple:
    """The arrays ``kept`` (of the notes ``paths``) for the notes ``now``: a note not kept
    gets numbers no file has (-1), so it is asked."""
    from array import array

    at = {p: i for i, p in enumerate(paths)}
    where = [at.get(p, -1) for p in now]
    return tuple(array("q", [a[i] if i >= 0 else -1 for i in where]) for a in kept)


def alias_index(vault, keep: bool = True) -> dict[str, list[str]]:
    """Case-folded alias -> the notes holding it (in the vault's order), once per vault.
    ``keep``: write the index for the next run when any note's entry changed (a run of
    the whole vault); a run of named files (the commit hook) writes it only when it asked
    so many notes that the next run would load the vault again, or to stamp it anew (see
    :func:`_settle`)."""
    index = vault.__dict__.get("_alias_index")
    if index is not None:
        return index
    from vaultkit.vault.store import RACY_NS, changed_since, note_numbers

    listed = paths, numbers = note_numbers(vault)
    stored = _stored(vault)
    names: dict[str, tuple] = {}  # path -> the names it holds (only notes holding any)
    same = False  # (the kept index lists the notes listed now, in order)
    if stored is None:
        changed: list[int] | range = range(len(paths))
        by_stats: set[int] = set()
    else:
        _, stamp, kept_paths, kept, oids, kept_names = stored
        same = kept_paths == paths
        if not same:  # (a note added, removed or renamed: the kept ones by their paths)
            kept = _aligned(kept_paths, kept, paths)
        # (a note changed in the tick the index was made may hold what the index does not:
        # its bytes tell, else it is asked)
        _, changed, by_stats = changed_since(vault, kept, stamp - RACY_NS, oids, listed)
        asked = {paths[i] for i in changed}
        listed_paths = None if same else set(paths)
        names = {p: n for p, n in kept_names.items() if p not in asked
                 and (listed_paths is None or p in listed_paths)}
    if len(changed) > _MAKE_AT_MOST and not getattr(vault, "loaded", True):
        vault.notes.entries()  # (a hook's vault: loaded, which parses on both cores)
    entry = vault.notes.entry
    made = {}  # position -> the note asked (its stat is the one its names go with)
    for i in changed:
        path = paths[i]
        note = made[i] = entry(path)  # (the note as held: decoded only to compute)
        found = tuple(note_aliases(vault, path, note))
        if found:
            names[path] = found
    if vault.caching and ((keep and (stored is None or changed or not same))
                          or len(changed) > _MAKE_AT_MOST):
        _write(vault, paths, numbers, made, names, stored)
    elif stored is not None and len(by_stats) == len(changed):
        _settle(vault, stored)
    index = {}
    for path in sorted(names):
        for name in names[path]:
            index.setdefault(name.casefold(), []).append(path)
    vault.__dict__["_alias_index"] = index
    return index


def _write(vault, paths: list[str], numbers: tuple, made: dict, names: dict,
           stored: tuple | None) -> None:
    """Keep the index of this run: each note's numbers as listed, or as the note asked
    carries them; the blob ids of the notes whose ctime (not mtime) lies in this run's racy
    margin, as the note asked carries it or the kept index held it (its bytes were found
    the same)."""
    import marshal
    from array import array

    from vaultkit.vault.cachefile import packed
    from vaultkit.vault.store import racy

    numbers = tuple(array("q", a) for a in numbers)
    for i, note in made.items():
        if note is None:
            continue
        numbers[0][i], numbers[1][i], numbers[2][i], numbers[3][i] = \
            note.size, note.mtime_ns, note.ctime_ns, note.ino
    started = vault.started_ns
    kept_oids = stored[4] if stored is not None else {}
    oids = {}
    mtimes, ctimes = numbers[1], numbers[2]
    if ctimes and racy(max(ctimes), started):
        for i, (mtime, ctime) in enumerate(zip(mtimes, ctimes)):
            if racy(ctime, started) and not racy(mtime, started):
                note = made.get(i)
                oid = kept_oids.get(paths[i]) if i not in made else \
                    getattr(note, "oid", None)
                if oid is not None:
                    oids[paths[i]] = oid
    # (packed: mostly paths; read only when a link's target is missing)
    vault.store.put(NAME, packed(marshal.dumps(
        (VERSION, started, paths, *(a.tobytes() for a in numbers), oids, names))))


def _settle(vault, stored: tuple) -> None:
    """Keep the index under this run's time when every note that changed since it was
    made differs from it by its stats, and the notes whose ctime was in its racy margin
    were found to hold their kept blob ids (else a commit hook after a clone would hash
    them in every run), once no kept mtime or ctime is in this run's margin. Sound as the
    index memo's (vaultkit.links.indexgen): a note whose stats differ keeps differing (a
    ctime cannot be put back) and is asked in every run; any later write moves a ctime
    past this run's time, which is more than the margin after every kept one."""
    import marshal

    from vaultkit.vault.cachefile import packed
    from vaultkit.vault.store import RACY_NS

    record, stamp, _, kept, _, _ = stored
    mtimes, ctimes = kept[1], kept[2]
    now = vault.started_ns - RACY_NS
    if not ctimes or max(ctimes) < stamp - RACY_NS or max(ctimes) >= now \
            or max(mtimes) >= now:
        return  # (none was asked for its ctime, or one is still racy: kept as it is)
    fields = list(record)
    fields[1], fields[7] = vault.started_ns, {}
    vault.store.put(NAME, packed(marshal.dumps(tuple(fields))))

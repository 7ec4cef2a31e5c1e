"""What a rule's findings read, as the context records it, and whether it changed since.

The context (:class:`vaultkit.lint.rule.Context`) records, per rule and per note checked,
the inputs the rule asked it for: another note, the notes holding an alias, the notes
reaching a note. The results cache keeps that record beside the findings; after a change,
a finding is reused only when :func:`stale` says none of its inputs changed. An input is
one string, a kind and what identifies it (and, for an answer asked again, that answer),
so the record is plain data the cache file holds as it is.
"""

from __future__ import annotations

EVERYTHING = "*"  # the whole vault: every change is a change to it
UNKEYED = "!"  # git, the clock, the snapshot store: nothing says it did not change
READ_NOTE = "n\0"  # + path: another note's text or facts
READ_ALIAS = "a\0"  # + case-folded name + "\0" + its holders, "\0"-joined
READ_INBOUND = "i\0"  # + path + "\0" + the notes reaching it, "\0"-joined


def alias_holders(vault, key: str, keep: bool = True) -> list[str]:
    """The notes whose ``aliases`` hold the case-folded name ``key``, in order (``keep``:
    the alias index may be written for the next run: see vaultkit.vault.aliases)."""
    from vaultkit.vault.aliases import alias_index

    return sorted(alias_index(vault, keep).get(key, ()))


def mentioning(vault, path: str, exclude) -> set[str]:
    """The notes other than ``exclude`` that write out the path ``path``, in full or by its
    last parts (``memory/decisions/x.md``, ``decisions/x.md``, ``x.md``): the way most real
    workspaces refer to notes."""
    found = vault.mentioned  # (worked out once per vault: Vault.mentioned)
    out: set[str] = set()
    if found:
        parts = path.lower().split("/")
        for i in range(len(parts)):
            out.update(found.get("/".join(parts[i:]), ()))
    return out.difference(exclude)


def inbound(vault, path: str) -> list[str]:
    """The other notes linking to the note at ``path`` or writing out its path, sorted;
    the index (INDEX.md) lists every note and does not count."""
    from vaultkit.links.graph import link_graph
    from vaultkit.links.indexgen import index_path

    exclude = (index_path(vault), path)
    return sorted(link_graph(vault).inbound(path, exclude) | mentioning(vault, path, exclude))


class Since:
    """What the notes ``changed`` since the last run hold now that other notes' inputs may
    depend on, asked of the changed notes alone (the names, and so where each link leads,
    are as they were: the results cache's context). Built once per run."""

    def __init__(self, vault, changed: set[str]):
        self.vault = vault
        self.changed = changed
        self._aliases: set[str] | None = None
        self._reached: dict[str, set[str]] | None = None

    @property
    def aliases(self) -> set[str]:
        """The case-folded aliases the changed notes hold now."""
        if self._aliases is None:
            from vaultkit.vault.aliases import note_aliases

            notes = self.vault.notes
            self._aliases = {name.casefold() for path in self.changed
                             for name in note_aliases(self.vault, path, notes.get(path))}
        return self._aliases

    @property
    def reached(self) -> set[str]:
        """The notes the changed notes link to or write the path of now (the index and a
        note reaching itself left out, as :func:`inbound` leaves them)."""
        if self._reached is None:
            from vaultkit.links.graph import linked_from
            from vaultkit.links.indexgen import index_path
            from vaultkit.vault.mentions import FACT, mentions

            vault = self.vault
            index = index_path(vault)
            out: set[str] = set()
            said: dict[str, set[str]] = {}  # a written path's last part -> (path, writer)
            for path in sorted(self.changed):
                note = vault.notes.get(path)
                if note is None or note.error or path == index:
                    continue
                out.update(t for t in linked_from(vault, note) if t != path)
                for written in vault.fact(path, FACT, lambda n=note: mentions(n)):
                    said.setdefault(written.rsplit("/", 1)[-1], set()).add((written, path))
            if said:
                for path in vault.notes:
                    low = path.lower()
                    for written, source in said.get(low.rsplit("/", 1)[-1], ()):
                        if source != path and (low == written or low.endswith("/" + written)):
                            out.add(path)
            self._reached = out
        return self._reached


def stale(inputs, since: Since) -> bool:
    """Whether any of ``inputs`` (one finding's record) differs now (``since``: the notes
    whose bytes changed since the record was made, the set of names, the settings and the
    files beside the vault being the same: the results cache's context). An answer asked
    of several notes (an alias's holders, the notes reaching a note) can change only when
    one of the notes that gave it changed, or a changed note gives it now. An input of an
    unknown kind is taken as changed."""
    changed = since.changed
    for what in inputs:
        kind = what[:2]
        if kind == READ_NOTE:
            if what[2:] in changed:
                return True
        elif kind == READ_ALIAS:
            key, _, holders = what[2:].partition("\0")
            if key in since.aliases or holders and any(h in changed
                                                       for h in holders.split("\0")):
                return True
        elif kind == READ_INBOUND:
            path, _, sources = what[2:].partition("\0")
            if path in since.reached or sources and any(s in changed
                                                        for s in sources.split("\0")):
                return True
        else:  # (EVERYTHING, UNKEYED, or what a newer vaultkit wrote)
            return True
    return False

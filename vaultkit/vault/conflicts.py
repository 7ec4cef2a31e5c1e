"""The conflicts git wrote into a file and nobody resolved: one definition for the commit
guard (:mod:`vaultkit.vault.loss` leaves git's marker lines out of a loss) and the
``conflict-markers`` rule, whose per-note answer is a fact the parse workers compute beside
the parse (:data:`FACT`), so the main process of a cold run reads no note's text for it.
"""

from __future__ import annotations

from vaultkit.core.lazyre import lazy_re

# git's conflict markers (git-merge(1), "HOW CONFLICTS ARE PRESENTED", diff3's base marker
# too; 7 characters, gitattributes(5) conflict-marker-size's default): a merge committed
# with them left in, then tidied up, removes lines that were git's, never memory. Compiled
# on first use: a commit hook imports this module for the rule, and its notes rarely hold
# a marker.
_OPENS, _BASE, _SPLITS, _CLOSES = (lazy_re(r"<{7}(?: .*)?"), lazy_re(r"\|{7}(?: .*)?"),
                                   lazy_re(r"={7}"), lazy_re(r">{7}(?: .*)?"))

FACT = "conflicts"  # the per-note fact's key (no epoch: the note's text alone decides it)


def conflicts(lines: list[str]) -> list[tuple[int, int, list[str]]]:
    """The conflicts git wrote into ``lines`` and left there: for each, the 0-based
    indexes of its opening and closing lines and its marker lines, found as git writes
    them: an opening line, the base's (diff3) if any, ``=======``, a closing line, in that
    order. A line shaped like a marker outside such a conflict (an email quoted seven
    deep) is the owner's."""
    found = []
    block: list[str] = []
    opened = 0
    for i, line in enumerate(lines):
        if _OPENS.fullmatch(line):
            block, opened = [line], i  # (an earlier opening never closed was no conflict)
        elif not block:
            continue
        elif len(block) == 1 and _BASE.fullmatch(line):
            block.append(line)
        elif _SPLITS.fullmatch(line) and not _SPLITS.fullmatch(block[-1]):
            block.append(line)
        elif _CLOSES.fullmatch(line) and _SPLITS.fullmatch(block[-1]):
            found.append((opened, i, block + [line]))
            block = []
    return found


def note_conflicts(note) -> list[tuple[int, int]]:
    """The 1-based opening and closing lines of each conflict git left in a parsed note
    (:func:`conflicts`) outside its code blocks (a conflict shown there is an example)."""
    if "<<<<<<<" not in note.text:
        return []
    return [(start + 1, end + 1) for start, end, _ in conflicts(note.lines)
            if not note.in_code(start + 1)]


def conflicts_of(vault, note) -> list[tuple[int, int]]:
    """:func:`note_conflicts` of ``note``, computed once per content (a fact cached with
    the note, or sent by the parse worker that read it)."""
    return vault.fact(note.path, FACT, lambda: note_conflicts(note))

"""Entries: the heading-delimited units journals and lesson files are made of.

An *entry* is a section headed at one level (``###`` in the daily journal, ``##`` in
a lessons topic file): the heading line and every line under it up to the next
heading of the same or a higher level. Deeper headings belong to the entry.
Headings come from the parser, so a ``###`` inside fenced code is never an entry.

    >>> for e in entries(note, 3):
    ...     e.heading.text, e.start, e.end, e.nonblank

``body`` holds the entry's lines after the heading line (a setext underline is
skipped); ``nonblank`` counts the body lines that hold something other than
whitespace or a one-line comment (``<!-- ... -->``, ``%% ... %%``), so a
suppression comment does not make an entry longer. ``text`` is the body joined
with ``\\n``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vaultkit.model import Heading, Note

_COMMENT_LINE = re.compile(r"^\s*(?:<!--.*-->|%%.*%%)\s*$")
_SETEXT = re.compile(r"^ {0,3}(?:=+|-+)\s*$")


@dataclass(slots=True)
class Entry:
    heading: Heading
    start: int  # line of the heading (1-based)
    end: int  # last line of the entry, inclusive (trailing blank lines excluded)
    body_start: int  # line of body[0]
    body: list[str]  # the lines after the heading, without line endings
    nonblank: int  # body lines with content (comments-only lines do not count)

    @property
    def text(self) -> str:
        return "\n".join(self.body)

    def lines(self):
        """``(line number, text)`` for every body line."""
        return enumerate(self.body, self.body_start)


def is_content(line: str) -> bool:
    """True for a line holding something besides whitespace and a one-line comment."""
    return bool(line.strip()) and not _COMMENT_LINE.match(line)


def entries(note: Note, level: int) -> list[Entry]:
    """The entries of ``note`` headed at ``level``, in file order."""
    out: list[Entry] = []
    lines = note.lines
    for section in note.sections(level):
        head = section.heading
        first = section.start + 1
        raw = lines[head.line - 1] if head.line - 1 < len(lines) else ""
        if not raw.lstrip().startswith("#") and first <= section.end \
                and _SETEXT.match(lines[first - 1]):
            first += 1  # setext heading: its underline is part of the heading
        end = section.end
        while end >= first and not lines[end - 1].strip():
            end -= 1
        body = lines[first - 1:end] if end >= first else []
        nonblank = sum(1 for s in body if is_content(s))
        out.append(Entry(head, section.start, max(end, section.start), first, body, nonblank))
    return out


def entry_level(vault, note: Note) -> int | None:
    """The entry heading level for ``note``: its type's ``entry_level``, else its layer's."""
    profile = vault.profile
    type_name = vault.type_of(note)
    if type_name and type_name in profile.types:
        level = profile.types[type_name].entry_level
        if level:
            return level
    layer_name = vault.layer_of(note)
    layer = profile.layer(layer_name) if layer_name else None
    return layer.entry_level if layer else None

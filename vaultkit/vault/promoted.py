"""OpenClaw dreaming's promoted blocks in ``MEMORY.md``: where they are and what each
promoted line says.

The deep phase appends a section per sweep (openclaw/openclaw
``extensions/memory-core/src/short-term-promotion.ts``, ``buildPromotionSection``; and
``memory-budget.ts``, ``PROMOTION_SECTION_HEADING_RE``; checked 2026-12-07)::

    ## Promoted From Short-Term Memory (2026-12-04)

    <!-- openclaw-memory-promotion:memory:memory/2026-12-02.md:5:5 -->
    - the snippet [score=0.842 recalls=4 avg=0.710 source=memory/2026-12-02.md:5-5]

Newer versions add ``signals=N`` to that trailer, group entries under ``### Global`` or
``### Project: KEY``, and write consolidated entries as ``- snippet Source: path#L5-L5
<!-- trigger: a, b --> <!-- importance: 8 -->`` (``<!-- project: KEY -->`` optional;
``short-term-promotion-metadata.ts``, ``dreaming-consolidation.ts``), with an optional
``<!-- openclaw-memory-lineage:KEY -->`` line. docs/dreaming.md cites each form.

Pure functions of a note's lines: the rules on promoted content share them.
"""

from __future__ import annotations

import re

from vaultkit.core.lazyre import lazy_re
from vaultkit.core.plain import FRESH

HEADING = lazy_re(r"^##[ \t]+Promoted From Short-Term Memory \(([^)\n]+)\)[ \t]*$")
_ANY_HEADING = lazy_re(r"^ {0,3}(#{1,6})(?:[ \t]|$)")
# the marker comments dreaming writes on their own lines: no promoted text
_MARKER_LINE = lazy_re(r"^\s*<!--\s*openclaw-memory-(?:promotion|lineage):.*-->\s*$", re.I)
_FENCE = lazy_re(r"^ {0,3}(`{3,}|~{3,})")
# what dreaming appends to a promoted line: the ranking trailer, the source reference and
# the recall annotations (none of it is the promoted fact)
_TRAILER = lazy_re(r"\s*\[score=\d+(?:\.\d+)?(?: signals=\d+)? recalls=\d+ avg=\d+(?:\.\d+)?"
                   r" source=[^\]\n]+\]\s*$")
_ANNOTATION = lazy_re(r"\s*<!--\s*(?:trigger|importance|project):[^\n]*?-->", re.I)
_SOURCE_REF = lazy_re(r"\s+Source:\s+\S+#L\d+-L\d+\s*$")
_BULLET = lazy_re(r"^\s*(?:[-*+][ \t]+)+")


class PromotedBlock:
    """One ``## Promoted From Short-Term Memory (DATE)`` section (line numbers 1-based)."""

    _fields = ("line", "heading", "date", "end", "lines", "fences")
    line: int  # the heading's line
    heading: str  # the heading's text, '## ' included
    date: str
    end: int  # its last line (inclusive): the line before the next heading of level 1 or 2
    # the promoted lines: (line, text), marker comments and ### group headings left out
    lines: list[tuple[int, str]]
    # fenced code inside it: (first line, last line) of each fence
    fences: list[tuple[int, int]]

    def __init__(self, line, heading, date, end, lines=FRESH, fences=FRESH):
        self.line = line
        self.heading = heading
        self.date = date
        self.end = end
        self.lines = [] if lines is FRESH else lines
        self.fences = [] if fences is FRESH else fences


def promoted_blocks(lines: list[str]) -> list[PromotedBlock]:
    """The promoted sections of a ``MEMORY.md`` given as its lines, in file order. A
    section runs to the next heading of level 1 or 2; the ``###`` groups dreaming writes
    stay inside it. A heading inside fenced code is no heading."""
    out: list[PromotedBlock] = []
    current: PromotedBlock | None = None
    fence = ""  # the open fence's marker, when in one
    fence_start = 0
    for number, text in enumerate(lines, 1):
        if fence:
            if current is not None:
                current.lines.append((number, text))
            stripped = text.strip()
            if stripped.startswith(fence) and stripped.strip(fence[0]) == "":
                if current is not None:
                    current.fences.append((fence_start, number))
                fence = ""
            continue
        m = _FENCE.match(text)
        if m:
            fence, fence_start = m.group(1), number
            if current is not None:
                current.lines.append((number, text))
            continue
        h = _ANY_HEADING.match(text)
        if h and len(h.group(1)) <= 2:
            if current is not None:
                current.end = number - 1
                out.append(current)
                current = None
            p = HEADING.match(text.rstrip("\r"))
            if p:
                current = PromotedBlock(number, text.strip(), p.group(1).strip(), number)
            continue
        if current is None or not text.strip() or _MARKER_LINE.match(text) or h:
            continue
        current.lines.append((number, text))
    if current is not None:
        if fence:  # an unclosed fence runs to the end
            current.fences.append((fence_start, len(lines)))
        current.end = len(lines)
        out.append(current)
    return out


def block_at(blocks: list[PromotedBlock], line: int) -> PromotedBlock | None:
    """The promoted block holding ``line``, or None."""
    for block in blocks:
        if block.line <= line <= block.end:
            return block
    return None


def promoted_fact(text: str) -> str:
    """A promoted line's own text: without its bullet, the ranking trailer, the source
    reference and the recall annotations dreaming adds, blanks collapsed; '' for a line
    that is nothing else. Two lines promoted from one snippet have the same fact."""
    text = _ANNOTATION.sub("", text)
    text = _TRAILER.sub("", text)
    text = _SOURCE_REF.sub("", text)
    text = _BULLET.sub("", text)
    return " ".join(text.split())


def only_promotions(removed: list[str], added: list[str]) -> bool:
    """True when a change to ``MEMORY.md`` that removed ``removed`` lines and added
    ``added`` (in order) only appended dreaming's promoted sections: nothing removed, and
    every non-blank added line inside a promoted section the change wrote."""
    if any(line.strip() for line in removed) or not any(line.strip() for line in added):
        return False
    inside: set[int] = set()
    for block in promoted_blocks(added):
        inside.update(range(block.line, block.end + 1))
    return all(not text.strip() or number in inside for number, text in enumerate(added, 1))


def changed_lines(old: str, new: str) -> tuple[list[str], list[str]]:
    """The lines a change from ``old`` to ``new`` removed and added, in order."""
    from difflib import SequenceMatcher

    a, b = old.splitlines(), new.splitlines()
    removed: list[str] = []
    added: list[str] = []
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "equal":
            removed.extend(a[i1:i2])
            added.extend(b[j1:j2])
    return removed, added


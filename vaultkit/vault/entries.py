"""Entries: the units journals and lesson files are made of.

An *entry* is a section headed at one level: the heading line and every line under it
up to the next heading of the same or a higher level. Deeper headings belong to the
entry (``###`` only ever subdivides an ``##`` entry). Headings come from the parser, so
a ``###`` inside fenced code is never an entry.

    >>> for e in entries(note, 3):
    ...     e.heading.text, e.start, e.end, e.nonblank

``body`` holds the entry's lines after the heading line (a setext underline is
skipped); ``nonblank`` counts the body lines that hold something other than
whitespace or a one-line comment (``<!-- ... -->``, ``%% ... %%``), so a
suppression comment does not make an entry longer. ``text`` is the body joined
with ``\\n``.

Journals are written many ways, so their entries are found per file
(:func:`journal_entries`, for an ``entry_level`` of ``auto``): the entry level is the
shallowest heading level below the title that is not a bare day heading
(``## 2026-04-27``); a section that is a day, or that holds a bullet log with times
(``- 14:30 did X``), is a *log* whose bullet items are its entries, and bullets outside
every entry (a journal of bullets only) form a log too. Logs are judged as a whole:
their items are not measured line by line.

Not every section of a journal is an event. A heading over two or more timed
sub-headings (``## Morning`` over ``### 09:00 …``, ``### 09:30 …``) groups events: the
timed sub-sections are the entries, the group is not one long entry; so does a heading
that names only a part of the day (``## Afternoon``, ``## 凌晨（~04:00-05:00）``) over
sections of any kind, each of which is an entry. In a journal whose
entries carry times, a section without a time (``## Next Step``, ``## 遗留问题``,
``## Open questions``) is a *topic section*, not an entry; so is, in any journal, a
section named by the profile's ``topic_section`` phrases.

How much an entry says (:func:`says_too_little`) counts its heading's words (the time
stamp left out) with its body: ``## 14:30 — Deploy`` over ``- Done.`` says too little,
``## 14:30 — Restarted the gateway after the token expired`` alone is a one-line entry
as complete as a log line. ``vaultkit log`` applies the same judgement before it writes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from vaultkit.core.lazyre import lazy_re
from vaultkit.vault.model import Heading, Note
from vaultkit.vault.timeforms import (BULLET, CLOCK, DATE, PERIOD, has_clock, is_day_heading,
                                      is_period_heading, is_timed_item)

_COMMENT_LINE = lazy_re(r"^\s*(?:<!--.*-->|%%.*%%)\s*$")
_SETEXT = lazy_re(r"^ {0,3}(?:=+|-+)\s*$")
_CJK = "[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]"  # (see _cjk)
_NOT_TEXT = lazy_re(r"^\s*(?:>\s*)*(?:(?:[-*+]|\d+[.)])\s+)?(?:\[[ xX]\]\s+)?|[*_`~#>|]+")

HEADING, LOG = "heading", "log"


@dataclass(slots=True)
class Entry:
    heading: Heading | None  # None for a log of bullets outside every entry
    start: int  # line of the heading, or of the first item (1-based)
    end: int  # last line of the entry, inclusive (trailing blank lines excluded)
    body_start: int  # line of body[0]
    body: list[str]  # the lines after the heading, without line endings
    nonblank: int  # body lines with content (comments-only lines do not count)
    kind: str = HEADING  # HEADING: an entry; LOG: a bullet log whose items are the entries
    items: list["Item"] = field(default_factory=list)  # a log's bullet items

    @property
    def text(self) -> str:
        return "\n".join(self.body)

    @property
    def label(self) -> str:
        """What a message calls the entry: its heading, or its first item."""
        if self.heading is not None:
            return self.heading.text
        first = self.items[0].lines[0].strip() if self.items and self.items[0].lines else ""
        return first[:60]

    def lines(self):
        """``(line number, text)`` for every body line."""
        return enumerate(self.body, self.body_start)


@dataclass(slots=True)
class Item:
    """One bullet of a log: the bullet line and its continuation lines and sub-bullets."""

    start: int
    lines: list[str]
    nonblank: int


def is_content(line: str) -> bool:
    """True for a line holding something besides whitespace and a one-line comment."""
    return bool(line.strip()) and not _COMMENT_LINE.match(line)


def weight(lines) -> int:
    """How much an entry says: characters of text, with list markers and emphasis left
    out, runs of spaces counted once, and a CJK character counted as three (it carries
    about a word)."""
    total = 0
    for line in lines:
        if not is_content(line):
            continue
        text = " ".join(_NOT_TEXT.sub("", line).split())
        total += len(text)
        if not text.isascii():  # (ASCII text has no CJK character)
            total += 2 * len(_cjk().findall(text))
    return total


@lru_cache(maxsize=None)
def _cjk() -> re.Pattern:
    """Compiled on first use: its character ranges take ~4 ms, and most text is ASCII."""
    return re.compile(_CJK)


_DATED = lazy_re(rf"{DATE}|(?<!\d)20\d{{6}}(?!\d)")  # a date, or one in an id (ERR-20260213-001)
_STAMP = lazy_re(rf"{PERIOD}|{DATE}|{CLOCK}(?:\s*[-–~]\s*{CLOCK})?")


def heading_words(text: str) -> str:
    """A heading's text without its time stamp, period word or date (``上午 09:00 - Heartbeat``
    -> ``Heartbeat``): what the heading itself says about the event."""
    return " ".join(_NOT_TEXT.sub("", _STAMP.sub(" ", text)).strip(" -–—·:：|()（）【】[]~").split())


def is_dated(entry: Entry) -> bool:
    """True when the entry's heading or body holds a date (or a date in an id)."""
    return bool(_DATED.search(entry.heading.text if entry.heading else "")
                or _DATED.search(entry.text))


def says_too_little(heading: str, body: list[str], budgets) -> bool:
    """True for an entry with a body that says too little: fewer than
    ``budgets.entry_min_lines`` non-blank body lines and, heading words and body together,
    under ``budgets.entry_min_chars`` of text (a CJK character counts as three). An entry
    without a body is a one-line entry, the heading form of a log line: never too short."""
    lines = [s for s in body if is_content(s)]
    if not lines or budgets.entry_min_lines <= 0 or len(lines) >= budgets.entry_min_lines:
        return False
    return weight([heading_words(heading)] + lines) < budgets.entry_min_chars


def short_style(found: list[Entry], budgets) -> bool:
    """True when short entries are the file's own style: four or more entries with a body
    under ``budgets.entry_min_lines`` lines, and more than half of all entries with a body
    (a journal of one-line bullet entries). Then no single one stands out as too short."""
    bodies = [e for e in found if e.kind == HEADING and e.nonblank > 0]
    short = sum(1 for e in bodies if e.nonblank < budgets.entry_min_lines)
    return short >= 4 and short * 2 > len(bodies)


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


def detect_level(note: Note) -> int | None:
    """The heading level that carries a journal's entries: the shallowest level among the
    headings below the title (a lone ``#`` heading) that are not bare day headings; the day
    headings' own level when there is nothing else; None when there are no such headings."""
    heads = note.headings
    h1 = [h for h in heads if h.level == 1]
    if len(h1) == 1:
        heads = [h for h in heads if h is not h1[0]]
    if not heads:
        return None
    events = [h.level for h in heads if not is_day_heading(h.text)]
    return min(events) if events else min(h.level for h in heads)


def _items(lines: list[str], first: int, last: int, code) -> list[Item]:
    """Top-level bullet items on lines ``first``..``last`` (1-based, inclusive)."""
    out: list[Item] = []
    current: Item | None = None
    blank = False
    base = None  # indentation of the log's own bullets; deeper ones are sub-items
    for number in range(first, last + 1):
        line = lines[number - 1]
        if code(number):
            if current is not None:
                current.lines.append(line)
                current.nonblank += 1
            continue
        indent = len(line) - len(line.lstrip(" "))
        if BULLET.match(line) and (base is None or indent <= base or current is None):
            base = indent if base is None else base
            current = Item(number, [line], 1)
            out.append(current)
            blank = False
        elif not line.strip():
            blank = True
        elif current is not None and (line[:1] in " \t" or not blank) \
                and not line.lstrip().startswith("#"):
            current.lines.append(line)  # continuation: indented, or lazy right after it
            current.nonblank += is_content(line)
        else:
            current = None
    return out


def _log(note: Note, head: Heading | None, first: int, last: int,
         require_timed: int) -> Entry | None:
    """A log over lines ``first``..``last`` when it holds bullet items (at least
    ``require_timed`` of them starting with a time)."""
    lines = note.lines
    last = min(last, len(lines))
    while last >= first and not lines[last - 1].strip():
        last -= 1
    if last < first:
        return None
    items = _items(lines, first, last, note.in_code)
    if not items or sum(1 for i in items if is_timed_item(i.lines[0])) < require_timed:
        return None
    body = lines[first - 1:last]
    start = head.line if head is not None else items[0].start
    return Entry(head, start, last, first, body, sum(1 for s in body if is_content(s)),
                 LOG, items)


def _timed_within(heads: list[Heading], e: Entry) -> list[Heading]:
    """The timed headings below ``e``'s own level inside it."""
    level = e.heading.level
    return [h for h in heads if e.start < h.line <= e.end and h.level > level
            and has_clock(h.text)]


def journal_entries(note: Note) -> list[Entry]:
    """A journal's entries and logs, found from the file itself (see the module doc)."""
    level = detect_level(note)
    heads = note.headings
    title = [h for h in heads if h.level == 1]
    start = title[0].line + 1 if len(title) == 1 and level != 1 else note.body_start
    out: list[Entry] = []
    covered: list[tuple[int, int]] = []
    if level is not None:
        timed = any(h.level >= level and has_clock(h.text) for h in heads)
        for e in entries(note, level):
            covered.append((e.start, e.end))
            if is_day_heading(e.heading.text):
                log = _log(note, e.heading, e.body_start, e.end, 0)
                if log is not None:
                    out.append(log)
                continue  # a bare day with prose, or nothing: no event to measure
            inner = _timed_within(heads, e)
            if len(inner) >= 2:  # a grouping heading over timed events: they are the entries
                sub = min(h.level for h in inner)
                for s in entries(note, sub):
                    if e.start < s.start <= e.end and has_clock(s.heading.text):
                        log = _log(note, s.heading, s.body_start, s.end, 2)
                        out.append(log if log is not None else s)
                continue
            parts = [h for h in heads if e.start < h.line <= e.end and h.level > e.heading.level]
            if parts and is_period_heading(e.heading.text):
                # a part of the day (## Afternoon, ## 凌晨（~04:00-05:00）) over sections: each
                # section is an entry, timed or not; the bucket is none
                sub = min(h.level for h in parts)
                for s in entries(note, sub):
                    if e.start < s.start <= e.end:
                        log = _log(note, s.heading, s.body_start, s.end, 2)
                        if log is None and timed and not has_clock(s.heading.text):
                            continue  # a topic section (### Related Projects), as below
                        out.append(log if log is not None else s)
                continue
            log = _log(note, e.heading, e.body_start, e.end, 2)
            if log is None and timed and not has_clock(e.heading.text):
                continue  # a topic section of a timed journal (## Next Step): no event
            out.append(log if log is not None else e)
    # bullets outside every entry: under a day heading above the entries, or a file of
    # bullets only
    gaps, pos = [], start
    for s, e in sorted(covered):
        if s > pos:
            gaps.append((pos, s - 1))
        pos = max(pos, e + 1)
    if pos <= note.line_count:
        gaps.append((pos, note.line_count))
    for s, e in gaps:
        inner = [h for h in heads if s <= h.line <= e]
        head = inner[-1] if inner and is_day_heading(inner[-1].text) else None
        first = (head.line + 1) if head is not None else s
        log = _log(note, head, first, e, 0)
        if log is not None:
            out.append(log)
    out.sort(key=lambda e: e.start)
    return out


def note_entries(vault, note: Note) -> list[Entry]:
    """The entries the entry rules judge in ``note``: per file for an ``auto`` entry level
    (journals), else the headings at the configured level; none for other notes, nor for a
    lessons note with two or more sections and no date anywhere in them (a knowledge note,
    as ``lesson-entry-undated`` judges it too). Sections
    the runtime writes (the profile's ``runtime_section`` phrases) are left out, and so
    are a journal's topic sections (``topic_section``: ``## Next Step``, ``## 遗留问题``).

    The last note's entries are kept on the vault: the entry rules run one after the other
    on a note (entry-too-long, filler-entry, entry-too-short), and each asked for them anew
    (a tenth of a second of a cold check at 10,000 notes). They are kept only while the
    note holds the same lines; a copy of the list is returned, so no rule changes another's."""
    memo = vault.__dict__.get("_entries_memo")
    if memo is not None and memo[0] is note and memo[1] is _held_lines(note):
        return list(memo[2])
    found = _note_entries(vault, note)
    vault.__dict__["_entries_memo"] = (note, _held_lines(note), found)
    return list(found)


def _held_lines(note: Note) -> list[str] | None:
    """The lines the note holds now, or None (read without decoding a note from the cache,
    which asking ``note._lines`` would)."""
    try:
        return object.__getattribute__(note, "_lines")
    except AttributeError:
        return None


def _note_entries(vault, note: Note) -> list[Entry]:
    level = entry_level(vault, note)
    if level == "auto":
        found = journal_entries(note)
    else:
        found = entries(note, level) if level else []
        if len(found) >= 2 and not any(_DATED.search(e.heading.text) or _DATED.search(e.text)
                                       for e in found):
            return []  # a knowledge note filed with the lessons: sections, not lessons
    phrases = vault.profile.phrases
    if found and (phrases.runtime_section or phrases.topic_section):
        from vaultkit.vault.phrases import matcher

        runtime = matcher(phrases.runtime_section)
        topic = matcher(phrases.topic_section) if level == "auto" else None
        found = [e for e in found if e.heading is None or not (
            runtime.only(e.heading.text)
            or (topic and topic.only(heading_words(e.heading.text))))]
    return found


def entry_level(vault, note: Note) -> int | str | None:
    """The entry heading level for ``note``: its type's ``entry_level``, else its layer's
    (a number, or ``auto``)."""
    profile = vault.profile
    type_name = vault.type_of(note)
    if type_name and type_name in profile.types:
        level = profile.types[type_name].entry_level
        if level:
            return level
    layer_name = vault.layer_of(note)
    layer = profile.layer(layer_name) if layer_name else None
    return layer.entry_level if layer else None

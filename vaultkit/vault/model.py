"""The parsed form of a vault: notes, their links, headings, tags and block ids.

Everything here is plain data produced once per file by :mod:`vaultkit.vault.parse` and
read by the rules, the resolver, the index and the tools. Notes serialise to plain
tuples (:meth:`Note.to_plain`) so the cache can use :mod:`marshal`, which, unlike
pickle, never runs code from a file a cloned repo might carry.
"""

from __future__ import annotations

import datetime as _dt
import os as _os
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Any, Callable, ClassVar

# Bump when the parser's output or the serialised form below changes: the cache is keyed by it.
PARSER_VERSION = 7

# Link kinds
WIKI = "wiki"  # [[Target#sub|alias]]
MARKDOWN = "md"  # [text](target.md#sub)
PROPERTY = "property"  # "[[Target]]" inside a frontmatter value


@dataclass(slots=True)
class Link:
    """One link or embed as written. ``target`` is decoded (no %20, no <>)."""

    kind: str
    target: str  # the path part; "" for a same-note link like [[#Heading]]
    subpath: str  # "" or "#Heading#Sub" / "#^block-id" (without the leading '#')
    alias: str | None
    line: int  # 1-based
    column: int  # 1-based, of the opening bracket
    embed: bool
    raw: str  # the link exactly as written
    external: bool = False  # a URL (http:, mailto:, obsidian:, ...); never resolved

    def to_plain(self) -> tuple:
        return (self.kind, self.target, self.subpath, self.alias, self.line, self.column,
                self.embed, self.raw, self.external)

    @classmethod
    def from_plain(cls, t: tuple) -> "Link":
        return cls(*t)


@dataclass(slots=True)
class Heading:
    """A Markdown heading of a note."""

    level: int
    text: str
    line: int

    def to_plain(self) -> tuple:
        return (self.level, self.text, self.line)


@dataclass(slots=True)
class Tag:
    """A tag of a note, in its text or its frontmatter."""

    name: str  # without '#', case as written
    line: int
    column: int  # 0 for frontmatter tags


@dataclass(slots=True)
class Suppression:
    """A ``<!-- vaultkit-... -->`` comment. ``rules`` empty means every rule."""

    action: str  # "disable-next-line" | "disable" | "enable" | "disable-file"
    rules: tuple[str, ...]
    line: int


@dataclass(slots=True)
class Section:
    """A heading and the lines under it up to the next heading of the same or higher level."""

    heading: Heading
    start: int  # line of the heading
    end: int  # last line (inclusive)


# what a note's listing gives it, never taken from its parse (a lazy note's blob)
_STAT_FIELDS = ("path", "size", "mtime_ns", "ctime_ns", "ino", "oid", "_blob", "_source",
                "_limit")


@dataclass(slots=True)
class Note:
    """One Markdown file of the vault, parsed once."""

    path: str  # vault-relative, '/' separated
    size: int = 0
    mtime_ns: int = 0
    # the rest of the file's stat the caches compare (vaultkit.vault.scan.FileEntry), and
    # git's blob id of the bytes parsed when it was taken (a file changed in the racy
    # margin of a cache entry is known by it); none of them is in to_plain
    ctime_ns: int = 0
    ino: int = 0
    oid: str | None = None
    error: str | None = None  # why the file could not be read; nothing else is set then
    text: str = ""  # decoded, BOM removed, line endings as in the file
    bom: bool = False
    crlf: bool = False
    line_count: int = 0
    frontmatter: dict | None = None  # None: no frontmatter block
    fm_error: tuple[str, int] | None = None  # (message, line) when the block is not valid YAML
    fm_span: tuple[int, int] | None = None  # lines of the opening and closing '---'
    fm_keys: dict[str, int] = field(default_factory=dict)  # top-level key -> line
    headings: list[Heading] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    tags: list[Tag] = field(default_factory=list)
    block_ids: dict[str, int] = field(default_factory=dict)  # id -> line
    code_ranges: list[tuple[int, int]] = field(default_factory=list)  # non-prose line ranges
    suppressions: list[Suppression] = field(default_factory=list)
    # stray NUL bytes in an otherwise text file: (how many, line of the first); the text
    # holds U+FFFD in their place, as CommonMark says
    nul: tuple[int, int] | None = None
    _lines: list[str] | None = field(default=None, repr=False, compare=False)
    _blob: Any = field(default=None, repr=False, compare=False)  # bytes, or the store (lazy)
    _source: str | None = field(default=None, repr=False, compare=False)  # file of a lazy note
    # the most a lazy note's file is read when it changed after the listing (max_file_bytes)
    _limit: int | None = field(default=None, repr=False, compare=False)
    # How a lazy note whose cached blob is damaged is read again: set by the loader, which
    # makes lazy notes, so that the model never imports the parser.
    reread: ClassVar[Callable[["Note"], "Note"] | None] = None
    # How a lazy note's text is read from its file (the cache does not keep it): set by the
    # loader too; None when the file is no longer what the cache describes.
    read_text: ClassVar[Callable[["Note"], "str | None"] | None] = None

    # -- lazy notes from the cache -------------------------------------------------

    @classmethod
    def lazy(cls, path: str, size: int, mtime_ns: int, blob: "bytes | Any",
             source: str | None = None, text: str | None = None,
             limit: int | None = None, *, ctime_ns: int = 0, ino: int = 0,
             oid: str | None = None) -> "Note":
        """A note whose fields are decoded from ``blob`` (marshal) on first use; ``blob``
        may also be a store whose ``fetch(note)`` gives those bytes then (the cache's).

        A commit hook touches few notes in full; decoding all 10,000 would cost more
        than the rest of the run. The blob holds no text (see ``to_plain``): it is
        ``text`` when given (a note just parsed), else read from ``source`` on first use.
        """
        note = object.__new__(cls)
        note.path, note.size, note.mtime_ns = path, size, mtime_ns
        note.ctime_ns, note.ino, note.oid = ctime_ns, ino, oid
        note.error = None  # unreadable files are never cached
        note._blob = blob
        note._source = source
        note._limit = limit
        if text is not None:
            note.text = text
        return note

    def __getattr__(self, name: str):
        # only reached for a slot not set yet, i.e. on a lazy note's first use, or for the
        # text of a note that does not hold it (see release_text)
        if name == "text" and _decoded(self):
            return self._text_again()
        try:
            blob = object.__getattribute__(self, "_blob")
        except AttributeError:
            raise AttributeError(name) from None
        if blob is None or name.startswith("__"):
            raise AttributeError(name)
        if not isinstance(blob, bytes):  # still in the cache's store: fetched on first use
            blob = blob.fetch(self)  # b"" when the store no longer holds it as listed
            self._blob = blob
        import marshal

        try:
            full = Note.from_plain(marshal.loads(blob))
        except (EOFError, ValueError, TypeError):  # a damaged cache entry: read the file again
            full = None
        later = False  # the text is read from the file when first asked for
        if full is not None and full.text is None:  # the cache keeps no text: the file has it
            try:
                full.text = object.__getattribute__(self, "text")
            except AttributeError:
                # (a rule that reads the links or headings only, broken-link after a change,
                # needs no text: read now, 10,000 of them were a third of such a check, and
                # all held to the end; a file changed since is parsed again when it is read)
                source = object.__getattribute__(self, "_source")
                # (a file made unreadable keeps its size and mtime: read now, it is an error)
                later = name != "text" and source is not None and _os.access(source, _os.R_OK)
                if not later:
                    full.text = Note.read_text(self)  # type: ignore[misc]
            if not later and full.text is None:  # changed since it was listed, or gone:
                full = None  # parse it again
        if full is None:
            self._blob = None  # the cache stores the note anew
            full = Note.reread(self)  # type: ignore[misc]
        for f in _NOTE_FIELDS:
            if f not in _STAT_FIELDS \
                    and not (later and f == "text"):
                object.__setattr__(self, f, getattr(full, f))
        # _blob stays: the cache writes these exact bytes back for an unchanged note
        return object.__getattribute__(self, name)

    def release_text(self) -> bool:
        """Forget the note's text and lines when its file can give them again (they are
        read from it on next use): a cold check holds no note's text once that note's
        per-note rules ran. False (nothing dropped) for a note with no file to read."""
        if self._source is None or not _decoded(self) or self.error:
            return False
        try:
            object.__delattr__(self, "text")
        except AttributeError:  # (not held)
            pass
        self._lines = None
        return True

    def _text_again(self) -> str:
        """The text of a parsed note that does not hold it, read from its file; a file
        changed since it was parsed is parsed again (every field, as a lazy note's is)."""
        source = object.__getattribute__(self, "_source")
        text = Note.read_text(self) if source is not None else None  # type: ignore[misc]
        if text is None:
            full = Note.reread(self) if source is not None else None  # type: ignore[misc]
            if full is None:  # no file to read it from: a note made in memory without text
                raise AttributeError("text")
            for f in _NOTE_FIELDS:
                if f not in _STAT_FIELDS:
                    object.__setattr__(self, f, getattr(full, f))
            self._blob = None  # (what the cache has no longer describes it)
            return self.text
        self.text = text
        return text

    # -- derived views -------------------------------------------------------

    @property
    def name(self) -> str:
        """File name without the .md extension, as Obsidian shows it."""
        base = self.path.rsplit("/", 1)[-1]
        return base[:-3] if base.lower().endswith(".md") else base

    @property
    def folder(self) -> str:
        return self.path.rsplit("/", 1)[0] if "/" in self.path else ""

    @property
    def lines(self) -> list[str]:
        """The file's lines without line endings (line N is ``lines[N-1]``)."""
        if self._lines is None:
            self._lines = self.text.replace("\r\n", "\n").split("\n") if self.text else []
            if self._lines and self._lines[-1] == "" and self.text.endswith("\n"):
                self._lines.pop()
        return self._lines

    @property
    def body_start(self) -> int:
        """First line after the frontmatter (1 when there is none)."""
        return self.fm_span[1] + 1 if self.fm_span else 1

    def in_code(self, line: int) -> bool:
        """True when ``line`` is inside fenced/indented code, a comment or math block."""
        for start, end in self.code_ranges:
            if start <= line <= end:
                return True
            if start > line:
                break
        return False

    def sections(self, level: int | None = None) -> list[Section]:
        """Sections headed by headings of ``level`` (all levels when None)."""
        out: list[Section] = []
        heads = self.headings
        last = self.line_count
        count = len(heads)
        for i, h in enumerate(heads):
            if level is not None and h.level != level:
                continue
            end = last
            for j in range(i + 1, count):  # (no slice: a copy per heading is quadratic)
                if heads[j].level <= h.level:
                    end = heads[j].line - 1
                    break
            out.append(Section(h, h.line, end))
        return out

    # -- serialisation -------------------------------------------------------

    def to_plain(self, with_text: bool = True) -> tuple:
        """The note as plain data (marshal); without its text (None) for the cache, which
        reads the text from the file again: a cache a fraction of the vault's size."""
        return (
            self.path, self.size, self.mtime_ns, self.error,
            self.text if with_text else None, self.bom, self.crlf,
            self.line_count, _to_plain(self.frontmatter), self.fm_error, self.fm_span,
            self.fm_keys, [h.to_plain() for h in self.headings], [lk.to_plain() for lk in self.links],
            [(t.name, t.line, t.column) for t in self.tags], dict(self.block_ids),
            self.code_ranges,
            [(s.action, s.rules, s.line) for s in self.suppressions], self.nul,
        )

    @classmethod
    def from_plain(cls, t: tuple) -> "Note":
        (path, size, mtime_ns, error, text, bom, crlf, line_count, fm, fm_error, fm_span, fm_keys,
         headings, links, tags, block_ids, code_ranges, sups, nul) = t
        # the strings notes share (link targets, tags, property names, headings such as
        # "Decisions") are kept once, not once per note: a big vault holds every note's parse.
        # (The table's setdefault is called directly on what is always a string, an alias
        # being a string or None, which is kept as itself: a cold check decodes every note,
        # and a Python call per string was a sixth of that.)
        i = _intern
        return cls(
            path=path, size=size, mtime_ns=mtime_ns, error=error, text=text, bom=bom, crlf=crlf,
            line_count=line_count, frontmatter=_from_plain(fm),
            fm_error=tuple(fm_error) if fm_error else None,
            fm_span=tuple(fm_span) if fm_span else None,
            fm_keys={i(k, k): v for k, v in fm_keys.items()},
            headings=[Heading(lv, i(tx, tx), ln) for lv, tx, ln in headings],
            links=[Link(kind, i(target, target), i(sub, sub),
                        alias if alias is None else i(alias, alias), ln, col, embed,
                        i(raw, raw), external)
                   for kind, target, sub, alias, ln, col, embed, raw, external in links],
            tags=[Tag(i(name, name), ln, col) for name, ln, col in tags],
            block_ids=block_ids or _NO_BLOCK_IDS,
            code_ranges=[tuple(r) for r in code_ranges],
            suppressions=[Suppression(a, tuple(r), ln) for a, r, ln in sups],
            nul=tuple(nul) if nul else None,
        )


_NOTE_FIELDS = tuple(f.name for f in fields(Note))  # not the ClassVar


def _decoded(note: Note) -> bool:
    """Whether the note's parse is held (not a lazy note still to decode)."""
    try:
        object.__getattribute__(note, "line_count")
    except AttributeError:
        return False
    return True


@dataclass(slots=True)
class Attachment:
    """A non-Markdown file: a link target only."""

    path: str
    size: int = 0

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]


# Frontmatter values can hold dates and datetimes, which marshal cannot store.
_DATE, _DATETIME = "\x00date", "\x00datetime"


def _to_plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_to_plain(v) for v in value]
    if isinstance(value, _dt.datetime):
        return (_DATETIME, value.isoformat())
    if isinstance(value, _dt.date):
        return (_DATE, value.isoformat())
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


# The block ids of the many notes that have none, one read-only mapping (a dict each was
# 10 MB at 100,000 notes); the parser fills a note's own dict.
_NO_BLOCK_IDS = MappingProxyType({})

# The strings notes share, each kept once while a run decodes many notes. Not sys.intern:
# its table lives as long as the strings, and at 100,000 notes it was 15 MB at the peak of
# a cold check; this one is dropped at the end of every load (forget_shared).
_STRINGS: dict[str, str] = {}
_intern = _STRINGS.setdefault


def _shared(value: Any) -> Any:
    """The one copy of a string (as decoded so far); anything else as it is."""
    return _intern(value, value) if type(value) is str else value


def forget_shared() -> None:
    """Drop the table of shared strings (the notes keep theirs): called at the end of a
    load; a note decoded after that starts it again."""
    _STRINGS.clear()


def _from_plain(value: Any) -> Any:
    if type(value) is str:
        return _intern(value, value)
    if isinstance(value, dict):  # (its keys are strings: see _to_plain)
        return {_intern(k, k): _from_plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_from_plain(v) for v in value]
    if isinstance(value, tuple) and len(value) == 2 and value[0] in (_DATE, _DATETIME):
        if value[0] == _DATE:
            return _dt.date.fromisoformat(value[1])
        return _dt.datetime.fromisoformat(value[1])
    return value

"""The parsed form of a vault: notes, their links, headings, tags and block ids.

Everything here is plain data produced once per file by :mod:`vaultkit.vault.parse` and
read by the rules, the resolver, the index and the tools. Notes serialise to plain
tuples (:meth:`Note.to_plain`) so the cache can use :mod:`marshal`, which, unlike
pickle, never runs code from a file a cloned repo might carry.
"""

from __future__ import annotations

import datetime as _dt
from types import MappingProxyType

from vaultkit.core.plain import Plain

TYPE_CHECKING = False  # (typing's own flag costs importing typing)
if TYPE_CHECKING:  # (names for annotations only)
    from typing import Any

# Bump when the parser's output or the serialised form below changes: the cache is keyed by it.
PARSER_VERSION = 7

# Link kinds
WIKI = "wiki"  # [[Target#sub|alias]]
MARKDOWN = "md"  # [text](target.md#sub)
PROPERTY = "property"  # "[[Target]]" inside a frontmatter value


class Link(Plain):
    """One link or embed as written. ``target`` is decoded (no %20, no <>)."""

    __slots__ = _fields = ("kind", "target", "subpath", "alias", "line", "column", "embed",
                           "raw", "external")
    kind: str
    target: str  # the path part; "" for a same-note link like [[#Heading]]
    subpath: str  # "" or "#Heading#Sub" / "#^block-id" (without the leading '#')
    alias: str | None
    line: int  # 1-based
    column: int  # 1-based, of the opening bracket
    embed: bool
    raw: str  # the link exactly as written
    external: bool  # a URL (http:, mailto:, obsidian:, ...); never resolved

    def __init__(self, kind, target, subpath, alias, line, column, embed, raw,
                 external=False):
        self.kind = kind
        self.target = target
        self.subpath = subpath
        self.alias = alias
        self.line = line
        self.column = column
        self.embed = embed
        self.raw = raw
        self.external = external

    def to_plain(self) -> tuple:
        return (self.kind, self.target, self.subpath, self.alias, self.line, self.column,
                self.embed, self.raw, self.external)

    @classmethod
    def from_plain(cls, t: tuple) -> "Link":
        return cls(*t)


class Heading(Plain):
    """A Markdown heading of a note."""

    __slots__ = _fields = ("level", "text", "line")
    level: int
    text: str
    line: int

    def __init__(self, level, text, line):
        self.level = level
        self.text = text
        self.line = line

    def to_plain(self) -> tuple:
        return (self.level, self.text, self.line)


class Tag(Plain):
    """A tag of a note, in its text or its frontmatter."""

    __slots__ = _fields = ("name", "line", "column")
    name: str  # without '#', case as written
    line: int
    column: int  # 0 for frontmatter tags

    def __init__(self, name, line, column):
        self.name = name
        self.line = line
        self.column = column


class Suppression(Plain):
    """A ``<!-- vaultkit-... -->`` comment. ``rules`` empty means every rule."""

    __slots__ = _fields = ("action", "rules", "line")
    action: str  # "disable-next-line" | "disable" | "enable" | "disable-file"
    rules: tuple[str, ...]
    line: int

    def __init__(self, action, rules, line):
        self.action = action
        self.rules = rules
        self.line = line


class Section(Plain):
    """A heading and the lines under it up to the next heading of the same or higher level."""

    __slots__ = _fields = ("heading", "start", "end")
    heading: Heading
    start: int  # line of the heading
    end: int  # last line (inclusive)

    def __init__(self, heading, start, end):
        self.heading = heading
        self.start = start
        self.end = end


class NoteSource:
    """Where a note's text comes from when the note does not hold it: a note parsed in a
    worker, decoded from the parse cache (which keeps no text), or whose text was released
    (:meth:`Note.release_text`). The loader gives its notes one (the model imports no
    parser); ``text(note)`` reads the note's file again and, when the file changed since
    the note was parsed, parses it again in place (:meth:`Note.replace_parse`)."""

    def text(self, note: "Note") -> str:  # pragma: no cover - the loader's overrides it
        raise NotImplementedError


_NEW = object()  # (a default made afresh: an empty list or mapping)


class Note(Plain):
    """One Markdown file of the vault, parsed once: plain data. The text is the one part
    that may be elsewhere: a note that does not hold it has a ``source`` that reads it
    (:attr:`text`); every other field is what was parsed."""

    __slots__ = ("path", "size", "mtime_ns", "ctime_ns", "ino", "oid", "error", "bom", "crlf",
                 "line_count", "frontmatter", "fm_error", "fm_span", "fm_keys", "headings",
                 "links", "tags", "block_ids", "code_ranges", "suppressions", "nul",
                 "file", "limit", "source", "record", "_text", "_lines")
    _fields = __slots__[:-2]  # (the arguments, ``text`` aside: not the text held, its lines)
    _compare = __slots__[:-6]  # (not where the note came from, nor what it holds)
    path: str  # vault-relative, '/' separated
    size: int
    mtime_ns: int
    # the rest of the file's stat the caches compare (vaultkit.vault.scan.FileEntry), and
    # git's blob id of the bytes parsed when it was taken (a file changed in the racy
    # margin of a cache entry is known by it); none of them is in to_plain
    ctime_ns: int
    ino: int
    oid: str | None
    error: str | None  # why the file could not be read; nothing else is set then
    # (``text``, an argument: decoded, BOM removed, line endings as in the file; None: not
    # held, see ``source``)
    bom: bool
    crlf: bool
    line_count: int
    frontmatter: dict | None  # None: no frontmatter block
    fm_error: tuple[str, int] | None  # (message, line) when the block is not valid YAML
    fm_span: tuple[int, int] | None  # lines of the opening and closing '---'
    fm_keys: dict[str, int]  # top-level key -> line
    headings: list[Heading]
    links: list[Link]
    tags: list[Tag]
    block_ids: dict[str, int]  # id -> line
    code_ranges: list[tuple[int, int]]  # non-prose line ranges
    suppressions: list[Suppression]
    # stray NUL bytes in an otherwise text file: (how many, line of the first); the text
    # holds U+FFFD in their place, as CommonMark says
    nul: tuple[int, int] | None
    # Where the note came from (none of it in to_plain, nor compared): the file its text is
    # read from again (None: a note made in memory), the most read then when the file
    # changed after the listing (budgets.max_file_bytes), the source that reads it, and its
    # parse as the cache stores it (marshal bytes; the store itself when written from this
    # note and not read back; None when the store does not hold it as it is)
    file: str | None
    limit: int | None
    source: NoteSource | None
    record: Any

    def __init__(self, path, size=0, mtime_ns=0, ctime_ns=0, ino=0, oid=None, error=None,
                 text="", bom=False, crlf=False, line_count=0, frontmatter=None,
                 fm_error=None, fm_span=None, fm_keys=_NEW, headings=_NEW, links=_NEW,
                 tags=_NEW, block_ids=_NEW, code_ranges=_NEW, suppressions=_NEW, nul=None,
                 file=None, limit=None, source=None, record=None):
        self.path = path
        self.size = size
        self.mtime_ns = mtime_ns
        self.ctime_ns = ctime_ns
        self.ino = ino
        self.oid = oid
        self.error = error
        self.bom = bom
        self.crlf = crlf
        self.line_count = line_count
        self.frontmatter = frontmatter
        self.fm_error = fm_error
        self.fm_span = fm_span
        self.fm_keys = {} if fm_keys is _NEW else fm_keys
        self.headings = [] if headings is _NEW else headings
        self.links = [] if links is _NEW else links
        self.tags = [] if tags is _NEW else tags
        self.block_ids = {} if block_ids is _NEW else block_ids
        self.code_ranges = [] if code_ranges is _NEW else code_ranges
        self.suppressions = [] if suppressions is _NEW else suppressions
        self.nul = nul
        self.file = file
        self.limit = limit
        self.source = source
        self.record = record
        self._text = text
        self._lines = None

    def _get_text(self) -> str:
        held = self._text
        if held is None:
            if self.source is None:  # a note made in memory without text: nothing to read
                raise AttributeError("text")
            held = self.source.text(self)
        return held

    def _set_text(self, text: str | None) -> None:
        self._text = text
        self._lines = None

    def _del_text(self) -> None:
        self._set_text(None)

    def holds_text(self) -> bool:
        """Whether the note holds its text (else its source reads it when asked for)."""
        return self._text is not None

    def release_text(self) -> bool:
        """Forget the note's text and lines when its file can give them again (they are
        read from it on next use): a cold check holds no note's text once that note's
        per-note rules ran. False (nothing dropped) for a note with no file to read."""
        if self.file is None or self.source is None or self.error:
            return False
        self._text = None
        self._lines = None
        return True

    def replace_parse(self, other: "Note") -> None:
        """Take every parsed field of ``other`` (its text too): the note's file, read again,
        no longer held what it was parsed from. Its stat and origin stay; ``record`` is
        dropped (what the cache holds no longer describes it)."""
        for f in _PARSE_FIELDS:
            object.__setattr__(self, f, getattr(other, f))
        self.record = None

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


# (a property over the held text; the constructor's ``text`` fills it)
Note.text = property(Note._get_text, Note._set_text, Note._del_text,  # type: ignore[assignment]
                     doc="The note's text: held, or read by its source (see NoteSource).")
# what replace_parse takes: every field but the stat and where the note came from
_PARSE_FIELDS = tuple(f for f in Note.__slots__ if f not in (
    "path", "size", "mtime_ns", "ctime_ns", "ino", "oid", "file", "limit", "source",
    "record"))


class Attachment(Plain):
    """A non-Markdown file: a link target only."""

    __slots__ = _fields = ("path", "size")
    path: str
    size: int

    def __init__(self, path, size=0):
        self.path = path
        self.size = size

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

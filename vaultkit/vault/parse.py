"""Parse one Markdown file into a :class:`~vaultkit.vault.model.Note`, once.

The body is read by a single-pass line scanner that follows CommonMark's block
rules for everything that decides what is prose and what is not: containers (block
quotes, callouts, list items, footnote definitions, nested in any order, with lazy
continuation lines), fenced and indented code, HTML blocks, Obsidian ``%%comments%%``
and ``$$math$$`` blocks, ATX and setext headings, link reference definitions. Prose is
then scanned paragraph by paragraph for code spans, comments, math, wikilinks, Markdown
links, inline footnotes, tags and block ids, so every item carries its real 1-based line
and column. markdown-it-py (with Obsidian's plugins) is the reference in the tests
(``tests/test_parse_reference.py``, docs/syntax.md lists the deliberate differences); it
is not run here because it is over three times slower per KB (``bench/parser.py``) and
the commit hook parses every changed note. Every pattern here is linear in the text.

Frontmatter is read with PyYAML's C loader in two steps (compose, then
construct) so that every top-level key keeps its line, alias expansion can be
bounded before anything is built, and no tag can construct a Python object.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

from vaultkit.core.bounded import MAX_DEPTH, MAX_YAML_NODES, yaml_problem
from vaultkit.vault.model import (MARKDOWN, PARSER_VERSION, PROPERTY, WIKI, Heading,  # noqa: F401
                                  Link, Note, Suppression, Tag)

MAX_FRONTMATTER_CHARS = 256_000

_BOM = b"\xef\xbb\xbf"

# Every pattern here runs on note text, so each is linear in its input: no two adjacent
# quantifiers can match the same characters (tests/test_parse_linear.py holds them to it).
_ITEM_FIRST = frozenset("-*+0123456789")
_LIST_ITEM = re.compile(r"^( *)([-*+]|\d{1,9}[.)])([ \t]+|$)")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")

_BACKTICKS = re.compile(r"`+")
_MAX_CONTAINERS_PER_LINE = 20
_MAX_TITLE_LINES = 50  # a reference definition's label or title spans at most this many lines
_CONTAINER_FIRST = frozenset(" \t>[-*+0123456789")
# the first characters of a line that may start a block or a container (or be indent): a
# line outside any container starting with anything else is paragraph text
_BLOCK_FIRST = frozenset(" \t>[-*+0123456789`~$<%#=_")
_BLOCK_START = frozenset("`~$<%#=-*_[")  # the same once containers and indent are read
_FOOTNOTE_DEF = re.compile(r"^ {0,3}\[\^[^\]\s]+\]:")
_BRACKET = re.compile(r"[\[\]\\]")
_ACTIONS = ("disable-next-line", "disable-file", "disable", "enable")
_RULE_SEP = re.compile(r"[\s,]+")
_WIKI = re.compile(r"(!?)\[\[([^\[\]\n]+?)\]\]")
_AUTOLINK = re.compile(r"<[A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*>")
# A tag runs to the first whitespace or punctuation other than "_ - /" (ASCII, general
# and CJK punctuation); letters of any script, digits and emoji are tag characters.
_TAG = re.compile(r"(?<![^\s(\[{,;])#([^\s!-,.:-@\[-^`{-~\u2010-\u2027\u2030-\u205e"
                  r"\u3000-\u303f\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65]+)")
_ALL_DIGITS = re.compile(r"^[\d/_-]*$")
_BLOCK_ID_CHARS = re.compile(r"[A-Za-z0-9-]+")
_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_ASCII_PUNCT = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_HTML_TAG_NAME = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9-]*)")
_HTML_RAW_TAGS = frozenset({"pre", "script", "style", "textarea"})
_HTML_BLOCK_TAGS = frozenset(
    "address article aside base basefont blockquote body caption center col colgroup dd "
    "details dialog dir div dl dt fieldset figcaption figure footer form frame frameset h1 h2 "
    "h3 h4 h5 h6 head header hr html iframe legend li link main menu menuitem nav noframes ol "
    "optgroup option p param search section summary table tbody td tfoot th thead title tr "
    "track ul".split())
_HTML_COMPLETE_TAG = re.compile(
    r"(?:<[A-Za-z][A-Za-z0-9-]*(?:[ \t]+[A-Za-z_:][A-Za-z0-9_.:-]*"
    r"(?:[ \t]*=[ \t]*(?:[^ \t\"'=<>`]+|'[^'\n]*'|\"[^\"\n]*\"))?)*[ \t]*/?>"
    r"|</[A-Za-z][A-Za-z0-9-]*[ \t]*>)[ \t]*$")
_PERCENT = "%%"


def _inline_start(text: str) -> bool:
    """``text`` holds a character that every inline construct _inline looks for contains
    (code spans, comments, %% comments, math, autolinks, wikilinks and links, footnotes,
    tags, block ids): a paragraph without any holds none, and is not scanned further.
    (Seven ``in`` tests are several times faster than one character-class search.)"""
    return ("[" in text or "#" in text or "`" in text or "<" in text or "$" in text
            or "%" in text or "^" in text)


def note_text(data: bytes) -> str | None:
    """The text parse_note gives a readable file's bytes (stray NULs as U+FFFD, the BOM
    removed), or None when they are not UTF-8. The same steps as parse_note's."""
    if b"\x00" in data:
        data = data.replace(b"\x00", "\ufffd".encode())
    if data.startswith(_BOM):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def parse_note(path: str, data: bytes, *, size: int | None = None, mtime_ns: int = 0) -> Note:
    """Parse the bytes of one Markdown file. Never raises on content."""
    note = Note(path=path, size=len(data) if size is None else size, mtime_ns=mtime_ns)
    if b"\x00" in data:
        count = data.count(0)
        first = data.index(0)
        if count * 10 > len(data):  # a binary blob (or UTF-16) saved as .md
            note.error = f"binary content: NUL byte at offset {first}"
            return note
        # a few stray NULs in a text file (a torn write): read the rest, report them
        note.nul = (count, data.count(b"\n", 0, first) + 1)
        data = data.replace(b"\x00", "\ufffd".encode())
    if data.startswith(_BOM):
        note.bom = True
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        note.error = (f"not valid UTF-8: byte 0x{data[exc.start]:02x} at offset {exc.start} "
                      f"(line {line})")
        return note
    note.text = text
    note.crlf = "\r\n" in text
    lines = note.lines
    note.line_count = len(lines)
    body_start = _frontmatter(note, lines)
    _Scanner(note, lines).scan(body_start)
    return note


# -- frontmatter ---------------------------------------------------------------

_HEADING_LINE = re.compile(r"^ {0,3}#{1,6}[ \t]+\S")
_KEY_LINE = re.compile(r"^[A-Za-z_\"'][^:\n]*:(?:\s|$)")


def _thematic_break(lines: list[str], close: int | None) -> bool:
    """True when the ``---`` on line 1 is a thematic break, not frontmatter: the first
    non-blank line after it is a Markdown heading and nothing up to the closing ``---``
    reads as a YAML key (agents append ``---\n## 09:00 — …`` to a new journal)."""
    end = close if close is not None else len(lines)
    first = next((ln for ln in lines[1:end] if ln.strip()), None)
    if first is None or not _HEADING_LINE.match(first):
        return False
    return not any(_KEY_LINE.match(ln) for ln in lines[1:end])


def _frontmatter(note: Note, lines: list[str]) -> int:
    """Read the YAML block at the top. Returns the index of the first body line."""
    if not lines or lines[0].rstrip() != "---":
        return 0
    close = None
    for i in range(1, len(lines)):
        if lines[i].rstrip() == "---":
            close = i
            break
    if _thematic_break(lines, close):
        return 0
    if close is None:
        note.fm_error = ("frontmatter opened on line 1 never closes (no closing '---' line)", 1)
        return 0
    source = "\n".join(lines[1:close]) + "\n"
    if len(source) > MAX_FRONTMATTER_CHARS:
        note.fm_span = (1, close + 1)
        note.fm_error = (f"frontmatter is {len(source):,} characters; over the "
                         f"{MAX_FRONTMATTER_CHARS:,} that are read", 2)
        return close + 1
    data, keys, error = load_yaml_mapping(source, first_line=2)
    if ((error or not keys) and close > 1 and any(ln.strip() for ln in lines[1:close])
            and (not lines[1].strip() or lines[1].lstrip().startswith("#"))):
        # a blank line or a Markdown heading under the first '---', and no properties:
        # that '---' is a thematic break over the note's body, not frontmatter
        return 0
    note.fm_span = (1, close + 1)
    if error:
        note.fm_error = error
        return close + 1
    note.frontmatter = data
    note.fm_keys = keys
    for key, value in data.items():
        line = keys.get(key, 1)
        for text in _strings(value):
            if "[[" in text:
                for m in _WIKI.finditer(text):
                    link = _wikilink(m, line, 0)
                    link.kind = PROPERTY
                    note.links.append(link)
        if key in ("tags", "tag"):
            for t in _frontmatter_tags(value):
                note.tags.append(Tag(t, line, 0))
    return close + 1


def load_yaml_mapping(source: str, first_line: int = 1):
    """Parse YAML text that should be a mapping.

    Returns ``(data, key_lines, None)`` or ``(None, {}, (message, line))``. Safe
    tags only; alias expansion is bounded; keys become strings.
    """
    if not source.strip():
        return {}, {}, None
    simple = _simple_mapping(source, first_line)
    if simple is not None:
        return simple[0], simple[1], None
    return _loader_mapping(source, first_line)


def _loader_mapping(source: str, first_line: int):
    """load_yaml_mapping with the YAML loader, for any source."""
    import yaml

    loader_cls = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    if not source.strip():
        return {}, {}, None
    loader = loader_cls(source)
    try:
        node = loader.get_single_node()
        if node is None:
            return {}, {}, None
        if not isinstance(node, yaml.MappingNode):
            kind = {"tag:yaml.org,2002:seq": "a list", "tag:yaml.org,2002:str": "a string"}.get(
                node.tag, "not a mapping")
            return None, {}, (f"frontmatter is {kind}, not a mapping of properties",
                              first_line + node.start_mark.line)
        # alias bombs, and nesting so deep that the cache (marshal) and every walk of
        # the value would fail on it
        problem = yaml_problem(node, MAX_YAML_NODES, MAX_DEPTH)
        if problem:
            return None, {}, (f"frontmatter {problem}; not read", first_line)
        keys: dict[str, int] = {}
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode):
                keys.setdefault(str(key_node.value), first_line + key_node.start_mark.line)
        data = loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        if (exc.context_mark is not None and mark is not None
                and mark.line >= source.count("\n")):
            # the parser ran off the end (an unclosed [ or {, a quote): the line where the
            # unfinished construct started says more than the closing '---'
            mark = exc.context_mark
        line = first_line + (mark.line if mark else 0)
        problem = exc.problem or exc.context or "invalid YAML"
        return None, {}, (f"frontmatter is not valid YAML: {problem}", line)
    except yaml.YAMLError as exc:
        return None, {}, (f"frontmatter is not valid YAML: {exc}", first_line)
    except (ValueError, TypeError, OverflowError, RecursionError) as exc:
        # e.g. a timestamp out of range, an unhashable key
        return None, {}, (f"frontmatter could not be read: {exc}", first_line)
    finally:
        loader.dispose()
    return {str(k): v for k, v in data.items()}, keys, None


# The frontmatter most notes carry (``type: lesson``, ``tags: [a, b/c]``) in a form read
# without the YAML loader, with the loader's own resolver and constructors: each line one
# ``key: value`` whose key and plain scalars use only characters that are never YAML syntax
# there (no ``: # , [ ] { } ' " & * ! | > % @ `` ``, no tab, no leading ``-``), the value
# one such scalar, a flow list of them, or a quoted string of printable ASCII without
# escapes (a string as written: "..." without ``\`` or ``"``, '...' without ``'``). Anything
# else, or any doubt (a duplicate key, a key that is not a string, a value its constructor
# rejects), goes to the loader.
_SIMPLE_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_-]{0,999}): +(?:([A-Za-z0-9_./][A-Za-z0-9_./ -]*)"
                          r"|\[ *([A-Za-z0-9_./][A-Za-z0-9_./ ,-]*)?\] *"
                          r"|\"([ !#-\[\]-~]*)\" *|'([ -&(-~]*)' *)$")
_SIMPLE_ITEM = re.compile(r"[A-Za-z0-9_./][A-Za-z0-9_./ -]*")
_STR_TAG = "tag:yaml.org,2002:str"
_yaml_scalar_tags: dict[str, str] = {}  # plain scalar -> the tag the resolver gives it
_yaml_tools = None  # (resolver, constructor, ScalarNode), made on first use


def _simple_scalar(value: str):
    """The value the YAML loader constructs for the plain scalar ``value`` (one of the
    characters above); raises ValueError when it is not for this path."""
    tag = _yaml_scalar_tags.get(value)
    global _yaml_tools
    if _yaml_tools is None:
        import yaml

        _yaml_tools = (yaml.resolver.Resolver(), yaml.constructor.SafeConstructor(),
                       yaml.ScalarNode)
    resolver, constructor, scalar_node = _yaml_tools
    if tag is None:
        tag = resolver.resolve(scalar_node, value, (True, False))
        if len(_yaml_scalar_tags) > 4096:
            _yaml_scalar_tags.clear()
        _yaml_scalar_tags[value] = tag
    if tag == _STR_TAG:
        return value
    build = constructor.yaml_constructors.get(tag)
    if build is None or tag.endswith((":merge", ":value")):
        raise ValueError(tag)
    return build(constructor, scalar_node(tag, value))


def _simple_mapping(source: str, first_line: int):
    """``(data, key_lines)`` of ``source`` when every line is a simple ``key: value`` (see
    above) and the loader would read exactly that; None otherwise."""
    data: dict = {}
    keys: dict[str, int] = {}
    nodes = 1
    match = _SIMPLE_LINE.match
    try:
        for index, line in enumerate(source[:-1].split("\n")):
            m = match(line)
            if m is None:
                return None
            key, scalar, items, double, single = m.groups()
            if key in keys or _simple_scalar(key) is not key:
                return None  # a duplicate, or a key read as a bool or null
            if double is not None or single is not None:
                value = double if double is not None else single  # (quoted: always a string)
                nodes += 2
            elif scalar is not None:
                value = _simple_scalar(scalar.rstrip(" "))
                nodes += 2
            else:
                value = []
                nodes += 2
                if items is not None:
                    for item in items.split(","):
                        item = item.strip(" ")
                        if not _SIMPLE_ITEM.fullmatch(item):
                            return None  # an empty item ("[a,,b]", "[a,]") or a leading "-"
                        value.append(_simple_scalar(item))
                        nodes += 1
            keys[key] = first_line + index
            data[key] = value
    except (ValueError, TypeError, OverflowError, KeyError):
        return None  # the loader says what is wrong with it
    if nodes > MAX_YAML_NODES:
        return None
    return data, keys


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)


def _frontmatter_tags(value) -> list[str]:
    if isinstance(value, str):
        parts = re.split(r"[,\s]+", value)
    elif isinstance(value, list):
        parts = [str(v) for v in value if isinstance(v, (str, int, float))]
    else:
        return []
    return [p.strip().lstrip("#") for p in parts if p.strip().lstrip("#")]


# -- body ----------------------------------------------------------------------

def _indent_of(s: str) -> int:
    width = 0
    for ch in s:
        if ch == " ":
            width += 1
        elif ch == "\t":
            width += 4 - width % 4
        else:
            break
    return width


def _strip_indent(s: str, columns: int) -> str:
    width = i = 0
    while i < len(s) and width < columns and s[i] in " \t":
        width += 1 if s[i] == " " else 4 - width % 4
        i += 1
    return (" " * (width - columns) if width > columns else "") + s[i:]


class _Raw:
    """An open block whose lines are not prose: a fence, a ``$$`` math block or an HTML block."""

    __slots__ = ("kind", "char", "length", "end", "start", "level", "chunk")

    def __init__(self, kind: str, start: int, level: int, char: str = "", length: int = 0,
                 end: str = ""):
        self.kind = kind  # "fence", "math", "html" (ends at `end`), "html-blank" (at a blank line)
        self.char, self.length, self.end = char, length, end
        self.start = start
        self.level = level  # how many containers (quotes, list items) it opened inside
        self.chunk: list[str] | None = None  # an HTML comment's text (suppressions)


_QUOTE_MARK, _ITEM = 0, 1


class _Scanner:
    """Line-by-line block scanner with CommonMark's container rules; collects into ``note``.

    ``containers`` holds the open block quotes and list items (and footnote definitions,
    which hold blocks indented by four like an item), outermost first: a quote as
    ``(_QUOTE_MARK, 0, n)``, an item as ``(_ITEM, content indent, n)``, the indent relative
    to its parent and ``n`` a serial number telling two containers of one kind apart.
    """

    def __init__(self, note: Note, lines: list[str]):
        self.note = note
        self.lines = lines
        self.para: list[tuple[int, str]] = []  # (1-based line, original line text)
        self.para_level = 0  # how many containers were open when the paragraph started
        self.para_text: list[str] = []  # the paragraph's lines without container markers
        # (stripped only when a setext underline makes them a heading's text)
        self.containers: list[tuple[int, int, int]] = []  # (kind, indent, serial number)
        self.opened = 0  # containers opened so far (their serial numbers)
        self.pending_percent = False
        self.marker_lines: dict[str, list[int]] = {}  # line indexes holding a marker

    def _serial(self) -> int:
        self.opened += 1
        return self.opened

    # bookkeeping of non-prose ranges
    def _code(self, start: int, end: int) -> None:
        ranges = self.note.code_ranges
        if ranges and ranges[-1][1] >= start - 1:
            ranges[-1] = (ranges[-1][0], max(end, ranges[-1][1]))
        else:
            ranges.append((start, end))

    def _match(self, raw: str, limit: int | None = None) -> tuple[int, str]:
        """How many of the open containers ``raw`` continues, and the text left inside them.

        Linear in the line, however many containers are open: the text left is tracked as
        a position in ``raw`` plus the spaces left over from a tab (``pad``), each
        container consumes its markers or indent from there, and the string is built once
        at the end (a list nested one level deeper per line once made this cubic)."""
        containers = self.containers if limit is None else self.containers[:limit]
        if not containers:
            return 0, raw
        end = len(raw.rstrip())  # the text left is blank once ``pos`` reaches this
        size = len(raw)
        pos = pad = 0
        matched = 0
        for kind, width, _serial in containers:
            if kind == _QUOTE_MARK:
                p, q, k = pad, pos, 0
                while k < 3 and (p or (q < size and raw[q] == " ")):
                    if p:
                        p -= 1
                    else:
                        q += 1
                    k += 1
                if p or q >= size or raw[q] != ">":
                    break
                q += 1
                p = 0
                if q < size and raw[q] == " ":
                    q += 1
                elif q < size and raw[q] == "\t":
                    q += 1
                    p = 2  # a tab after ">" gives the space and the rest of its stop
                pos, pad = q, p
            elif pos < end:  # not blank: the item's content indent must be there
                col = min(pad, width)
                p, q = pad - col, pos
                while col < width and q < size:
                    ch = raw[q]
                    if ch == " ":
                        col += 1
                    elif ch == "\t":
                        col += 4 - col % 4
                    else:
                        break
                    q += 1
                if col < width:
                    break
                pos, pad = q, p + col - width
            matched += 1
        if pos == 0 and pad == 0:
            return matched, raw
        return matched, " " * pad + raw[pos:]

    def _raw_line(self, raw_block: _Raw, raw: str) -> bool:
        """One line inside ``raw_block``: True if it belongs to it (and maybe closes it: the
        block's ``kind`` is then ""), False if the block ended before this line."""
        matched, inner = self._match(raw, raw_block.level)
        # fenced code and HTML blocks have no lazy continuation: a line outside the quote
        # or list item they opened in closes them (CommonMark §5.1, §5.2)
        if matched < raw_block.level:
            return False
        kind = raw_block.kind
        if not inner.strip():
            if kind == "html-blank":
                raw_block.kind = ""
                return False
            return True
        if kind == "fence":
            s = inner.lstrip()
            if (_indent_of(inner) < 4 and s[:1] == raw_block.char
                    and len(s) - len(s.lstrip(raw_block.char)) >= raw_block.length
                    and not s.lstrip(raw_block.char).strip()):
                raw_block.kind = ""
        elif kind == "math":
            if "$$" in inner:
                raw_block.kind = ""
        elif kind == "html":
            if raw_block.chunk is not None:
                raw_block.chunk.append(raw)
            if raw_block.end in (inner.lower() if raw_block.end[:2] == "</" else inner):
                raw_block.kind = ""
        return True

    def scan(self, start: int) -> None:
        lines = self.lines
        n = len(lines)
        i = start
        raw_block: _Raw | None = None
        containers = self.containers
        code_level: tuple | None = None  # containers around the indented code just read
        code_blanks: list[int] = []  # blank lines since then
        # a line ends with "\r" only where the text holds one (Note.lines splits on "\r\n")
        has_cr = "\r" in self.note.text or not self.note.text
        while i < n:
            raw = lines[i]
            lineno = i + 1
            if has_cr and raw.endswith("\r"):
                raw = raw[:-1]

            # inside a fence, math or HTML block: only its end (or its container's) matters
            if raw_block is not None:
                if self._raw_line(raw_block, raw):
                    self._code(lineno, lineno)
                    i += 1
                    if not raw_block.kind:
                        self._close_raw(raw_block)
                        raw_block = None
                    continue
                self._close_raw(raw_block)
                raw_block = None  # and read this line as a new block

            # inside an Obsidian %% comment that spans lines
            if self.pending_percent:
                pos = raw.find(_PERCENT)
                if pos < 0:
                    self._code(lineno, lineno)
                    i += 1
                    continue
                self.pending_percent = False
                self._code(lineno, lineno)
                rest = " " * (pos + 2) + raw[pos + 2:]
                if rest.strip():
                    self._flush()
                    self._add_para(lineno, rest, rest)
                i += 1
                continue

            if len(raw) > 2 and raw[1] == " " and raw[0] in "-*+" and raw[2] not in _BLOCK_FIRST \
                    and not raw[2].isspace():
                # the common list item "- text" at the start of a line, its text plain: it
                # ends every open container and paragraph, and opens an item holding a new
                # paragraph (the general path below, in short)
                if self.para:
                    self._flush()
                del containers[:]
                self.opened += 1
                containers.append((_ITEM, 2, self.opened))
                self.para = [(lineno, raw)]
                self.para_level = 1
                self.para_text = [raw[2:]]
                code_level = None
                i += 1
                continue
            if not containers:
                # the common line outside any container: plain text, which no block
                # starts with (see the checks below), continues or opens a paragraph
                if raw and raw[0] not in _BLOCK_FIRST and not raw[0].isspace():
                    code_level = None
                    if self.para:
                        self.para.append((lineno, raw))
                        self.para_text.append(raw)
                    else:
                        self.para = [(lineno, raw)]
                        self.para_level = 0
                        self.para_text = [raw]
                    i += 1
                    continue
                matched, rest = 0, raw
            elif raw[:1] not in " \t>" and not raw[0].isspace():
                # no container goes on without its indent or its ">" (_match's answer)
                matched, rest = 0, raw
            elif raw:
                matched, rest = self._match(raw)
            else:
                # an empty line continues the open list items up to the first quote (what
                # _match finds for it)
                matched = 0
                for container in containers:
                    if container[0] != _ITEM:
                        break
                    matched += 1
                rest = raw
            if not rest.strip():  # a blank line: ends the paragraph and unmatched quotes
                self._flush()
                del containers[matched:]
                if code_level is not None:
                    code_blanks.append(lineno)  # code if the indented code goes on after it
                i += 1
                continue
            prev_code_level, code_level = code_level, None
            if not matched and rest[0] == "#":
                # an ATX heading at the start of the line closes every container (as the
                # general path below finds, in short)
                atx = _atx(rest)
                if atx is not None:
                    self._flush()
                    del containers[:]
                    self._heading(atx, raw, lineno)
                    i += 1
                    continue
            lazy = False
            if matched < len(containers):
                # a paragraph continues lazily across the end of its containers (§5.1)
                if self.para and not _starts_block(rest):
                    lazy = True
                else:
                    if self.para and self.para_level > matched:
                        self._flush()
                    del containers[matched:]

            if lazy:
                self._add_para(lineno, raw, rest)
                i += 1
                continue

            # new containers: block quotes, list items, footnote definitions
            item_line = 0  # 1: the line ends with its markers, 2: an item starts with code
            opened = 0
            while (rest[0] in _CONTAINER_FIRST and opened < _MAX_CONTAINERS_PER_LINE
                   and (rest[0] not in " \t" or _indent_of(rest) < 4)):
                c = rest[0]
                if c in "-*+" and rest[1:2] == " " and len(rest) > 2:
                    # the common item "- text": the checks below, in short (its content
                    # starts after one space; text, not a thematic break like "- - -")
                    c = rest[2]
                    if c != rest[0] and c not in " \t" and not c.isspace():
                        if self.para:
                            self._flush()
                        self.opened += 1
                        containers.append((_ITEM, 2, self.opened))
                        rest = rest[2:]
                        opened += 1
                        continue
                s = rest.lstrip(" ")
                c = s[:1]
                if c == ">":
                    self._flush()
                    containers.append((_QUOTE_MARK, 0, self._serial()))
                    rest = _quote_marker(rest) or ""
                    opened += 1
                    if not rest.strip():
                        item_line = 1
                        break
                    continue
                if c == "[" and s[1:2] == "^":
                    m_note = _FOOTNOTE_DEF.match(rest)
                    if m_note:  # a footnote definition holds blocks indented by 4
                        self._flush()
                        containers.append((_ITEM, 4, self._serial()))
                        rest = rest[m_note.end():].lstrip(" \t")
                        opened += 1
                        if not rest:
                            item_line = 1
                            break
                        continue
                    break
                if c not in _ITEM_FIRST:
                    break
                m_item = _LIST_ITEM.match(rest)
                if not m_item or (m_item.group(2) in "-*" and _is_thematic(rest)):
                    break  # ("- - -" is a thematic break, not a list: §4.1)
                marker_text = rest[m_item.end():]
                ordered = m_item.group(2)[0].isdigit()
                # an empty item, or an ordered one not starting at 1, cannot interrupt a
                # paragraph (CommonMark §5.2)
                if self.para and (not marker_text.strip()
                                  or (ordered and m_item.group(2)[:-1] != "1")):
                    break
                self._flush()
                width = len(m_item.group(1)) + len(m_item.group(2))
                pad = m_item.group(3)
                if not pad or not marker_text.strip():
                    width += 1
                    item_line = 1
                elif _indent_of(" " * width + pad) - width > 4:
                    width += 1  # five or more spaces: the item starts with indented code
                    item_line = 2
                else:
                    width += _indent_of(" " * width + pad) - width
                containers.append((_ITEM, width, self._serial()))
                rest = marker_text
                opened += 1
                if item_line:
                    break
            if item_line:
                if item_line == 2:
                    self._code(lineno, lineno)
                i += 1
                continue

            rel = rest
            rel_indent = _indent_of(rel) if rel[0] in " \t" else 0
            level = len(containers)
            if rel_indent >= 4:
                if self.para:  # a paragraph continuation line, whatever it looks like
                    self._add_para(lineno, raw, rel)
                else:  # indented code
                    here = tuple(c[2] for c in containers)
                    if prev_code_level == here:
                        for blank in code_blanks:
                            self._code(blank, blank)
                    self._code(lineno, lineno)
                    code_level = here
                code_blanks = []
                i += 1
                continue

            s = rel.lstrip()
            first = s[:1]
            if first not in _BLOCK_START:
                # text: none of the blocks below starts with this character
                if self.para:
                    self.para.append((lineno, raw))
                    self.para_text.append(rel)
                else:
                    self.para = [(lineno, raw)]
                    self.para_level = level
                    self.para_text = [rel]
                i += 1
                continue

            # fenced code
            if first in ("`", "~"):
                m = _FENCE.match(rel)
                if m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
                    self._flush()
                    raw_block = _Raw("fence", lineno, level, m.group(1)[0], len(m.group(1)))
                    self._code(lineno, lineno)
                    i += 1
                    continue

            # math block; a one-line $$...$$ followed by text is prose with inline math
            if first == "$" and s.startswith("$$"):
                close = s.find("$$", 2)
                if close < 0 and self._closes_later("$$", i):
                    self._flush()
                    raw_block = _Raw("math", lineno, level)
                    self._code(lineno, lineno)
                    i += 1
                    continue
                if close >= 0 and not s[close + 2:].strip():
                    self._flush()
                    self._code(lineno, lineno)
                    i += 1
                    continue
                # (an unclosed $$ is text: it never hides the rest of the note)

            # HTML blocks (comments carry the suppression comments)
            if first == "<":
                end = _html_block_start(s, bool(self.para))
                if end is not None:
                    self._flush()
                    block = _Raw("html-blank" if end == "" else "html", lineno, level, end=end)
                    if end == "-->":
                        block.chunk = [raw]
                    self._code(lineno, lineno)
                    after = s[2:] if end == "-->" else s[1:]  # ("<!-->" ends itself)
                    if end and end in (after.lower() if end[:2] == "</" else after):
                        self._close_raw(block)
                    else:
                        raw_block = block
                    i += 1
                    continue

            # %% block comment opening on its own line
            if first == "%" and s.startswith(_PERCENT) and _PERCENT not in s[2:]:
                self._flush()
                self.pending_percent = True
                self._code(lineno, lineno)
                i += 1
                continue

            # ATX heading
            if first == "#":
                atx = _atx(s)
                if atx is not None:
                    self._flush()
                    self._heading(atx, raw, lineno)
                    i += 1
                    continue

            # setext underline or thematic break (the underline is in the paragraph's own
            # containers: a setext underline cannot be a lazy continuation line, §4.3)
            if (first in ("=", "-") and self.para and self.para_level == level
                    and _SETEXT.match(rel)):
                heading_level = 1 if first == "=" else 2
                text = " ".join([t.strip() for t in self.para_text])
                self.note.headings.append(Heading(heading_level, text, self.para[0][0]))
                self._inline(self.para, heading=True)
                self.para = []
                i += 1
                continue
            if first in ("-", "*", "_") and _is_thematic(rel):
                self._flush()
                i += 1
                continue

            # link reference definition (not a footnote: "[^1]: text" is prose)
            if first == "[" and not self.para and s[1:2] != "^":
                used = self._refdef(i, s, raw)
                if used:
                    i += used
                    continue

            self._add_para(lineno, raw, rel)
            i += 1
        self._flush()
        if raw_block is not None:
            self._close_raw(raw_block)

    def _heading(self, atx: tuple[int, str], raw: str, lineno: int) -> None:
        level, text = atx
        self.note.headings.append(Heading(level, text, lineno))
        if text and _inline_start(text):  # (else nothing to find)
            col = raw.find(text)
            self._inline([(lineno, " " * max(col, 0) + text)], heading=True)

    def _closes_later(self, marker: str, i: int) -> bool:
        """A line after index ``i`` holds ``marker``."""
        lines_with = self.marker_lines.get(marker)
        if lines_with is None:
            lines_with = self.marker_lines[marker] = [
                k for k, line in enumerate(self.lines) if marker in line]
        return bool(lines_with) and lines_with[-1] > i

    def _close_raw(self, block: _Raw) -> None:
        if block.chunk is not None:
            self._comments("\n".join(block.chunk), block.start)

    def _inside(self, k: int) -> str | None:
        """Line index ``k`` without the open containers' markers, or None when it leaves
        them (or does not exist)."""
        if k >= len(self.lines):
            return None
        raw = self.lines[k].rstrip("\r")
        matched, rest = self._match(raw)
        return rest if matched == len(self.containers) else None

    def _refdef(self, i: int, s: str, raw: str) -> int:
        """Read a link reference definition starting on line index ``i`` (``s``: the line
        without container markers and indent). Returns how many lines it used (0: none)."""
        label_end = _label_end(s)
        first = i
        if label_end < 0 and "]" not in s:  # a label may span lines (no blank line in it)
            joined = s
            while len(joined) <= 1001 and i - first < _MAX_TITLE_LINES:
                nxt = self._inside(i + 1)
                if nxt is None or not nxt.strip():
                    return 0
                joined += "\n" + nxt
                i += 1
                if "]" in nxt:
                    break
            label_end = _label_end(joined)
            if label_end < 0:
                return 0
            raw = self.lines[i].rstrip("\r")
            s = joined
        if label_end < 0 or s[label_end + 1:label_end + 2] != ":":
            return 0
        rest = s[label_end + 2:]
        lineno = i + 1
        used = 1 + i - first
        dest_line, dest_raw = lineno, raw
        if not rest.strip():  # the destination on the next line
            nxt = self._inside(i + 1)
            if nxt is None or not nxt.strip():
                return 0
            rest = nxt
            used, dest_line, dest_raw = used + 1, lineno + 1, self.lines[i + 1].rstrip("\r")
        rest = rest.lstrip(" \t")
        dest, after = _refdef_destination(rest)
        if dest is None:
            return 0
        tail = after.strip()
        if tail and not _is_title(tail):
            used = self._multiline_title(first + used, tail, used)
            if not used:
                return 0
        elif not tail:  # a title may follow on the next line
            cand = self._inside(first + used)
            if cand and _is_title(cand.strip()):
                used += 1
        col = dest_raw.find(dest) + 1
        link = _markdown_link(dest, "", False, dest_line, col, s.strip() if used == 1 else dest)
        if link is not None:
            self.note.links.append(link)
        return used

    def _multiline_title(self, k: int, start: str, used: int) -> int:
        """A title opened by ``start`` and closed on a later line (from index ``k`` on, no
        blank line between): the lines used with it, or 0 when it is not one."""
        close = {"\"": "\"", "'": "'", "(": ")"}.get(start[0])
        if close is None:
            return 0
        text = start
        for _ in range(_MAX_TITLE_LINES):
            nxt = self._inside(k)
            if nxt is None or not nxt.strip():
                return 0
            text += "\n" + nxt.strip()
            k += 1
            used += 1
            if close in nxt:
                return used if _is_title(text) else 0
        return 0

    def _add_para(self, lineno: int, raw: str, rel: str) -> None:
        if not self.para:
            self.para_level = len(self.containers)
            self.para_text = []
        self.para.append((lineno, raw))
        self.para_text.append(rel)

    def _flush(self) -> None:
        para = self.para
        if para:
            if len(para) > 1 or _inline_start(para[0][1]):
                self._inline(para)
            self.para = []

    def _comments(self, text: str, lineno: int) -> None:
        for start, _end, body in _html_comments(text):
            sup = _suppression(body)
            if sup:
                line = lineno + text.count("\n", 0, start)
                self.note.suppressions.append(Suppression(sup[0], sup[1], line))

    def _inline(self, segments: list[tuple[int, str]], heading: bool = False) -> None:
        """Scan one paragraph (or heading) for links, tags and block ids."""
        if not segments:
            return
        if len(segments) == 1:
            text = segments[0][1]
            if not _inline_start(text):
                return  # (most lines: nothing below can match)
            starts = [0]
        else:
            text = "\n".join([t for _, t in segments])
            if not _inline_start(text):
                return
            starts = []
            pos = 0
            for _, t in segments:
                starts.append(pos)
                pos += len(t) + 1

        masked = text
        if "`" in masked:
            masked = _mask_code_spans(masked)
        if "<!--" in masked:
            pieces, last = [], 0
            for start, end, body in _html_comments(masked):
                sup = _suppression(body)
                if sup:
                    line = segments[_seg_index(starts, start)][0]
                    self.note.suppressions.append(Suppression(sup[0], sup[1], line))
                pieces.append(masked[last:start])
                pieces.append(_blank_out(masked[start:end]))
                last = end
            if pieces:
                pieces.append(masked[last:])
                masked = "".join(pieces)
        if _PERCENT in masked:
            masked, opened = _mask_percent(masked)
            if opened:
                self.pending_percent = True
                self._code(segments[-1][0], segments[-1][0])
        if "$" in masked:
            masked = _mask_math(masked)
        if "<" in masked:
            masked = _AUTOLINK.sub(lambda m: _blank_out(m.group(0)), masked)

        note = self.note
        if "[" in masked:
            if "[[" in masked:
                pieces, last = [], 0
                one = len(starts) == 1
                for m in _wiki_matches(masked):
                    a, b = m.span()
                    if a and masked[a - 1] == "\\":
                        continue  # \[[ is an escaped bracket
                    if one:
                        note.links.append(_wikilink(m, segments[0][0], a + 1))
                    else:
                        k = _seg_index(starts, a)
                        note.links.append(_wikilink(m, segments[k][0], a - starts[k] + 1))
                    pieces.append(masked[last:a])
                    pieces.append(" " * (b - a))
                    last = b
                if pieces:
                    pieces.append(masked[last:])
                    masked = "".join(pieces)
            if "^[" in masked:
                masked = _mask_inline_footnotes(masked)
            if "](" in masked:
                found = _markdown_links(masked)
                if found:
                    found.sort()
                    for start, end, embed, label, dest in found:
                        k = _seg_index(starts, start)
                        link = _markdown_link(dest, label.strip(), embed, segments[k][0],
                                              start - starts[k] + 1, text[start:end])
                        if link is not None:
                            note.links.append(link)
                    pieces, last = [], 0
                    for start, end, *_ in found:
                        if start < last:
                            continue  # an image inside a link: blanked with the link
                        pieces.append(masked[last:start])
                        pieces.append(_blank_out(masked[start:end]))
                        last = end
                    pieces.append(masked[last:])
                    masked = "".join(pieces)
        if "#" in masked:
            for m in _tag_matches(masked):
                body = m.group(1)
                if _ALL_DIGITS.match(body):
                    continue
                k = _seg_index(starts, m.start())
                note.tags.append(Tag(body, segments[k][0], m.start() - starts[k] + 1))
        if "^" in masked and not heading:
            # a block id ends the block: the last line of the paragraph, never one before
            # it, except that embed-only lines after it (a list item's tab-indented
            # ![[picture]]) are not the text it ends
            k = len(starts) - 1
            while k and not masked[starts[k]:].strip() and text[starts[k]:].lstrip()[:1] == "!":
                k -= 1
            block_id = _block_id(masked[starts[k]:starts[k + 1] if k + 1 < len(starts) else None])
            if block_id:
                note.block_ids.setdefault(block_id.lower(), segments[k][0])


def mask_references(text: str) -> str:
    """``text`` with its links, embeds, inline code, comments and math blanked out (same
    length, newlines kept): the words a reader sees as the text's own. Linear."""
    if "`" in text:
        text = _mask_code_spans(text)
    if "<!--" in text:
        pieces, last = [], 0
        for start, end, _body in _html_comments(text):
            pieces.append(text[last:start])
            pieces.append(_blank_out(text[start:end]))
            last = end
        pieces.append(text[last:])
        text = "".join(pieces)
    if _PERCENT in text:
        text = _mask_percent(text)[0]
    if "[[" in text:
        text = _WIKI.sub(lambda m: _blank_out(m.group(0)), text)
    if "](" in text:
        found = _markdown_links(text)
        if found:
            chars = list(text)
            for start, end, *_ in found:
                chars[start:end] = _blank_out(text[start:end])
            text = "".join(chars)
    return text


def _block_id(line: str) -> str | None:
    line = line.rstrip()
    caret = line.rfind("^")
    if caret < 0 or (caret and line[caret - 1] not in " \t"):
        return None
    ident = line[caret + 1:]
    if ident and _BLOCK_ID_CHARS.fullmatch(ident):
        return ident
    return None


def _atx(s: str) -> tuple[int, str] | None:
    """``(level, text)`` of an ATX heading line (indent already removed), else None."""
    level = len(s) - len(s.lstrip("#"))
    if not 1 <= level <= 6:
        return None
    rest = s[level:]
    if rest and rest[0] not in " \t":
        return None
    rest = rest.strip(" \t")
    bare = rest.rstrip("#")
    if len(bare) < len(rest) and (not bare or bare[-1] in " \t"):  # a closing sequence
        rest = bare.rstrip(" \t")
    return level, rest


def _suppression(body: str) -> tuple[str, tuple[str, ...]] | None:
    """``(action, rules)`` of a ``vaultkit-...`` comment body, else None."""
    s = body.strip()
    if not s.startswith("vaultkit-") or ">" in s:
        return None
    s = s[9:]
    for action in _ACTIONS:
        if s.startswith(action):
            after = s[len(action):len(action) + 1]
            if after and (after.isalnum() or after == "_"):
                continue
            rules = tuple(r for r in _RULE_SEP.split(s[len(action):].strip()) if r)
            return action, rules
    return None


def _html_comments(text: str):
    """``(start, end, body)`` of each complete ``<!-- -->`` comment, in one pass."""
    pos = 0
    while True:
        a = text.find("<!--", pos)
        if a < 0:
            return
        if text.startswith(">", a + 4):  # "<!-->" and "<!--->" are complete (CommonMark §6.6)
            yield a, a + 5, ""
            pos = a + 5
            continue
        if text.startswith("->", a + 4):
            yield a, a + 6, ""
            pos = a + 6
            continue
        b = text.find("-->", a + 4)
        if b < 0:
            return  # unclosed: no later comment can close either
        yield a, b + 3, text[a + 4:b]
        pos = b + 3


def _html_block_start(s: str, in_paragraph: bool) -> str | None:
    """The end condition of the HTML block ``s`` starts (CommonMark §4.6): the text that
    ends it, "" for "a blank line", None when ``s`` starts none."""
    if s.startswith("<!--"):
        return "-->"
    if s.startswith("<?"):
        return "?>"
    if s.startswith("<![CDATA["):
        return "]]>"
    if s.startswith("<!") and s[2:3].isascii() and s[2:3].isalpha():
        return ">"
    m = _HTML_TAG_NAME.match(s)
    if not m:
        return None
    name = m.group(2).lower()
    after = s[m.end():m.end() + 1]
    if not m.group(1) and name in _HTML_RAW_TAGS and (after in ("", " ", "\t", ">")):
        return f"</{name}>"
    if name in _HTML_BLOCK_TAGS and (after in ("", " ", "\t", ">") or s[m.end():m.end() + 2] == "/>"):
        return ""
    if not in_paragraph and name not in _HTML_RAW_TAGS and _HTML_COMPLETE_TAG.match(s):
        return ""
    return None


def _label_end(s: str) -> int:
    """Index of the ``]`` closing the link label that ``s`` (starting with ``[``) opens."""
    k, n = 1, min(len(s), 1001)
    while k < n:
        c = s[k]
        if c == "\\":
            k += 2
            continue
        if c == "[":
            return -1
        if c == "]":
            return k if s[1:k].strip() else -1
        k += 1
    return -1


def _refdef_destination(s: str) -> tuple[str | None, str]:
    """The destination at the start of ``s`` and the text after it."""
    if s.startswith("<"):
        k = 1
        while k < len(s) and s[k] not in "<>":
            k += 2 if s[k] == "\\" else 1
        if k >= len(s) or s[k] != ">" or s[k + 1:k + 2] not in ("", " ", "\t"):
            return None, ""
        return s[:k + 1], s[k + 1:]
    end = len(s)
    for k, c in enumerate(s):
        if c in " \t":
            end = k
            break
    if end == 0:
        return None, ""
    after = s[end:]
    if after and after[0] not in " \t":
        return None, ""
    return s[:end], after


def _is_title(s: str) -> bool:
    """``s`` is one complete link title and nothing else."""
    if len(s) < 2:
        return False
    close = {"\"": "\"", "'": "'", "(": ")"}.get(s[0])
    if close is None or s[-1] != close:
        return False
    k = 1
    while k < len(s) - 1:
        if s[k] == "\\":
            k += 2
            continue
        if s[k] == close or (close == ")" and s[k] == "("):
            return False
        k += 1
    return k == len(s) - 1


def _starts_block(content: str) -> bool:
    """``content`` starts a block that interrupts a paragraph (so it is no lazy line)."""
    first = content[:1]
    if first in "-*+" and content[1:2] == " " and content[2:3] not in ("", first) and not (
            content[2].isspace()):
        return True  # the common item "- text" (as the last check below reads it)
    if first in " \t" or first.isspace():  # ("" too)
        if _indent_of(content) >= 4:
            return False
        s = content.lstrip()
        if not s:
            return True
        first = s[0]
    else:
        s = content
    if first == ">" or (first == "#" and _atx(s) is not None) or s.startswith("$$"):
        return True
    if first in "`~":
        m = _FENCE.match(content)
        return bool(m) and not (m.group(1)[0] == "`" and "`" in m.group(2))
    if first in "-*_" and _is_thematic(content):
        return True
    if first == "<":
        return _html_block_start(s, True) is not None
    if first in _ITEM_FIRST:
        m = _LIST_ITEM.match(content)
        return bool(m) and bool(content[m.end():].strip()) and (
            not m.group(2)[0].isdigit() or m.group(2)[:-1] == "1")
    return False


def _is_thematic(s: str) -> bool:
    """``s`` is a thematic break: up to 3 spaces, then 3 or more of one of ``- * _`` with
    only spaces and tabs between (string methods, no backtracking)."""
    t = s.lstrip(" ")
    if not t or len(s) - len(t) > 3 or t[0] not in "-*_":
        return False
    return t.count(t[0]) >= 3 and not t.replace(t[0], "").strip(" \t")


def _quote_marker(s: str) -> str | None:
    """``s`` after its block-quote marker (up to 3 spaces, ``>``, one optional space)."""
    k = 0
    while k < 3 and k < len(s) and s[k] == " ":
        k += 1
    if s[k:k + 1] != ">":
        return None
    k += 1
    if s[k:k + 1] == " ":
        k += 1
    elif s[k:k + 1] == "\t":
        return "  " + s[k + 1:]  # a tab after ">" gives the space and the rest of its stop
    return s[k:]


def _wiki_matches(text: str):
    """The matches of ``_WIKI.finditer(text)``, found faster: a match starts at a ``[[``
    (or the ``!`` just before it), so the scan jumps from one ``[[`` to the next instead of
    trying the pattern at every character."""
    match = _WIKI.match
    find = text.find
    pos = 0
    j = find("[[")
    while j >= 0:
        m = match(text, j - 1 if j > pos and text[j - 1] == "!" else j)
        if m is None:
            j = find("[[", j + 1)
            continue
        yield m
        pos = m.end()
        j = find("[[", pos)


def _tag_matches(text: str):
    """The matches of ``_TAG.finditer(text)``: each starts at a ``#`` (the lookbehind sees
    the text before it), so only those are tried."""
    match = _TAG.match
    find = text.find
    j = find("#")
    while j >= 0:
        m = match(text, j)
        if m is None:
            j = find("#", j + 1)
            continue
        yield m
        j = find("#", m.end())


def _seg_index(starts: list[int], pos: int) -> int:
    lo, hi = 0, len(starts) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if starts[mid] <= pos:
            lo = mid
        else:
            hi = mid - 1
    return lo


_NOT_NEWLINE = re.compile(r"[^\n]")


def _blank_out(s: str) -> str:
    """Same length, newlines kept, everything else a space."""
    if "\n" not in s:
        return " " * len(s)
    return _NOT_NEWLINE.sub(" ", s)


def _mask_code_spans(text: str) -> str:
    # runs of backticks by length; a run closes only at the next run of the same length,
    # and when no such run follows, no later run of that length opens anything either
    runs = [(m.start(), m.end()) for m in _BACKTICKS.finditer(text)
            if not (m.start() and text[m.start() - 1] == "\\")]
    if len(runs) < 3:  # the common cases, as the loop below reads them
        if len(runs) < 2 or runs[0][1] - runs[0][0] != runs[1][1] - runs[1][0]:
            return text  # no run has a closing one
        a, b = runs[0][0], runs[1][1]
        return text[:a] + _blank_out(text[a:b]) + text[b:]
    out, last = [], 0
    idx = 0
    unmatched: set[int] = set()
    by_len: dict[int, list[int]] = {}
    for k, (a, b) in enumerate(runs):
        by_len.setdefault(b - a, []).append(k)
    pointer = {length: 0 for length in by_len}
    while idx < len(runs):
        a, b = runs[idx]
        if a < last:
            idx += 1
            continue
        length = b - a
        if length in unmatched:
            idx += 1
            continue
        same = by_len[length]
        p = pointer[length]
        while p < len(same) and same[p] <= idx:
            p += 1
        pointer[length] = p
        if p >= len(same):
            unmatched.add(length)
            idx += 1
            continue
        close = runs[same[p]]
        out.append(text[last:a])
        out.append(_blank_out(text[a:close[1]]))
        last = close[1]
        idx = same[p] + 1
    out.append(text[last:])
    return "".join(out)


def _mask_percent(text: str) -> tuple[str, bool]:
    """Mask ``%%...%%`` pairs; an unpaired one comments out the rest."""
    out = []
    pos = 0
    while True:
        a = text.find(_PERCENT, pos)
        if a < 0:
            out.append(text[pos:])
            return "".join(out), False
        b = text.find(_PERCENT, a + 2)
        out.append(text[pos:a])
        if b < 0:
            out.append(_blank_out(text[a:]))
            return "".join(out), True
        out.append(_blank_out(text[a:b + 2]))
        pos = b + 2


def _mask_math(text: str) -> str:
    """Mask inline math ``$...$`` and ``$$...$$`` as Obsidian (and markdown-it's dollarmath)
    reads it: the opening ``$`` is not escaped, not followed by whitespace and not after a
    digit; it closes at the next unescaped ``$`` (``$$`` for ``$$``), which must not follow
    whitespace nor precede a digit, else the opening ``$`` is plain text. Linear: each
    opening looks at one closing candidate."""
    out, last = [], 0
    pos, n = 0, len(text)
    no_double_after = n + 1  # no unescaped "$$" at or after this index
    while pos < n:
        a = text.find("$", pos)
        if a < 0:
            break
        pos = a + 1
        if _escaped(text, a) or a + 1 >= n or text[a + 1].isspace() or (
                a and text[a - 1].isdigit()):
            continue
        if text[a + 1] == "$":
            if a + 2 >= no_double_after:
                continue
            end = a + 2
            while True:
                end = text.find("$$", end)
                if end < 0 or not _escaped(text, end):
                    break
                end += 1
            if end < 0:
                no_double_after = a + 2
                continue
            end += 1  # the closing "$$"'s second "$"
            if end - 1 == a + 2:
                continue  # empty
        else:
            end = a + 1
            while True:
                end = text.find("$", end)
                if end < 0 or not _escaped(text, end):
                    break
                end += 1
            if end < 0 or end == a + 1:
                continue
            if text[end - 1].isspace():
                continue
        if text[end + 1:end + 2].isdigit():
            continue
        out.append(text[last:a])
        out.append(_blank_out(text[a:end + 1]))
        last = pos = end + 1
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)


def _escaped(text: str, k: int) -> bool:
    """The character at ``k`` follows an odd number of backslashes."""
    count = 0
    while k > count and text[k - count - 1] == "\\":
        count += 1
    return count % 2 == 1


def _mask_inline_footnotes(text: str) -> str:
    """Blank the brackets of Obsidian's inline footnotes ``^[...]`` (their text stays prose,
    and ``^[a](b)`` is a footnote, not a link)."""
    chars = None
    stack: list[int] = []  # positions of open "[", negative for footnote openers
    k = 0
    while True:
        m = _BRACKET.search(text, k)
        if not m:
            break
        j = m.start()
        c = text[j]
        if c == "\\":
            k = j + 2
            continue
        if c == "[":
            stack.append(-j - 1 if j and text[j - 1] == "^" else j)
        elif stack:
            opener = stack.pop()
            if opener < 0:
                if chars is None:
                    chars = list(text)
                o = -opener - 1
                chars[o - 1] = chars[o] = chars[j] = " "
        k = j + 1
    return text if chars is None else "".join(chars)


def _markdown_links(t: str) -> list[tuple[int, int, bool, str, str]]:
    """Inline links and images ``[text](dest "title")`` as CommonMark finds them (§6.3):
    brackets nest, an image may sit inside a link, a link never inside a link, ``\\[`` is
    no bracket. Returns ``(start, end, is_image, text, destination)``."""
    out = []
    openers: list[tuple[int, bool]] = []  # (position of "[", is image)
    floor = 0  # link openers below this index are inactive: no link inside a link
    k = 0
    while True:
        m = _BRACKET.search(t, k)
        if not m:
            break
        j = m.start()
        c = t[j]
        if c == "\\":
            k = j + 2
            continue
        if c == "[":
            openers.append((j, j > 0 and t[j - 1] == "!" and not (j > 1 and t[j - 2] == "\\")))
            if len(openers) > 1000:  # bound the work on hostile text
                del openers[:500]
                floor = max(0, floor - 500)
            k = j + 1
            continue
        k = j + 1
        if not openers:
            continue
        position, image = openers.pop()
        if (not image and len(openers) < floor) or t[j + 1:j + 2] != "(":
            continue
        dest = _inline_destination(t, j + 2)
        if dest is None:
            continue
        destination, end = dest
        start = position - 1 if image else position
        out.append((start, end, image, t[position + 1:j], destination))
        if not image:
            floor = len(openers)
        k = end
    return out


_DEST_PLAIN = re.compile(r"[^\x00-\x20\x7f()\\]*").match


def _skip_space(t: str, k: int) -> int:
    n = len(t)
    while k < n and t[k] in " \t":
        k += 1
    if k < n and t[k] == "\n":
        k += 1
        while k < n and t[k] in " \t":
            k += 1
    return k


def _inline_destination(t: str, k: int) -> tuple[str, int] | None:
    """``(destination, end)`` of ``(dest "title")`` whose ``(`` is just before ``k``."""
    n = len(t)
    k = _skip_space(t, k)
    if k < n and t[k] == ")":
        return "", k + 1
    if k < n and t[k] == "<":
        e = k + 1
        while e < n and t[e] not in "<>\n":
            e += 2 if t[e] == "\\" else 1
        if e >= n or t[e] != ">":
            return None
        dest = t[k:e + 1]
        k = e + 1
    else:
        e, depth = k, 0
        while e < n:
            e = _DEST_PLAIN(t, e).end()  # the characters the checks below only step over
            if e >= n:
                break
            c = t[e]
            if c == "\\" and e + 1 < n and t[e + 1] in _ASCII_PUNCT:
                e += 2
                continue
            if c <= " " or c == "\x7f":
                break
            if c == "(":
                depth += 1
                if depth > 32:
                    return None
            elif c == ")":
                if not depth:
                    break
                depth -= 1
            e += 1
        if depth or e == k:
            return None
        dest = t[k:e]
        k = e
    after = _skip_space(t, k)
    if after < n and t[after] == ")":
        return dest, after + 1
    if after == k or after >= n or t[after] not in "\"'(":
        return None
    close = ")" if t[after] == "(" else t[after]
    e = after + 1
    while e < n and t[e] != close:
        if t[e] == "\\":
            e += 1
        elif close == ")" and t[e] == "(":
            return None
        e += 1
    if e >= n:
        return None
    end = _skip_space(t, e + 1)
    if end < n and t[end] == ")":
        return dest, end + 1
    return None


def _wikilink(m: re.Match, line: int, column: int) -> Link:
    raw, bang, inner = m.group(0, 1, 2)
    if "\\|" in inner:
        inner = inner.replace("\\|", "|")
    target, has_alias, alias = inner.partition("|")
    target, _, subpath = target.partition("#")
    # Link(kind, target, subpath, alias, line, column, embed, raw)
    return Link(WIKI, target.strip(), subpath.strip(), alias.strip() if has_alias else None,
                line, column, bang == "!", raw)


def _markdown_link(dest: str, text: str, embed: bool, line: int, column: int,
                   raw: str) -> Link | None:
    if dest.startswith("<") and dest.endswith(">"):
        dest = dest[1:-1]
    if "\\" in dest:
        dest = _ESCAPED.sub(r"\1", dest)  # only ASCII punctuation is escaped (§2.4)
    if "&" in dest:  # (rare: html and its entity table are imported only for it)
        import html

        dest = html.unescape(dest)
    dest = dest.strip()
    if not dest:
        return None
    external = bool(_SCHEME.match(dest)) or dest.startswith("//")
    if external:
        return Link(MARKDOWN, dest, "", text or None, line, column, embed, raw, True)
    dest = unquote(dest)
    target, _, subpath = dest.partition("#")
    return Link(MARKDOWN, target.strip(), subpath.strip(), text or None, line, column, embed, raw)

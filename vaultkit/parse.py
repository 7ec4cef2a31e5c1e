"""Parse one Markdown file into a :class:`~vaultkit.model.Note`, once.

The body is read by a single-pass line scanner that follows CommonMark's block
rules for everything that decides what is prose and what is not: fenced and
indented code (inside block quotes and list items too), HTML comment blocks,
Obsidian ``%%comments%%`` and ``$$math$$`` blocks, ATX and setext headings, link
reference definitions. Prose is then scanned paragraph by paragraph for code
spans, comments, wikilinks, Markdown links, tags and block ids, so every item
carries its real 1-based line and column. mistune serves as the reference for
this block classification in the tests (``tests/test_parse_oracle.py``); it is not
run here because its block pass alone costs ~250 µs per KB, several times this
scanner, and the commit hook parses every changed note.

Frontmatter is read with PyYAML's C loader in two steps (compose, then
construct) so that every top-level key keeps its line, alias expansion can be
bounded before anything is built, and no tag can construct a Python object.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

from vaultkit.bounded import MAX_DEPTH, MAX_YAML_NODES, yaml_problem
from vaultkit.model import (MARKDOWN, PARSER_VERSION, PROPERTY, WIKI, Heading, Link, Note,  # noqa: F401
                            Suppression, Tag)

MAX_FRONTMATTER_CHARS = 256_000

_BOM = b"\xef\xbb\xbf"

_QUOTE = re.compile(r"^(?: {0,3}> ?)+")
_ITEM_FIRST = frozenset("-*+0123456789")
_LIST_ITEM = re.compile(r"^( *)([-*+]|\d{1,9}[.)])( {1,4}(?! )|\t|$)")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_THEMATIC = re.compile(r"^ {0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$")
_REFDEF = re.compile(r"^ {0,3}\[((?:[^\[\]\\]|\\.)+)\]:[ \t]*(<[^<>\n]*>|\S+)")

_BACKTICKS = re.compile(r"`+")
_HTML_COMMENT = re.compile(r"<!--(.*?)-->", re.S)
_SUPPRESS = re.compile(
    r"^\s*vaultkit-(disable-next-line|disable-file|disable|enable)\b([^>]*?)\s*$", re.S
)
_WIKI = re.compile(r"(!?)\[\[([^\[\]\n]+?)\]\]")
_MDLINK = re.compile(
    r"(!?)\[((?:[^\[\]\\\n]|\\.|\[[^\[\]\n]*\])*)\]"
    r"\(\s*(<[^<>\n]*>|(?:[^\s()\\]|\\.|\((?:[^\s()\\]|\\.)*\))*)"
    r"(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))?\s*\)"
)
_AUTOLINK = re.compile(r"<[A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*>")
_TAG = re.compile(r"(?<![^\s(\[{,;])#([\w/-]+)")
_ALL_DIGITS = re.compile(r"^[\d/_-]*$")
_BLOCK_ID = re.compile(r"(?:^|\s)\^([A-Za-z0-9-]+)[ \t]*$")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_PERCENT = "%%"


def parse_note(path: str, data: bytes, *, size: int | None = None, mtime_ns: int = 0) -> Note:
    """Parse the bytes of one Markdown file. Never raises on content."""
    note = Note(path=path, size=len(data) if size is None else size, mtime_ns=mtime_ns)
    if b"\x00" in data:
        note.error = f"binary content: NUL byte at offset {data.index(0)}"
        return note
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

def _frontmatter(note: Note, lines: list[str]) -> int:
    """Read the YAML block at the top. Returns the index of the first body line."""
    if not lines or lines[0].rstrip() != "---":
        return 0
    close = None
    for i in range(1, len(lines)):
        if lines[i].rstrip() == "---":
            close = i
            break
    if close is None:
        note.fm_error = ("frontmatter opened on line 1 never closes (no closing '---' line)", 1)
        return 0
    note.fm_span = (1, close + 1)
    source = "\n".join(lines[1:close]) + "\n"
    if len(source) > MAX_FRONTMATTER_CHARS:
        note.fm_error = (f"frontmatter is {len(source):,} characters; over the "
                         f"{MAX_FRONTMATTER_CHARS:,} that are read", 2)
        return close + 1
    data, keys, error = load_yaml_mapping(source, first_line=2)
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


class _Scanner:
    """Line-by-line block scanner; collects into ``note``."""

    def __init__(self, note: Note, lines: list[str]):
        self.note = note
        self.lines = lines
        self.para: list[tuple[int, str]] = []  # (1-based line, original line text)
        self.para_depth = (0, 0)  # (list depth, quote depth) where the paragraph started
        self.quote_depth = 0
        self.para_text: list[str] = []  # the paragraph's lines without container markers
        self.list_stack: list[int] = []  # content indents of open list items
        self.list_quote: list[int] = []  # the quote depth each of them opened at
        self.code_start: int | None = None
        self.pending_percent = False

    # bookkeeping of non-prose ranges
    def _code(self, start: int, end: int) -> None:
        ranges = self.note.code_ranges
        if ranges and ranges[-1][1] >= start - 1:
            ranges[-1] = (ranges[-1][0], max(end, ranges[-1][1]))
        else:
            ranges.append((start, end))

    def scan(self, start: int) -> None:
        lines = self.lines
        n = len(lines)
        i = start
        fence: tuple[str, int] | None = None
        fence_start = 0
        while i < n:
            raw = lines[i]
            lineno = i + 1
            if raw.endswith("\r"):
                raw = raw[:-1]

            # inside a fenced code block: only its closing fence matters
            if fence is not None:
                content = _QUOTE.sub("", raw, count=1) if ">" in raw[:8] else raw
                s = content.strip()
                if s and s[0] == fence[0] and len(s) >= fence[1] and s.strip(fence[0]) == "":
                    self._code(fence_start, lineno)
                    fence = None
                i += 1
                continue

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

            if not raw or raw.isspace():
                self._flush()
                i += 1
                continue

            if ">" in raw[:8]:
                quote = _QUOTE.match(raw)
                content = raw[quote.end():] if quote else raw
                depth = quote.group(0).count(">") if quote else 0
                if self.para and depth > self.para_depth[1]:  # a quote interrupts a paragraph
                    self._flush()
                if not content or content.isspace():  # a blank line inside the quote
                    self.quote_depth = depth
                    self._flush()
                    i += 1
                    continue
            else:
                content, depth = raw, 0
            self.quote_depth = depth
            indent = _indent_of(content) if content[0] in " \t" else 0

            # list containers: close items this line is not indented into, unless the line
            # is a lazy continuation of the open paragraph
            lazy = False
            if self.list_stack:
                lazy = bool(self.para and indent < self.list_stack[-1]
                            and not _LIST_ITEM.match(content) and not _starts_block(content))
                if not lazy:
                    while self.list_stack and (indent < self.list_stack[-1]
                                               or depth < self.list_quote[-1]):
                        self.list_stack.pop()
                        self.list_quote.pop()
            if self.list_stack:
                rel = _strip_indent(content, self.list_stack[-1])
                rel_indent = _indent_of(rel)
            else:
                rel, rel_indent = content, indent

            # indented code (cannot interrupt a paragraph)
            if rel_indent >= 4 and not self.para:
                j = i + 1
                end = i
                while j < n:
                    nxt = lines[j].rstrip("\r")
                    if not nxt.strip():
                        j += 1
                        continue
                    nq = _QUOTE.match(nxt) if ">" in nxt[:8] else None
                    nc = nxt[nq.end():] if nq else nxt
                    base = self.list_stack[-1] if self.list_stack else 0
                    if _indent_of(nc) - base >= 4:
                        end = j
                        j += 1
                        continue
                    break
                self._code(lineno, end + 1)
                i = end + 1
                continue

            m_item = _LIST_ITEM.match(rel) if rel_indent < 4 and (
                rel.lstrip()[:1] in _ITEM_FIRST) else None
            if m_item:
                marker_text = rel[m_item.end():]
                if marker_text.strip() or not self.para:
                    self._flush()
                    base = self.list_stack[-1] if self.list_stack else 0
                    width = len(m_item.group(1)) + len(m_item.group(2))
                    pad = m_item.group(3)
                    width += (len(pad) if pad and pad != "\t" else 1)
                    self.list_stack.append(base + width)
                    self.list_quote.append(depth)
                    rel = marker_text
                    if not rel.strip():
                        i += 1
                        continue

            s = rel.lstrip()
            first = s[:1]

            # fenced code
            if first in ("`", "~"):
                m = _FENCE.match(rel if _indent_of(rel) < 4 else rel.lstrip())
                if m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
                    self._flush()
                    fence = (m.group(1)[0], len(m.group(1)))
                    fence_start = lineno
                    self._code(lineno, lineno)
                    i += 1
                    continue

            # math block
            if s.startswith("$$"):
                self._flush()
                if s.rstrip().endswith("$$") and len(s.strip()) > 2:
                    self._code(lineno, lineno)
                    i += 1
                    continue
                j = i + 1
                while j < n and "$$" not in lines[j]:
                    j += 1
                end = min(j, n - 1)
                self._code(lineno, end + 1)
                i = end + 1
                continue

            # HTML comment block (and the suppression comments in it)
            if s.startswith("<!--"):
                self._flush()
                j = i
                chunk = [raw]
                while "-->" not in lines[j] and j + 1 < n:
                    j += 1
                    chunk.append(lines[j].rstrip("\r"))
                self._comments("\n".join(chunk), lineno)
                self._code(lineno, j + 1)
                i = j + 1
                continue

            # %% block comment opening on its own line
            if s.startswith(_PERCENT) and _PERCENT not in s[2:]:
                self._flush()
                self.pending_percent = True
                self._code(lineno, lineno)
                i += 1
                continue

            # ATX heading
            if first == "#":
                m = _ATX.match(rel)
                if m:
                    self._flush()
                    text = (m.group(2) or "").strip()
                    self.note.headings.append(Heading(len(m.group(1)), text, lineno))
                    col = raw.find(text) if text else 0
                    self._inline([(lineno, " " * max(col, 0) + text)] if text else [], heading=True)
                    i += 1
                    continue

            # setext underline or thematic break
            # (a setext underline cannot be a lazy continuation line: CommonMark §4.3)
            if (first in ("=", "-") and self.para and not lazy
                    and (len(self.list_stack), depth) == self.para_depth and _SETEXT.match(rel)):
                level = 1 if first == "=" else 2
                text = " ".join(self.para_text)
                self.note.headings.append(Heading(level, text, self.para[0][0]))
                self._flush()
                i += 1
                continue
            if first in ("-", "*", "_") and _THEMATIC.match(rel):
                self._flush()
                i += 1
                continue

            # link reference definition
            if first == "[" and not self.para:
                m = _REFDEF.match(rel)
                if m:
                    dest = m.group(2)
                    col = raw.find(dest) + 1
                    link = _markdown_link(dest, "", False, lineno, col, m.group(0).strip())
                    if link is not None:
                        self.note.links.append(link)
                    i += 1
                    continue

            self._add_para(lineno, raw, rel)
            i += 1
        self._flush()
        if fence is not None:
            self._code(fence_start, n)

    def _add_para(self, lineno: int, raw: str, rel: str) -> None:
        if not self.para:
            self.para_depth = (len(self.list_stack), self.quote_depth)
            self.para_text = []
        self.para.append((lineno, raw))
        self.para_text.append(rel.strip())

    def _flush(self) -> None:
        if self.para:
            self._inline(self.para)
            self.para = []

    def _comments(self, text: str, lineno: int) -> None:
        for m in _HTML_COMMENT.finditer(text):
            sm = _SUPPRESS.match(m.group(1))
            if sm:
                rules = tuple(r for r in re.split(r"[\s,]+", sm.group(2).strip()) if r)
                line = lineno + text.count("\n", 0, m.start())
                self.note.suppressions.append(Suppression(sm.group(1), rules, line))

    def _inline(self, segments: list[tuple[int, str]], heading: bool = False) -> None:
        """Scan one paragraph (or heading) for links, tags and block ids."""
        if not segments:
            return
        text = "\n".join(t for _, t in segments)
        starts = []
        pos = 0
        for _, t in segments:
            starts.append(pos)
            pos += len(t) + 1

        masked = text
        if "`" in masked:
            masked = _mask_code_spans(masked)
        if "<!--" in masked:
            for m in _HTML_COMMENT.finditer(masked):
                sm = _SUPPRESS.match(m.group(1))
                if sm:
                    rules = tuple(r for r in re.split(r"[\s,]+", sm.group(2).strip()) if r)
                    line = segments[_seg_index(starts, m.start())][0]
                    self.note.suppressions.append(Suppression(sm.group(1), rules, line))
            masked = _HTML_COMMENT.sub(lambda m: _blank_out(m.group(0)), masked)
        if _PERCENT in masked:
            masked, opened = _mask_percent(masked)
            if opened:
                self.pending_percent = True
                self._code(segments[-1][0], segments[-1][0])
        if "<" in masked:
            masked = _AUTOLINK.sub(lambda m: _blank_out(m.group(0)), masked)

        note = self.note
        if "[" in masked:
            if "[[" in masked:
                pieces, last = [], 0
                for m in _WIKI.finditer(masked):
                    k = _seg_index(starts, m.start())
                    note.links.append(_wikilink(m, segments[k][0], m.start() - starts[k] + 1))
                    pieces.append(masked[last:m.start()])
                    pieces.append(" " * (m.end() - m.start()))
                    last = m.end()
                if pieces:
                    pieces.append(masked[last:])
                    masked = "".join(pieces)
            if "](" in masked:
                pieces, last = [], 0
                for m in _MDLINK.finditer(masked):
                    k = _seg_index(starts, m.start())
                    link = _markdown_link(m.group(3), m.group(2), bool(m.group(1)), segments[k][0],
                                          m.start() - starts[k] + 1, m.group(0))
                    if link is not None:
                        note.links.append(link)
                    pieces.append(masked[last:m.start()])
                    pieces.append(_blank_out(m.group(0)))
                    last = m.end()
                if pieces:
                    pieces.append(masked[last:])
                    masked = "".join(pieces)
        if "#" in masked:
            for m in _TAG.finditer(masked):
                body = m.group(1)
                if _ALL_DIGITS.match(body):
                    continue
                k = _seg_index(starts, m.start())
                note.tags.append(Tag(body, segments[k][0], m.start() - starts[k] + 1))
        if "^" in masked and not heading:
            for k, (lineno, _) in enumerate(segments):
                end = starts[k + 1] - 1 if k + 1 < len(starts) else len(masked)
                m = _BLOCK_ID.search(masked, starts[k], end)
                if m:
                    note.block_ids.setdefault(m.group(1).lower(), lineno)


def _starts_block(content: str) -> bool:
    s = content.lstrip()
    return bool(s) and (s[0] in "#>`~" or s.startswith("<!--") or bool(_THEMATIC.match(content)))


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
    out = []
    last = 0
    pos = 0
    while True:
        m = _BACKTICKS.search(text, pos)
        if not m:
            break
        run = m.group(0)
        # find a closing run of exactly the same length
        close = None
        k = m.end()
        while True:
            c = _BACKTICKS.search(text, k)
            if not c:
                break
            if len(c.group(0)) == len(run):
                close = c
                break
            k = c.end()
        if close is None:
            pos = m.end()
            continue
        out.append(text[last:m.start()])
        out.append(_blank_out(text[m.start():close.end()]))
        last = pos = close.end()
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


def _wikilink(m: re.Match, line: int, column: int) -> Link:
    inner = m.group(2).replace("\\|", "|")
    target, has_alias, alias = inner.partition("|")
    target, _, subpath = target.partition("#")
    return Link(
        kind=WIKI,
        target=target.strip(),
        subpath=subpath.strip(),
        alias=alias.strip() if has_alias else None,
        line=line,
        column=column,
        embed=bool(m.group(1)),
        raw=m.group(0),
    )


def _markdown_link(dest: str, text: str, embed: bool, line: int, column: int,
                   raw: str) -> Link | None:
    if dest.startswith("<") and dest.endswith(">"):
        dest = dest[1:-1]
    dest = re.sub(r"\\(.)", r"\1", dest).strip()
    if not dest:
        return None
    external = bool(_SCHEME.match(dest)) or dest.startswith("//")
    if external:
        return Link(MARKDOWN, dest, "", text or None, line, column, embed, raw, True)
    dest = unquote(dest)
    target, _, subpath = dest.partition("#")
    return Link(MARKDOWN, target.strip(), subpath.strip(), text or None, line, column, embed, raw)

"""The output boundary: everything vaultkit says passes here before it leaves the process.

A vault is untrusted text, and what vaultkit prints quotes it: an entry's title, a link's
target, a property's value, a file name, a commit's author and subject. Two things in that
text must never reach a terminal, a CI log, a committed baseline, a cache or an agent:

- **credentials**: every value :mod:`vaultkit.vault.secretscan` recognises is replaced by
  its masked form (``ghp_…5oQi``), whichever rule or tool quotes it;
- **control characters**: ESC (colours, cursor moves that hide lines, title changes,
  OSC 52 clipboard writes), the other C0 and C1 controls, DEL, a carriage return that is not
  part of a line break, and the bidirectional overrides that reorder what a reader sees
  (the "Trojan Source" characters) are shown as visible escapes (``\\u001b``, ``\\u202e``;
  the same text is a valid escape inside a JSON string, so JSON output stays JSON).
  Newline and tab are kept where the output has lines (a snippet, an excerpt); a one-line
  field (a message, a path, an author) shows them as ``\\n`` and ``\\t`` too.
- **workflow commands**: a GitHub Actions runner executes a line of a job's log that starts
  with ``::`` (after blanks) or holds ``##[`` anywhere: a note named ``::error …::x.md``
  would spoof an annotation, a heading ``##[stop-commands]x`` quoted in a message would
  switch command processing off. :func:`commands_off` shows the character that completes
  one as an escape (``:\\u003aerror``, ``##\\u005b``); only the lines vaultkit's own
  ``github`` format built (:func:`own_commands`) pass as they are. It needs to know where
  lines start, so it runs where whole outputs leave: :class:`Stream` (which follows the
  line across writes) and the ``-o FILE`` writers.

Who calls it: :class:`vaultkit.lint.diagnostics.Diagnostic` cleans its message when it is
made, and the writers clean what they write again (the report formats, the baseline, the
results cache, the HTML report, the MCP server's results, the command line's standard
output and error, and the memory tools' authors, subjects, file names and snippets). A rule
or a tool therefore cannot get around it: whatever it builds, the writer cleans.

Cost: a clean text (no control character, and neither a format prefix nor a keyword for
the detector's two prefilters) costs one regular-expression pass and
:func:`~vaultkit.vault.secretscan.has_candidates`; only text that holds a candidate is
scanned. Cleaning is idempotent: a masked form is not a credential, an escape is not a
control character.
"""

from __future__ import annotations

import re

from vaultkit.core.lazyre import lazy_re

# C0 controls but newline and tab, DEL, C1 controls, a lone CR, and the bidirectional
# embeddings, overrides and isolates (plus the marks and separators that act like them).
_CONTROL = "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e" \
    "\u2066-\u2069"
_UNSAFE_TEXT = lazy_re(f"[{_CONTROL}]|\r(?!\n)")
_UNSAFE_LINE = lazy_re(f"[{_CONTROL}\n\r\t]")
# JSON text: a string may hold any of these escaped (``\u001b``), losslessly
_UNSAFE_JSON = lazy_re(f"[{_CONTROL}]")


def _plainly_safe(text: str) -> bool:
    """True when ``text`` holds nothing ``_UNSAFE_TEXT`` matches, known without the pattern
    (a clean output never compiles it: its class past U+00FF builds a 65,536-entry map, in
    Python, when compiled). Every character it matches is one ``str.isprintable`` refuses;
    newline and tab, refused too but not matched, are taken out first; a carriage return is
    left to the pattern. False says nothing: the pattern decides."""
    return "\r" not in text and text.replace("\n", "").replace("\t", "").isprintable()
# The colours vaultkit itself prints (bold, dim, red, yellow, cyan, reset), and nothing else
_OWN_SGR = lazy_re(r"\x1b\[(?:0|1|2|31|33|36)m")


def _escape(m: re.Match) -> str:
    ch = m.group(0)
    code = ord(ch)
    if ch == "\n":
        return "\\n"
    if ch == "\t":
        return "\\t"
    if ch == "\r":
        return "\\r"
    return f"\\u{code:04x}"  # (also a valid escape inside a JSON string: the same character)


def neutralise(text: str, *, one_line: bool = False) -> str:
    """``text`` with every control character shown as a visible escape."""
    if not one_line and _plainly_safe(text):
        return text
    pattern = _UNSAFE_LINE if one_line else _UNSAFE_TEXT
    if pattern.search(text) is None:
        return text
    return pattern.sub(_escape, text)


def has_control(text: str) -> bool:
    """Whether ``text`` holds a character a one-line field shows as an escape (a control
    character, newline and tab included, or a bidirectional control)."""
    return _UNSAFE_LINE.search(text) is not None


def mask_credentials(text: str) -> str:
    """``text`` with each credential the detector finds replaced by its masked form (and a
    private key's body by ``…``)."""
    if text is _MASKED[0]:  # this very string came out of here: masking is idempotent
        return text
    from vaultkit.vault.secretscan import has_candidates

    out = _mask(text) if has_candidates(text) else text
    for _ in range(2):  # (what masking left may read as a token still: mask until it does not)
        if out is text:
            break
        text, out = out, _mask(out)
    if len(out) > 4096:  # (a report masked, then written to the terminal, is scanned once)
        _MASKED[0] = out
    return out


def mask_output(text: str) -> str:
    """:func:`mask_credentials` of a text written out whole (a report, a write to the
    terminal). While a command's output is verified (:class:`verified_texts`), a text
    scanned before and found holding nothing is not scanned again, and one scanned now
    and found so is added."""
    verified = _VERIFIED[0]
    if verified is None or text is _MASKED[0]:
        return mask_credentials(text)
    digest = verified.digest(text)
    if digest in verified:  # this exact text was scanned before and held nothing
        if len(text) > 4096:
            _MASKED[0] = text
        return text
    out = mask_credentials(text)
    if out is text:  # (nothing found: the very same string comes back)
        verified.add(digest)
    return out


_MASKED: list = [None]  # the last long text mask_credentials returned (kept: it is its id)
_VERIFIED: list = [None]  # the Verified texts of the command running (see verified_texts)


class Verified:
    """Texts a vault's output boundary scanned before and found holding nothing to mask,
    known by their SHA-256 digests: the ``outbound-verified`` entry of the vault's store.

    A warm ``check`` prints the very report it printed last time (1,300 lines on the
    10,000-note bench vault, whose file names hold words the detector's prefilters stop at:
    ``secret.md:``, ``risk-…``). Masking is a function of the text alone, so the same text
    is written without a second scan when its digest is listed; any other text (one byte
    changed, a credential planted in a cached message) is scanned as before. The entry
    holds digests only, under a header naming vaultkit's and the detector's versions (a
    new detector scans everything again); a damaged or foreign entry is ignored and
    replaced, and it is read and written only as the store is (never through a symlink).
    """

    NAME = "outbound-verified"  # its entry in the vault's store (vaultkit.vault.store)
    KEEP = 32  # digests kept, the newest first (a report, its summary, a few other outputs)
    _LIMIT = 8192  # bytes read at most: the header and KEEP digests fit in 2.2 KB

    def __init__(self, store):
        from vaultkit import __version__
        from vaultkit.vault import DETECTOR_VERSION

        self.store = store
        self.header = f"vaultkit {__version__} detector {DETECTOR_VERSION}"
        self.digests = self._read()
        self._known = set(self.digests)
        self.added = False

    def _read(self) -> list[str]:
        text = self.store.get(self.NAME, self._LIMIT)
        if not isinstance(text, str):
            return []
        lines = text.split("\n")
        if lines[0] != self.header:
            return []
        return [d for d in lines[1:self.KEEP + 1]
                if len(d) == 64 and not d.strip("0123456789abcdef")]

    @staticmethod
    def digest(text: str) -> str:
        from vaultkit.core.digests import sha256

        return sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    def __contains__(self, digest: str) -> bool:
        return digest in self._known

    def add(self, digest: str) -> None:
        if digest in self._known:
            return
        self._known.add(digest)
        self.digests.insert(0, digest)
        del self.digests[self.KEEP:]
        self.added = True

    def save(self) -> None:
        """Write the file when a text was added (a cache that cannot be written is no error)."""
        if not self.added:
            return
        import marshal

        data = marshal.dumps("\n".join([self.header, *self.digests, ""]))
        self.store.later(lambda: self.store.put(self.NAME, data))
        self.added = False


class verified_texts:  # noqa: N801 (used as a context manager, like contextlib's)
    """While it is entered, :func:`mask_output` skips the texts ``verified`` lists and adds
    those it scans and finds clean; on leaving, the list is saved. (The strings a writer
    cleans one by one, JSON's, are scanned as ever: only whole outputs are listed.) A list
    known only later (when the vault is opened) is given to :meth:`use`."""

    def __init__(self, verified: Verified | None):
        self.verified = verified

    def __enter__(self):
        self._outer = _VERIFIED[0]
        _VERIFIED[0] = self.verified
        return self

    def use(self, verified: Verified) -> None:
        if self.verified is not None:
            self.verified.save()
        self.verified = _VERIFIED[0] = verified

    def __exit__(self, *exc):
        _VERIFIED[0] = self._outer
        if self.verified is not None:
            self.verified.save()
        return False


# A control sequence as a terminal reads it (CSI, OSC, a two-byte escape) or a lone control:
# the detector reads the text with these blanked, as the terminal would show it (a value
# right after "\x1b[2J" starts a token there).
_SEQUENCE = lazy_re(f"(?:\x1b\\[|\x9b)[0-?]*[ -/]*[@-~]?|(?:\x1b\\]|\x9d)[^\x07\x1b\x9c]*"
                       f"(?:\x07|\x1b\\\\|\x9c)?|\x1b[ -~]?|[{_CONTROL}]")


def _mask(text: str) -> str:
    from vaultkit.vault.secretscan import _MAX_PER_LINE, scan_text

    if _UNSAFE_JSON.search(text) is None:
        found = _disjoint(scan_text(text))  # (a label's value may hold a token's span)
    else:  # read as a terminal would show it, and with each control a mere gap
        found = _disjoint(scan_text(_SEQUENCE.sub(lambda m: " " * len(m.group(0)), text))
                          + scan_text(_UNSAFE_JSON.sub(" ", text)))
    if not found:
        return text
    lines = text.split("\n")
    bodies: set[int] = set()
    per_line: dict[int, int] = {}
    for f in found:
        per_line[f.line] = per_line.get(f.line, 0) + 1
    for f in sorted(found, key=lambda f: (f.line, -f.column)):
        line = lines[f.line - 1]
        start = f.column - 1
        end = min(len(line), start + max(f.length, 1))
        while end > start + 1 and line[end - 1] == "\\":
            end -= 1  # never cut an escape in two (JSON text: ``\"``)
        lines[f.line - 1] = line[:start] + f.masked + line[end:]
        if f.kind == "private key":
            bodies.add(f.line)
    for first in bodies:  # the key's lines up to its END line (or the first other line)
        for i in range(first, len(lines)):
            stripped = lines[i].strip().lstrip(">").strip()
            if stripped.startswith("-----END"):
                break
            if not stripped or not _PEM_LINE.fullmatch(stripped):
                if stripped.lower().startswith(("proc-type", "dek-info")):
                    continue
                break
            lines[i] = lines[i].replace(stripped, "…")
    for line, count in per_line.items():
        if count >= _MAX_PER_LINE:  # the detector reports 64 a line: mask the rest too
            lines[line - 1] = _mask(lines[line - 1])
    return "\n".join(lines)


_PEM_LINE = lazy_re(r"[A-Za-z0-9+/=\\n]+")


def _disjoint(found: list) -> list:
    """Findings of two readings of one text without overlaps (the longer span wins)."""
    out: list = []
    for f in sorted(found, key=lambda f: (f.line, f.column, -f.length)):
        if out and out[-1].line == f.line and f.column < out[-1].column + out[-1].length:
            continue
        out.append(f)
    return out


def _settled(text: str, one_line: bool) -> str:
    """Mask, neutralise, and mask again what the neutralised text shows (``\\u009b:ghp_…``
    reads as a token once the control is an escape, not before)."""
    masked = mask_credentials(text)
    out = neutralise(masked, one_line=one_line)
    return out if out is masked else mask_credentials(out)


def clean(text: str) -> str:
    """Text with lines (a snippet, an excerpt, a report): credentials masked, control
    characters but newline and tab neutralised."""
    if not text:
        return text
    return _settled(text, False)


def clean_line(text: str) -> str:
    """A one-line field (a message, a path, a commit's author or subject, a heading):
    credentials masked, every control character (newline and tab too) neutralised."""
    if not text:
        return text
    return _settled(text, True)


def mask_values(text: str, values) -> str:
    """``text`` with each ``(value, masked)`` replaced by its masked form, also where only a
    piece of it (8 characters or more, as a quote cut short shows it) appears."""
    for value, masked in values:
        if len(value) < 6:
            continue
        if value in text:
            text = text.replace(value, masked)
            continue
        head = value[:8]
        at = text.find(head)
        while at != -1:
            end = at + len(head)
            while end < len(text) and end - at < len(value) and text[end] == value[end - at]:
                end += 1
            text = text[:at] + masked + text[end:]
            at = text.find(head, at + len(masked))
    return text


def one_line(text: str) -> str:
    """A one-line field made safe to hold until a writer masks it in one batch: unchanged
    when it has no control character (the common case: one C-speed search), else cleaned
    now (masked first: once a control becomes an escape such as ``\\u0007``, a value glued
    to it no longer reads as a credential)."""
    if not text or text.isprintable() or _UNSAFE_LINE.search(text) is None:
        return text
    return clean_line(text)


def clean_many(items, *, one_line: bool = False) -> list[str]:
    """Many strings cleaned at the cost of one prefilter pass when none holds a candidate."""
    from vaultkit.vault.secretscan import has_candidates

    items = list(items)
    if has_candidates("\n".join(items)):
        return [_settled(s, one_line) for s in items]
    return [neutralise(s, one_line=one_line) for s in items]


def clean_tree(value, *, one_line: bool = False):
    """A JSON-like value (dicts, lists, strings) with every string (keys too) cleaned."""
    strings: list[str] = []
    _collect(value, strings)
    if not strings:
        return value
    cleaned = iter(clean_many(strings, one_line=one_line))
    return _rebuild(value, cleaned)


def _collect(value, out: list) -> None:
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for k, v in value.items():
            _collect(k, out) if isinstance(k, str) else None
            _collect(v, out)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _collect(v, out)


def _rebuild(value, cleaned):
    if isinstance(value, str):
        return next(cleaned)
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            key = next(cleaned) if isinstance(k, str) else k
            out[key] = _rebuild(v, cleaned)
        return out
    if isinstance(value, (list, tuple)):
        return [_rebuild(v, cleaned) for v in value]
    return value


def json_safe(text: str) -> str:
    """Serialised JSON with the control characters ``json.dumps(ensure_ascii=False)`` leaves
    raw (DEL, C1, the bidirectional controls) written as ``\\uXXXX``: the same data, safe to
    ``cat``. (Outside strings JSON holds only ASCII, so every such character is in one.)"""
    if _UNSAFE_JSON.search(text) is None:
        return text
    return _UNSAFE_JSON.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


def dumps(value, **kwargs) -> str:
    """``json.dumps`` of ``value`` cleaned (credentials masked, strings' control characters
    escaped), never ASCII-only (CJK stays readable)."""
    import json

    kwargs.setdefault("ensure_ascii", False)
    return json_safe(json.dumps(clean_tree(value), **kwargs))


def terminal(text: str) -> str:
    """What may be written to a terminal or a log: credentials masked, control characters
    neutralised, except vaultkit's own colours (which :func:`clean` has already taken out
    of anything quoted from a vault) and a progress line's carriage return."""
    if not text:
        return text
    text = mask_output(text)
    if not _plainly_safe(text) and _UNSAFE_TEXT.search(text) is not None:
        if "\x1b" in text and _OWN_SGR.search(text):
            parts = _OWN_SGR.split(text)
            codes = _OWN_SGR.findall(text)
            out = [neutralise(parts[0])]
            for code, part in zip(codes, parts[1:]):
                out.append(code)
                out.append(neutralise(part))
            text = "".join(out)
        else:
            text = neutralise(text)
        text = mask_output(text)  # (what the escapes now show)
    return text


# What the Actions runner reads as a workflow command (actions/runner,
# ActionCommandManager.TryProcessCommand, checked on 2026-12-07): ActionCommand.TryParseV2,
# a line that starts with "::" after String.TrimStart(); else ActionCommand.TryParse, the
# older "##[" anywhere in the line. The runner reads its output line by line (\n, \r\n,
# \r). The blanks matched here are Python's whitespace (more than .NET trims) plus the
# zero-width space and BOM: one too many is harmless, one too few is not.
_LEAD = lazy_re(r"(?:[^\S\n\r]|[\u200b\ufeff])*")
_LINE_BREAK = lazy_re(r"(\r\n|\r|\n)")
_OWN_COMMANDS: list[frozenset] = [frozenset()]


def own_commands(text: str) -> str:
    """``text``, whose lines are the workflow commands vaultkit built itself (the ``github``
    format's annotations, their values escaped as GitHub documents): the only lines
    :func:`commands_off` lets through as they are, until another text is given (``""`` at
    the end of a command)."""
    _OWN_COMMANDS[0] = frozenset(text.split("\n")) if text else frozenset()
    return text


def commands_off(text: str, head: str = "\n") -> str:
    """``text`` with no line the Actions runner would execute as a workflow command, but
    vaultkit's own (:func:`own_commands`): the character that completes ``::`` at a line's
    start or ``##[`` is shown as its escape (``:\\u003a``, ``##\\u005b``), as control
    characters are. ``head`` is what the output's current line already holds, in the form
    :func:`line_head` gives (``"\\n"``: a line starts here)."""
    edge = head + text[:2]
    if "::" not in text and "##[" not in text and "::" not in edge and "##[" not in edge:
        return text
    own = _OWN_COMMANDS[0]
    pieces = _LINE_BREAK.split(text)  # lines and the breaks between them, alternately
    for i in range(0, len(pieces), 2):
        before = head if i == 0 else "\n"
        piece = pieces[i]
        if before == "\n" and piece in own:
            continue  # a line vaultkit's github format built, from its start
        line = before + piece
        if line[0] == "\n":
            lead = _LEAD.match(line, 1).end()
            # (":::" is no command: its name would start with ":", and none does; a
            # Markdown admonition fence, ":::note", is left as it is)
            if line.startswith("::", lead) and not line.startswith(":::", lead):
                line = line[:lead + 1] + "\\u003a" + line[lead + 2:]
        if "##[" in line:
            line = line.replace("##[", "##\\u005b")
        pieces[i] = line[len(before):]  # (before holds no whole command: it is unchanged)
    return "".join(pieces)


def line_head(head: str, written: str) -> str:
    """The ``head`` of :func:`commands_off` after ``written`` was written: all of the
    current line while it is blank or blank and one ``:``, else its last two characters
    (behind a marker that is no blank)."""
    if written.endswith("\n"):  # (most writes: a line, or print's own "\n")
        return "\n"
    cut = max(written.rfind("\n"), written.rfind("\r"))
    line = written[cut + 1:] if cut >= 0 else head[1:] + written
    rest = line[_LEAD.match(line).end():]
    if rest in ("", ":"):
        return "\n" + rest
    return "x" + line[-2:]


class Stream:
    """A text stream whose writes pass :func:`terminal` and then :func:`commands_off` (the
    command line's stdout/stderr); it follows the line being written across writes, since
    ``print`` writes its pieces one by one.

    Everything else (``isatty``, ``fileno``, ``encoding``, ``flush`` …) is the wrapped
    stream's. A progress line's ``\\r`` is written as is: it comes only from
    :mod:`vaultkit.core.progress`, whose text is vaultkit's own.
    """

    def __init__(self, stream):
        self._stream = stream
        self._head = "\n"  # the current line so far, as commands_off needs it

    def write(self, text: str) -> int:
        if text.startswith("\r") and _PROGRESS.fullmatch(text):
            self._head = line_head(self._head, text)
            return self._stream.write(text)
        out = commands_off(terminal(text), self._head)
        self._head = line_head(self._head, out)
        self._stream.write(out)
        return len(text)

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name):
        return getattr(self._stream, name)


# "\rparsing notes 1,200/10,000   " and the erasing "\r      \r"
_PROGRESS = lazy_re(r"\r[a-z ]*(?: [\d,]+/[\d,]+)? *\r?")

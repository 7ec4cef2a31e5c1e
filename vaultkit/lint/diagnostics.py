"""The one list every command reports: diagnostics, and the fixes some carry.

Whatever a rule quotes (a title, a link target, a property value) passes the output
boundary (:mod:`vaultkit.vault.outbound`): a message is one line without control characters
from the moment it is set, and :meth:`Diagnostic.to_dict` and every writer (the report
formats, the baseline, the results cache, MCP) mask credentials in what they write, in one
prefilter pass over all of it. No rule can put a credential or a terminal escape into any
report, baseline, cache or MCP result."""

from __future__ import annotations

from vaultkit.core.plain import Plain
from vaultkit.vault.outbound import one_line

# "info": a suggestion, shown but never failing a run (not even with --fail-on warning)
SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}


class Edit(Plain):
    """Replace ``text[start:end]`` of a note's decoded text with ``new``."""

    __slots__ = _fields = ("start", "end", "new")
    start: int
    end: int
    new: str

    def __init__(self, start, end, new):
        self.start = start
        self.end = end
        self.new = new


class Fix(Plain):
    """The edits that fix one finding, with what they do."""

    __slots__ = _fields = ("description", "edits")
    description: str
    edits: list[Edit]

    def __init__(self, description, edits):
        self.description = description
        self.edits = edits


class Diagnostic(Plain):
    """One finding: a rule's report about a place in a file."""

    __slots__ = _fields = ("rule", "code", "severity", "path", "line", "column", "message",
                           "fixable", "fix")
    _compare = ("rule", "code", "severity", "path", "line", "column", "message", "fixable")
    rule: str
    code: str
    severity: str
    path: str  # vault-relative, '/' separated
    line: int | None
    column: int | None
    message: str
    fixable: bool
    fix: Fix | None

    def __init__(self, rule, code, severity, path, line, column, message, fixable=False,
                 fix=None):
        self.rule = rule
        self.code = code
        self.severity = severity
        self.path = path
        self.line = line
        self.column = column
        self.message = message
        self.fixable = fixable
        self.fix = fix

    def sort_key(self):
        return (self.path, self.line or 0, self.column or 0, self.code)

    def to_dict(self) -> dict:
        return {
            "rule": self.rule,
            "code": self.code,
            "severity": self.severity,
            "path": one_line(self.path),
            "line": self.line,
            "column": self.column,
            "message": self.message,
            "fixable": self.fixable,
        }


def _guard_message(cls) -> None:
    """Every assignment of ``message`` (the constructor's too) passes :func:`one_line`:
    one line, no control character. The slot keeps the value; a property guards it."""
    slot = cls.__dict__["message"]

    def set_message(self, value):
        slot.__set__(self, one_line(value))

    cls.message = property(slot.__get__, set_message, doc="one line, no control character")


_guard_message(Diagnostic)

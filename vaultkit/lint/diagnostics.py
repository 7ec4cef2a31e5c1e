"""The one list every command reports: diagnostics, and the fixes some carry.

Whatever a rule quotes (a title, a link target, a property value) passes the output
boundary (:mod:`vaultkit.vault.outbound`): a message is one line without control characters
from the moment it is set, and :meth:`Diagnostic.to_dict` and every writer (the report
formats, the baseline, the results cache, MCP) mask credentials in what they write, in one
prefilter pass over all of it. No rule can put a credential or a terminal escape into any
report, baseline, cache or MCP result."""

from __future__ import annotations

from dataclasses import dataclass, field

from vaultkit.vault.outbound import one_line

# "info": a suggestion, shown but never failing a run (not even with --fail-on warning)
SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}


@dataclass(slots=True, repr=False)  # (never printed: faster to create)
class Edit:
    """Replace ``text[start:end]`` of a note's decoded text with ``new``."""

    start: int
    end: int
    new: str


@dataclass(slots=True, repr=False)  # (never printed: faster to create)
class Fix:
    """The edits that fix one finding, with what they do."""

    description: str
    edits: list[Edit]


@dataclass(slots=True, repr=False)  # (never printed: faster to create)
class Diagnostic:
    """One finding: a rule's report about a place in a file."""

    rule: str
    code: str
    severity: str
    path: str  # vault-relative, '/' separated
    line: int | None
    column: int | None
    message: str
    fixable: bool = False
    fix: Fix | None = field(default=None, compare=False)

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

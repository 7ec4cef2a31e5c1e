"""The one list every command reports: diagnostics, and the fixes some carry."""

from __future__ import annotations

from dataclasses import dataclass, field

# "info": a suggestion, shown but never failing a run (not even with --fail-on warning)
SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}


@dataclass(slots=True)
class Edit:
    """Replace ``text[start:end]`` of a note's decoded text with ``new``."""

    start: int
    end: int
    new: str


@dataclass(slots=True)
class Fix:
    description: str
    edits: list[Edit]


@dataclass(slots=True)
class Diagnostic:
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
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "message": self.message,
            "fixable": self.fixable,
        }

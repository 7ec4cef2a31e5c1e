"""Promote journal lines into MEMORY.md or a topic note: ``vaultkit promote`` and MCP
``memory_promote``.

The named lines are **copied**: the journal is append-only (``journal-append-only``
refuses a commit that drops its lines, ``watch`` puts them back), so the journal keeps
them and the promoted copy carries a reference to where it came from. They are appended
to the target under a dated heading, each after a marker naming its source line, in the
shape OpenClaw's dreaming gives its promotions (``## Promoted From Short-Term Memory
(DATE)``, ``<!-- openclaw-memory-promotion:KEY -->``), under vaultkit's own names::

    ## Promoted from the journal (2026-12-07)

    <!-- vaultkit-promoted:memory/2026-12-06.md:12 -->
    - Decision: Postgres over SQLite for the shop

The write is the one ``log`` makes (:func:`vaultkit.memory.journal.append_locked`): one
``O_APPEND`` write under the file's exclusive lock, confined, nothing else of the file
touched. What to write is decided under that lock, after reading the target, so
concurrent promoters serialise and the second finds the first's lines: a line whose text
is already in the target (anywhere, list and heading marks and spacing aside) or whose
source marker is there is skipped, never written twice. Nothing is written (exit 1) when
a promoted line holds a credential, or when the result would be cut by a runtime that
loads the target (:func:`vaultkit.vault.runtimes.contexts`, what ``vaultkit context``
shows) or take ``MEMORY.md`` over its ``memory-size`` budget.
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass, field
from pathlib import Path

from vaultkit.core.errors import VaultkitError
from vaultkit.memory.text import MARKER, MARKER_LINE, content, key

HEADING = "Promoted from the journal"
MAX_LINES = 100  # lines promoted at once: MEMORY.md holds distilled facts, not days
_SPEC = re.compile(r"^(?P<path>.+):(?P<lines>\d+(?:-\d+)?(?:,\d+(?:-\d+)?)*)$")
_RANGES = re.compile(r"^\d+(?:-\d+)?(?:,\d+(?:-\d+)?)*$")
_HEADING_LINE = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$")


@dataclass
class Source:
    path: str  # vault-relative journal
    lines: list[int]


@dataclass
class Promoted:
    source: str  # "memory/2026-12-06.md:12"
    text: str  # as written, without its list mark
    line: int | None = None  # its line in the target (None in a dry run's skipped lines)
    reason: str = ""  # why it was skipped

    def to_dict(self) -> dict:
        out = {"source": self.source, "line": self.line, "text": self.text}
        if self.reason:
            out["reason"] = self.reason
        return out


@dataclass
class PromoteResult:
    target: str  # vault-relative ('../MEMORY.md' above a memory-only vault)
    heading: str
    created: bool = False
    dry_run: bool = False
    promoted: list[Promoted] = field(default_factory=list)
    skipped: list[Promoted] = field(default_factory=list)
    written: str = ""  # the bytes appended (what a dry run would append), as text
    snapshot: str | None = None

    def to_dict(self) -> dict:
        return {"target": self.target, "heading": self.heading, "created": self.created,
                "dryRun": self.dry_run, "promoted": [p.to_dict() for p in self.promoted],
                "skipped": [p.to_dict() for p in self.skipped], "snapshot": self.snapshot}


class PromoteRefused(VaultkitError):
    """Nothing was written: a credential, or a result a runtime would cut (exit 1).
    ``kind`` is ``credential`` or ``budget``; ``details`` what a JSON answer adds."""

    def __init__(self, kind: str, message: str, **details):
        self.kind = kind
        self.details = details
        super().__init__(f"refused: {message}; nothing written")


class _NothingNew(VaultkitError):
    """Every named line is in the target already (raised under the lock: no write)."""


def parse_lines(spec: str, where: str) -> list[int]:
    """``12``, ``12-14``, ``12,15-16`` as line numbers, in order, each once."""
    if not _RANGES.match(spec):
        raise VaultkitError(f"{where}: lines are written N, N-M or a comma list of those "
                            "(memory/2026-12-06.md:12-14)")
    out: list[int] = []
    for part in spec.split(","):
        first, _, last = part.partition("-")
        a, b = int(first), int(last or first)
        if a < 1 or b < a:
            raise VaultkitError(f"{where}: {part}: lines are numbered from 1, the first of a "
                                "range before its last")
        if b - a + 1 > MAX_LINES:
            raise VaultkitError(f"{where}: {part}: at most {MAX_LINES} lines at once")
        out.extend(n for n in range(a, b + 1) if n not in out)
    if len(out) > MAX_LINES:
        raise VaultkitError(f"{where}: at most {MAX_LINES} lines at once")
    return out


def parse_source(spec: str) -> Source:
    """``memory/2026-12-06.md:12-14`` (a path, a colon, the lines)."""
    m = _SPEC.match(spec.strip())
    if not m:
        raise VaultkitError(f"{spec!r}: name the lines as FILE:LINES, e.g. "
                            "memory/2026-12-06.md:12 or memory/2026-12-06.md:12-14")
    return Source(m.group("path"), parse_lines(m.group("lines"), spec))


def _journal(root: Path, settings, requested: str) -> tuple[str, list[str]]:
    """``(vault path, lines)`` of a journal of the vault, read confined and bounded."""
    from vaultkit.core.bounded import read_regular
    from vaultkit.memory.get import confine

    rel, path = confine(root, settings, requested)
    if settings.profile.layer_of(rel) != "journal":
        raise VaultkitError(f"{requested}: not a journal (memory/YYYY-MM-DD.md); promote names "
                            "journal lines")
    try:
        data = read_regular(path, settings.profile.budgets.max_file_bytes, sole_link=True)
    except FileNotFoundError:
        raise VaultkitError(f"{requested}: no such journal") from None
    except OSError as exc:
        raise VaultkitError(f"{rel}: cannot be read: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise VaultkitError(f"{rel}: not valid UTF-8; nothing promoted") from None
    return rel, text.replace("\r\n", "\n").split("\n")


def _target(root: Path, settings, requested: str) -> tuple[str, Path, str]:
    """``(vault path, folder the write is confined to, path inside it)``."""
    from vaultkit.memory.get import confine
    from vaultkit.memory.memset import MEMORY_MD

    rel, path = confine(root, settings, requested)
    if settings.profile.layer_of(rel) == "journal":
        raise VaultkitError(f"--to {requested}: a journal; promote into MEMORY.md or a topic "
                            "note")
    if rel == MEMORY_MD and path.parent != root:  # beside a memory-only vault
        return "../" + MEMORY_MD, path.parent, MEMORY_MD
    if rel != MEMORY_MD and not path.is_file():
        # a topic note has its own frontmatter and title: made by its owner, not here
        raise VaultkitError(f"--to {requested}: no such note; create it first (its "
                            "frontmatter and title), then promote into it")
    return rel, root, rel


def promote(root: Path, settings, sources: list[Source], target: str = "MEMORY.md", *,
            dry_run: bool = False, allow_secret: bool = False,
            day: _dt.date | None = None) -> PromoteResult:
    """Copy the named journal lines into ``target`` (module docs). Raises
    :class:`PromoteRefused` (nothing written) for a credential or a cut result."""
    from vaultkit.memory.journal import append_locked
    from vaultkit.memory.memset import today

    if not sources:
        raise VaultkitError("name the journal lines to promote: FILE:LINES")
    rel, base, inner = _target(root, settings, target)
    picked: list[tuple[str, str, str]] = []  # (source, content, original line)
    for source in sources:
        path, lines = _journal(root, settings, source.path)
        for n in source.lines:
            if n > len(lines) or (n == len(lines) and lines[-1] == ""):
                raise VaultkitError(f"{path}:{n}: past the end of the journal "
                                    f"({len(lines) - (lines[-1] == '')} lines)")
            text = content(lines[n - 1])
            if not text:
                continue  # a blank line (or a bare mark) says nothing
            if "<!--" in text or "-->" in text:
                raise VaultkitError(f"{path}:{n}: holds an HTML comment mark; promote the "
                                    "lines around it")
            picked.append((f"{path}:{n}", text, lines[n - 1]))
    if not picked:
        raise VaultkitError("the named lines are blank: nothing to promote")
    if not allow_secret:
        from vaultkit.vault.secretscan import first_secret

        for where, _, line in picked:
            finding = first_secret(line)
            if finding is not None:
                from vaultkit.vault.secretscan import REFUSAL_ADVICE

                raise PromoteRefused(
                    "credential", f"{where} holds a {finding.describe()}; {REFUSAL_ADVICE}",
                    source=where, credential=finding.kind, masked=finding.masked)
    day = day or today(settings)
    heading = f"## {HEADING} ({day.isoformat()})"
    result = PromoteResult(rel, heading, dry_run=dry_run)
    limit = settings.profile.budgets.max_file_bytes

    def render(file) -> bytes:
        data = file.head(file.size) if file.size else b""
        try:
            old = data.decode("utf-8")
        except UnicodeDecodeError:
            raise VaultkitError(f"{rel}: not valid UTF-8; nothing written: convert it to "
                                "UTF-8 first") from None
        body = old.replace("\r\n", "\n")
        lines = body.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        have = {}  # key -> line
        marked = {}  # source -> line of its marker
        for number, line in enumerate(lines, 1):
            m = MARKER_LINE.match(line)
            if m:  # (the promoted line follows its marker)
                marked.setdefault(m.group("source"), number + 1)
            elif line.strip():
                have.setdefault(key(line), number)
        new: list[tuple[str, str]] = []
        for where, text, _ in picked:
            seen = marked.get(where) or have.get(key(text))
            if seen is None:
                seen = next((i for i, (w, t) in enumerate(new) if key(t) == key(text)), None)
                if seen is not None:
                    result.skipped.append(Promoted(where, text, None, "named twice"))
                    continue
                new.append((where, text))
            else:
                result.skipped.append(Promoted(where, text, seen, f"already in {rel} "
                                                                  f"(line {seen})"))
        if not new:
            raise _NothingNew("nothing new")
        out: list[str] = []
        if file.created:
            out += ["# MEMORY", ""] if inner.endswith("MEMORY.md") else []
        last_heading = next((ln for ln in reversed(lines) if _HEADING_LINE.match(ln)), None)
        if last_heading is None or last_heading.rstrip() != heading:
            if lines and lines[-1].strip():
                out.append("")
            out += [heading, ""]
        at = len(lines) + len(out)  # lines before the first marker
        for where, text in new:
            out += [f"<!-- {MARKER}:{where} -->", f"- {text}"]
            at += 2
            result.promoted.append(Promoted(where, text, at))
        added = file.newline.join(out) + file.newline
        result.written = added.replace(file.newline, "\n")
        result.created = file.created
        payload = (file.separator + added).encode("utf-8")
        _judge_budget(root, settings, rel, data, data + payload, file.created)
        return payload

    def too_big(size: int, current: int) -> str:
        return (f"{rel}: promoting ({size:,} bytes) would take it ({current:,} bytes) over "
                f"the {limit:,}-byte limit (budgets.max_file_bytes); nothing written")

    try:
        if dry_run:  # read as it is now, without opening it for writing (nor creating it)
            render(_as_read(base, inner, limit))
        else:
            append_locked(base, inner, rel, render, limit, too_big)
    except _NothingNew:
        pass
    return result


@dataclass
class _Read:
    """The target read for a dry run: what :class:`~vaultkit.memory.journal.Appending`
    gives the writer under the lock."""

    data: bytes
    newline: str
    separator: str

    @property
    def size(self) -> int:
        return len(self.data)

    @property
    def created(self) -> bool:
        return not self.data

    def head(self, n: int) -> bytes:
        return self.data[:n]


def _as_read(base: Path, inner: str, limit: int) -> _Read:
    from vaultkit.core.bounded import read_regular
    from vaultkit.core.confine import write_target

    try:
        data = read_regular(write_target(base, inner), limit, sole_link=True)
    except FileNotFoundError:
        data = b""
    except OSError as exc:
        raise VaultkitError(f"{inner}: cannot be read: {exc.strerror or exc}") from None
    head = data[:4096]
    crlf = b"\r\n" in head and head.count(b"\r\n") == head.count(b"\n")
    newline = "\r\n" if crlf else "\n"
    return _Read(data, newline, newline if data and not data.endswith(b"\n") else "")


def _judge_budget(root: Path, settings, rel: str, before: bytes, after: bytes,
                  created: bool) -> None:
    """Raise :class:`PromoteRefused` when ``after`` (the target as it would be) is cut by
    a detected runtime where ``before`` was not (or is cut more: a file it pushes out of
    a total limit too), or takes a bootstrap ``MEMORY.md`` over the ``memory-size``
    budget. The runtimes are simulated as ``vaultkit context`` and the
    ``bootstrap-truncation`` rule simulate them."""
    from vaultkit.memory.memset import MEMORY_MD

    if rel.rsplit("/", 1)[-1] == MEMORY_MD and rel in (MEMORY_MD, "../" + MEMORY_MD) \
            and len(after) > len(before) and _memory_size_on(settings):
        budget = settings.profile.budgets.memory_md_bytes
        if len(after) > budget:
            raise PromoteRefused(
                "budget", f"{rel} would be {len(after):,} bytes, over the {budget:,}-byte "
                f"budget by {len(after) - budget:,} (budgets.memory_md_bytes, the memory-size "
                "rule); prune or distil it first", runtime=None, limit=budget,
                unit="bytes", over=len(after) - budget)
    was = _loaded(root, settings, rel, None if created else before)
    now = _loaded(root, settings, rel, after)
    for k, (rc, piece) in now.items():
        lost_before = was[k][1].lost if k in was else 0
        if piece.lost > lost_before:
            unit = "bytes" if rc.unit == "bytes" else "chars"
            what = rel if piece.path == rel else f"{piece.path}, which {rel} would push out"
            source = f"; {rc.limits_source}" if rc.limits_source and rc.unit != "bytes" else ""
            raise PromoteRefused(
                "budget", f"{rc.label} would cut {what}: {piece.lost - lost_before:,} more "
                f"{unit} of it would not be loaded ({piece.reason}{source}); prune or distil "
                f"{rel} first, or promote into a topic note",
                runtime=rc.runtime, path=piece.path, limit=_limit_of(rc, piece),
                unit=unit, over=piece.lost - lost_before)


def _limit_of(rc, piece) -> int | None:
    """The limit that cuts ``piece``: the per-file one when it names it, else the total."""
    if rc.unit == "bytes" or "per-file" in piece.reason:
        return rc.per_file_max if rc.per_file_max is not None else rc.total_max
    return rc.total_max


def _memory_size_on(settings) -> bool:
    from vaultkit.lint.engine import select_rules

    return any(r.name == "memory-size" for r in select_rules(settings))


def _loaded(root: Path, settings, rel: str, data: bytes | None) -> dict:
    """``{(runtime, path): (context, piece)}`` of every detected runtime, with the target
    holding ``data`` (None: as the disk has it). Only the target is parsed; the runtimes
    read every other file themselves."""
    from vaultkit.vault.loader import Vault
    from vaultkit.vault.parse import parse_note
    from vaultkit.vault.runtimes import contexts

    notes: dict = {}
    external: dict = {}
    if data is not None:
        (external if rel.startswith("../") else notes)[rel] = parse_note(rel, data)
    vault = Vault(root, settings, notes, {}, [], external)
    return {(rc.runtime, p.path): (rc, p) for rc in contexts(vault) for p in rc.pieces}


def snapshot_after(root: Path, settings) -> tuple[str | None, str | None]:
    """``(commit, warning)``: a snapshot after a write, as MCP ``memory_log`` takes one
    (:mod:`vaultkit.vault.snapshots`); the write stands either way."""
    from vaultkit.vault.profile import ConfigError
    from vaultkit.vault.snapshots import open_store

    try:
        return open_store(root, settings, create=True).snapshot().commit, None
    except (VaultkitError, ConfigError, OSError) as exc:
        return None, f"no snapshot after the promotion: {exc}"

"""Move MEMORY.md lines into the archive note: ``vaultkit archive MEMORY.md:LINES``.

Pruning MEMORY.md by hand loses what is cut; this moves the named lines instead. Each goes,
as it was written (byte for byte: the model of loss, docs/snapshots.md, knows a line by
its text), to ``<memory folder>/archive/MEMORY-archive.md`` under a dated heading, after a
marker naming where it stood::

    ## Archived from MEMORY.md (2026-12-07)

    <!-- vaultkit-archived:MEMORY.md:12 left:3f9a0c41d2e7 -->
    - Staging is currently on v1.2

The hook's ``mass-deletion``, ``watch`` and ``history`` count lines written into another
memory file of the same change as moved, not lost, and the archive note is one (the
snapshots record the archive; the hook reads every Markdown file the commit stages). A
line's ``vaultkit-promoted`` marker (the line above it) moves with it, so ``promote`` and
``distill`` never read a marker whose line is gone.

Order and locks: MEMORY.md is held under the lock ``log`` and ``promote`` take for the
whole run; the archive note is appended first, through ``promote``'s writer
(:func:`vaultkit.memory.journal.append_locked`), and MEMORY.md rewritten after, atomically,
keeping every other byte (BOM, CRLF, the last line's newline or its absence). A crash in
between leaves a line in both files, never in neither; the run again appends nothing the
archive note holds already (as a multiset: each copy once) and only removes it from
MEMORY.md. Each marker also carries a digest of MEMORY.md as its run left it
(``left:…``): the same lines named again on exactly that MEMORY.md are that run repeated,
so they are skipped with a message, never the lines that have moved up into their numbers.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from vaultkit.core.errors import VaultkitError
from vaultkit.memory.text import MARKER_LINE

ARCHIVE_NOTE = "archive/MEMORY-archive.md"  # under the memory folder (the archive layer)
HEADING = "Archived from MEMORY.md"
MARKER = "vaultkit-archived"
# the marker: the line it was, and a digest of MEMORY.md as the run left it (a rerun)
_ARCHIVED = re.compile(r"^\s*<!--\s*" + MARKER + r":(?P<source>.+?):(?P<line>\d+)"
                       r"(?:\s+left:(?P<left>[0-9a-f]{12}))?\s*-->\s*$")
_HEADING_LINE = re.compile(r"^ {0,3}#{1,6}[ \t]")


class ArchiveRefused(VaultkitError):
    """Nothing was written: a line out of range or blank (exit 1)."""

    def __init__(self, message: str):
        super().__init__(f"refused: {message}; nothing written")


@dataclass
class Moved:
    line: int  # its number in MEMORY.md as read
    text: str  # the line as written there
    archive_line: int | None = None  # where the archive note holds it
    appended: bool = True  # False: the archive note held it already (a run cut short)
    reason: str = ""  # why it was skipped

    def to_dict(self) -> dict:
        from vaultkit.vault.outbound import mask_credentials

        out = {"line": self.line, "text": mask_credentials(self.text),
               "archiveLine": self.archive_line, "appended": self.appended}
        if self.reason:
            out["reason"] = self.reason
        return out


@dataclass
class MemoryArchiveResult:
    source: str  # "MEMORY.md", or "../MEMORY.md" above a memory-only vault
    archive: str  # the archive note, vault-relative
    heading: str
    dry_run: bool = False
    moved: list[Moved] = field(default_factory=list)
    skipped: list[Moved] = field(default_factory=list)
    index_updated: bool = False
    snapshot: str | None = None

    def to_dict(self) -> dict:
        return {"dryRun": self.dry_run, "source": self.source, "archive": self.archive,
                "heading": self.heading, "moved": [m.to_dict() for m in self.moved],
                "skipped": [m.to_dict() for m in self.skipped],
                "indexUpdated": self.index_updated, "snapshot": self.snapshot}


def archive_note(settings) -> str:
    return settings.profile.memory_prefix + ARCHIVE_NOTE


def _split(text: str) -> list[str]:
    """The lines of ``text`` with their own line ending (only ``\\n`` ends a line, as
    ``promote`` and the notes count them)."""
    return [p for p in re.split(r"(?<=\n)", text) if p]


def _bare(piece: str) -> str:
    return piece[:-2] if piece.endswith("\r\n") else piece[:-1] if piece.endswith("\n") \
        else piece


def _memory(root: Path, settings, requested: str) -> tuple[str, Path, str]:
    """``(shown path, folder the write is confined to, path inside it)`` of MEMORY.md."""
    from vaultkit.memory.get import confine
    from vaultkit.memory.memset import MEMORY_MD

    rel, path = confine(root, settings, requested)
    if rel != MEMORY_MD:
        raise VaultkitError(f"{requested}: archive names MEMORY.md lines (MEMORY.md:12); "
                            "journals are archived whole by `vaultkit archive`")
    if path.parent != root:  # beside a memory-only vault
        return "../" + MEMORY_MD, path.parent, MEMORY_MD
    return MEMORY_MD, root, MEMORY_MD


def archive_lines(root: Path, settings, requested: str, numbers: list[int], *,
                  dry_run: bool = False, day=None) -> MemoryArchiveResult:
    """Move lines ``numbers`` of MEMORY.md into the archive note (module docs). Raises
    :class:`ArchiveRefused` (nothing written) for a line out of range or blank."""
    from vaultkit.memory.memset import today

    shown, base, inner = _memory(root, settings, requested)
    day = day or today(settings)
    result = MemoryArchiveResult(shown, archive_note(settings),
                                 f"## {HEADING} ({day.isoformat()})", dry_run=dry_run)
    limit = settings.profile.budgets.max_file_bytes
    if dry_run:
        data = _read(base, inner, shown, limit)
        _plan(result, data, _archive_text(root, result.archive, limit), numbers)
        return result
    with _locked(base, inner, shown, limit) as data:
        moves = _plan(result, data, _archive_text(root, result.archive, limit), numbers)
        if not moves:
            return result
        # First the archive note, then MEMORY.md: a crash between leaves a line twice
        after = _without(data, moves)
        _append(root, result, moves, limit, _digest(after))
        _rewrite(base, inner, after)
    # INDEX.md lists the archive: stale once the note is new, and index-stale would block
    # the commit of the move
    result.index_updated = _refresh_index(root, settings)
    return result


def _decode(data: bytes, shown: str) -> tuple[bool, str]:
    bom = data.startswith(b"\xef\xbb\xbf")
    try:
        return bom, data[3 if bom else 0:].decode("utf-8")
    except UnicodeDecodeError:
        raise VaultkitError(f"{shown}: not valid UTF-8; nothing written") from None


def _plan(result: MemoryArchiveResult, data: bytes, archive: str,
          numbers: list[int]) -> list[tuple[int, list[int], list[str]]]:
    """Fill ``result`` and return ``(line number, numbers to remove, their texts)`` per
    move, the texts as written in MEMORY.md (a promotion marker above the line included)."""
    _, text = _decode(data, result.source)
    pieces = _split(text)
    lines = [_bare(p) for p in pieces]
    held = Counter(_bare(p) for p in _split(archive))
    # The same command again on the MEMORY.md it left: its lines are gone already, and the
    # numbers now name the lines that moved up, which nobody chose
    ran = _runs(archive).get(_digest(data))
    if ran is not None and ran == set(numbers):
        for n in sorted(numbers):
            result.skipped.append(Moved(n, lines[n - 1] if n <= len(lines) else "", None,
                                        False, f"already archived: the same lines were moved "
                                        f"by a run that left {result.source} as it is now "
                                        "(the line there now moved up)"))
        return []
    moves = []
    for n in sorted(numbers):
        line = lines[n - 1] if n <= len(lines) else None
        if line is None:
            raise ArchiveRefused(f"{result.source}:{n}: past the end of {result.source} "
                                 f"({len(lines)} lines)")
        if not line.strip():
            raise ArchiveRefused(f"{result.source}:{n}: a blank line; name the lines to move")
        group = [n]
        if n > 1 and (n - 1) not in numbers and MARKER_LINE.match(lines[n - 2]):
            group = [n - 1, n]  # its promotion marker goes with it
        moves.append((n, group))
    out = []
    for n, group in moves:
        texts = [lines[i - 1] for i in group]
        appended = all(held[t] > 0 for t in texts)
        for t in texts:
            if held[t] > 0:
                held[t] -= 1
        result.moved.append(Moved(n, lines[n - 1], None, not appended))
        out.append((n, group, texts))
    return out


def _digest(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()[:12]


def _runs(archive: str) -> dict[str, set[int]]:
    """``{digest of MEMORY.md as a run left it: the line numbers that run moved}``."""
    out: dict[str, set[int]] = {}
    for piece in _split(archive):
        m = _ARCHIVED.match(_bare(piece))
        if m and m.group("left"):
            out.setdefault(m.group("left"), set()).add(int(m.group("line")))
    return out


def _append(root: Path, result: MemoryArchiveResult, moves, limit: int, left: str) -> None:
    from vaultkit.memory.journal import append_locked

    rel = result.archive
    by_line = {m.line: m for m in result.moved}

    def render(file) -> bytes:
        data = file.head(file.size) if file.size else b""
        _, old = _decode(data, rel)
        lines = [_bare(p) for p in _split(old)]
        held = Counter(lines)  # read again under the note's own lock
        out: list[str] = []
        if file.created:
            out += ["# MEMORY.md archive", ""]
        last = next((ln for ln in reversed(lines) if _HEADING_LINE.match(ln)), None)
        at = len(lines)
        for n, _, texts in moves:
            m = by_line[n]
            if all(held[t] > 0 for t in texts):
                for t in texts:
                    held[t] -= 1
                m.appended = False
                m.archive_line = lines.index(m.text) + 1 if m.text in lines else None
                continue
            if last is None or last.rstrip() != result.heading:
                if (lines or out) and (out[-1] if out else lines[-1]).strip():
                    out.append("")
                out += [result.heading, ""]
                last = result.heading
            out.append(f"<!-- {MARKER}:{result.source}:{n} left:{left} -->")
            out += texts
            m.appended = True
            m.archive_line = at + len(out)
        if not out:
            return b""
        return (file.separator + file.newline.join(out) + file.newline).encode("utf-8")

    def too_big(size: int, current: int) -> str:
        return (f"{rel}: archiving ({size:,} bytes) would take it ({current:,} bytes) over "
                f"the {limit:,}-byte limit (budgets.max_file_bytes); nothing written")

    append_locked(root, rel, rel, render, limit, too_big)


def _refresh_index(root: Path, settings) -> bool:
    """Regenerate INDEX.md when the vault has one (as the journals' archive does)."""
    from vaultkit.links.indexgen import index_path, write_index
    from vaultkit.vault.loader import load_vault

    vault = load_vault(root, root=root, settings=settings)
    if not (root / index_path(vault)).exists():
        return False
    return write_index(vault)


def _without(data: bytes, moves) -> bytes:
    """MEMORY.md's bytes without the moved lines, every other byte kept."""
    bom, text = _decode(data, "MEMORY.md")
    pieces = _split(text)
    gone = {i for _, group, _ in moves for i in group}
    kept = [p for i, p in enumerate(pieces, 1) if i not in gone]
    if kept and pieces and not pieces[-1].endswith("\n") and len(pieces) in gone:
        # the last line went, and it had no newline: neither has the new last line
        kept[-1] = _bare(kept[-1])
    return (b"\xef\xbb\xbf" if bom else b"") + "".join(kept).encode("utf-8")


def _rewrite(base: Path, inner: str, data: bytes) -> None:
    from vaultkit.core.atomic import write_atomic

    write_atomic(base / inner, data, root=base)


def _read(base: Path, inner: str, shown: str, limit: int) -> bytes:
    from vaultkit.core.bounded import read_regular
    from vaultkit.core.confine import write_target

    try:
        return read_regular(write_target(base, inner), limit, sole_link=True)
    except FileNotFoundError:
        raise VaultkitError(f"{shown}: no such file") from None
    except OSError as exc:
        raise VaultkitError(f"{shown}: cannot be read: {exc.strerror or exc}") from None


def _archive_text(root: Path, rel: str, limit: int) -> str:
    try:
        data = _read(root, rel, rel, limit)
    except VaultkitError:
        if not (root / rel).exists():
            return ""
        raise
    return _decode(data, rel)[1]


class _locked:
    """Hold MEMORY.md's lock (the one ``log`` and ``promote`` take) and yield its bytes."""

    def __init__(self, base: Path, inner: str, shown: str, limit: int):
        self.args = base, inner, shown, limit
        self.fd = None

    def __enter__(self) -> bytes:
        import fcntl

        from vaultkit.core.bounded import read_open
        from vaultkit.core.confine import write_target

        base, inner, shown, limit = self.args
        path = write_target(base, inner)
        try:
            self.fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
        except FileNotFoundError:
            raise VaultkitError(f"{shown}: no such file") from None
        except OSError as exc:
            raise VaultkitError(f"{shown}: cannot be opened: {exc.strerror or exc}") from None
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX)
            held = os.fstat(self.fd)
            now = os.stat(path, follow_symlinks=False)
            if (held.st_dev, held.st_ino) != (now.st_dev, now.st_ino) or held.st_nlink > 1:
                raise VaultkitError(f"{shown}: replaced while archive ran (or has other hard "
                                    "links); nothing written, run it again")
            if held.st_size > limit:
                raise VaultkitError(f"{shown}: over the {limit:,}-byte limit "
                                    "(budgets.max_file_bytes); nothing written")
            return read_open(self.fd)
        except BaseException:
            os.close(self.fd)
            self.fd = None
            raise

    def __exit__(self, *exc) -> None:
        if self.fd is not None:
            os.close(self.fd)

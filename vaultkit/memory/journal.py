"""Append entries to the daily journal, the way ``printf >>`` does, only safer.

One entry is one ``write(2)`` on a descriptor opened with ``O_APPEND``, made while
holding an exclusive ``flock`` on the journal, so concurrent writers (heartbeat,
cron, a person) never interleave or lose a line, and nothing already in the file is
ever rewritten. The file is created with its ``# YYYY-MM-DD`` heading; a file whose
last line lacks its newline gets one at the front of the same write. CRLF journals
get CRLF entries.
"""

from __future__ import annotations

import datetime as _dt
import fcntl
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from vaultkit.core.errors import VaultkitError

_TIME = re.compile(r"^([01]?\d|2[0-3]):([0-5]\d)$")
DASH = "\u2014"  # the seeds' "### 14:30 — Title"


@dataclass
class LogResult:
    path: str  # vault-relative
    created: bool
    line: int  # line of the entry's heading
    heading: str
    warnings: list[str] = field(default_factory=list)
    end: int = 0  # last line of the entry as written

    def to_dict(self) -> dict:
        return {"path": self.path, "line": self.line, "heading": self.heading,
                "created": self.created, "warnings": self.warnings}


def parse_when(settings, date: str | None, time: str | None) -> tuple[_dt.date, str]:
    from vaultkit.memory.memset import vault_zone

    now = _dt.datetime.now(vault_zone(settings))
    day = now.date()
    if date is not None:
        try:
            day = _dt.date.fromisoformat(date)
            if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", date):
                raise ValueError
        except ValueError:
            raise VaultkitError(f"--date {date!r}: not a calendar date written "
                                "YYYY-MM-DD") from None
    hhmm = now.strftime("%H:%M")
    if time is not None:
        m = _TIME.match(time.strip())
        if not m:
            raise VaultkitError(f"--time {time!r}: not a time written HH:MM (00:00 to 23:59)")
        hhmm = f"{int(m.group(1)):02d}:{m.group(2)}"
    return day, hhmm


def split_text(text: str, title: str | None) -> tuple[str, list[str]]:
    """``(title, body lines)``: without ``--title`` the first non-blank line is the title."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    while lines and not lines[0].strip():
        lines.pop(0)
    if title is None:
        if not lines:
            raise VaultkitError("nothing to log: give a text, or --title, or pipe text with '-'")
        title = lines.pop(0).strip().lstrip("#").strip()
        while lines and not lines[0].strip():
            lines.pop(0)
    title = " ".join(title.split())
    if not title:
        raise VaultkitError("the entry needs a title (--title, or a first line of text)")
    return title, [ln.rstrip() for ln in lines]


def render_entry(hhmm: str, title: str, body: list[str], newline: str = "\n",
                 level: int = 3) -> str:
    """``\\n### HH:MM — Title\\n\\nbody\\n`` (the seeds' printf shape); ``level`` is
    the heading level of the journal's own entries (``##`` in most real journals)."""
    parts = ["", f"{'#' * level} {hhmm} {DASH} {title}"]
    if body:
        parts += [""] + body
    return newline.join(parts) + newline


class EntryRefused(VaultkitError):
    """The entry is one ``check`` would report (too long, only filler): nothing was written
    (``log`` exits 1). ``rule`` names the rule."""

    def __init__(self, rule: str, message: str):
        self.rule = rule
        super().__init__(f"refused: {message}; nothing written")


_MARKER = re.compile(r"^\s*(?:>\s*)*(?:(?:[-*+]|\d+[.)])\s+)?(?:\[[ xX]\]\s+)?")


def shape_entry(settings, level: int, hhmm: str, title: str,
                body: list[str]) -> tuple[str, list[str], list[str]]:
    """``(title, body, warnings)`` as the entry is written, judged by the entry rules
    exactly as ``check`` will judge it (:mod:`vaultkit.vault.entries`):

    - a text that says too little as a heading and a body (``Deploy`` / ``Done.``) is
      written as one line, the heading form of a log line (``14:30 — Deploy: Done.``),
      which ``entry-too-short`` never reports;
    - an entry over ``budgets.entry_max_lines`` (``entry-too-long``) or holding only filler
      (``filler-entry``) raises :class:`EntryRefused`: split it, move the detail to a
      topic note, or skip it.
    """
    from vaultkit.vault.entries import entries, says_too_little
    from vaultkit.vault.parse import parse_note
    from vaultkit.vault.phrases import matcher

    budgets = settings.profile.budgets
    warnings: list[str] = []
    if says_too_little(f"{hhmm} {DASH} {title}", body, budgets):
        said = "; ".join(_MARKER.sub("", ln).strip() for ln in body if ln.strip())
        sep = " " if title[-1:] in ":：.。!?！？;；" else ": "
        title, body = f"{title}{sep}{said}", []
    heading_line = f"{'#' * level} {hhmm} {DASH} {title}"
    text = "# day\n\n" + heading_line + "\n\n" + "\n".join(body) + "\n"
    note = parse_note("memory/entry.md", text.encode("utf-8"))
    found = entries(note, level)
    if not found:
        return title, body, warnings
    entry = found[0]
    if any(h.level <= level and h.line > entry.start for h in note.headings):
        warnings.append(f"the text holds headings of level 1-{level}; they end this entry and "
                        f"start another section (use '{'#' * (level + 1)}' or plain lines)")
    n = entry.nonblank
    if n > budgets.entry_max_lines:
        raise EntryRefused("entry-too-long", f"the entry has {n} lines, over the limit of "
                           f"{budgets.entry_max_lines} (budgets.entry_max_lines) the seeds set "
                           "for an entry: log it as several entries, or put the detail in "
                           "a topic note and log a line that links it")
    filler = matcher(settings.profile.phrases.filler)
    from vaultkit.memory.distill import is_filler

    if filler and is_filler(filler, entry):
        raise EntryRefused("filler-entry", "the entry holds only filler; skip it when there "
                           "is nothing worth recording")
    return title, body, warnings


class SecretRefused(VaultkitError):
    """The entry holds a credential: nothing was written (``log`` exits 1)."""

    def __init__(self, finding):
        from vaultkit.vault.secretscan import REFUSAL_ADVICE

        self.finding = finding
        super().__init__(f"refused: the entry holds a {finding.describe()}; {REFUSAL_ADVICE}; "
                         "nothing written")


def append_entry(root: Path, settings, *, text: str, title: str | None = None,
                 date: str | None = None, time: str | None = None,
                 allow_secret: bool = False) -> LogResult:
    """Append one entry to ``memory/<date>.md``; returns where it went and any warnings.

    Raises :class:`SecretRefused`, writing nothing, when the text or title holds a
    credential (see :mod:`vaultkit.vault.secretscan`), unless ``allow_secret``.
    """
    day, hhmm = parse_when(settings, date, time)
    for part in (text, title or ""):
        if "\x00" in part:  # one NUL would make the whole day's journal unreadable
            raise VaultkitError("the entry contains a NUL byte; nothing written")
        try:
            part.encode("utf-8")
        except UnicodeEncodeError:  # bytes that were not UTF-8 on standard input
            raise VaultkitError("the entry is not valid UTF-8 text; nothing written") from None
    limit = settings.profile.budgets.max_file_bytes
    if len(text) + len(title or "") > limit:  # (characters: at most the bytes, so cheap)
        raise VaultkitError(f"the entry is over the {limit:,}-byte limit of a journal "
                            "(budgets.max_file_bytes); nothing written: shorten it, or put "
                            "the detail in a note and link it")
    if not allow_secret:
        from vaultkit.vault.secretscan import first_secret

        finding = first_secret(f"{title or ''}\n{text}")
        if finding is not None:
            raise SecretRefused(finding)
    title, body = split_text(text, title)
    rel = f"{settings.profile.memory_prefix}{day.isoformat()}.md"
    made: dict = {}

    def render(target: "Appending") -> bytes:
        prefix = f"# {day.isoformat()}\n" if target.created else ""
        # read under the lock; a journal with no entry yet takes its neighbours' level
        level = _entry_level(target.head(1 << 20), rel, (root / rel).parent)
        if not target.created:
            made["lines_before"] = _count_lines(target.fd, target.size, rel)
            prefix = target.separator
        # written only as `check` accepts it: too little becomes one line, too long or
        # filler is refused (EntryRefused, under the lock: nothing written)
        shaped, lines, made["warnings"] = shape_entry(settings, level, hhmm, title, body)
        made["heading"] = f"{'#' * level} {hhmm} {DASH} {shaped}"
        made["body"] = lines
        return (prefix + render_entry(hhmm, shaped, lines, target.newline, level)).encode("utf-8")

    def too_big(data: int, size: int) -> str:  # past the limit the day's journal is unreadable
        return (f"{rel}: the entry ({data:,} bytes) would take the journal ({size:,} bytes) "
                f"over the {limit:,}-byte limit (budgets.max_file_bytes); nothing written: "
                "shorten it, or put the detail in a note and link it")

    created = append_locked(root, rel, rel, render, limit, too_big)
    # the entry opens with a blank line; a missing final newline only completes the last line
    line = made.get("lines_before", 0) + (1 if created else 0) + 2
    return LogResult(rel, created, line, made["heading"], made["warnings"],
                     line + (1 + len(made["body"]) if made["body"] else 0))


@dataclass
class Appending:
    """The file an :func:`append_locked` writer is about to append to, read under its lock."""

    fd: int
    size: int
    newline: str  # "\r\n" in a CRLF file
    separator: str  # the newline that completes a last line without one, else ""

    @property
    def created(self) -> bool:
        return self.size == 0

    def head(self, n: int) -> bytes:
        return os.pread(self.fd, n, 0)


def append_locked(base: Path, inner: str, rel: str, render, limit: int, too_big) -> bool:
    """Append ``render(Appending)`` to ``base/inner`` (shown as ``rel``) in one locked
    ``O_APPEND`` write: the one writer of ``log``, ``recover`` and MCP ``memory_log``.

    The file and its folders are confined to ``base`` (:mod:`vaultkit.core.confine`: no
    symlink out of the vault or into ``.git/``, no FIFO or device, no file with other hard
    links); it is created when missing. Nothing is written when the file would go over
    ``limit`` bytes (``budgets.max_file_bytes``: past it the file is unreadable):
    VaultkitError with ``too_big(bytes to append, current size)``. A partial write (disk
    full, a signal) is taken back under the lock; a file created for an append that was
    refused is removed. Returns whether the file was empty (created).
    """
    from vaultkit.core.confine import make_folders, open_append, write_target

    make_folders(base, (base / inner).parent)
    path = write_target(base, inner)
    fd = open_append(path, rel)
    created = False
    try:
        size = os.fstat(fd).st_size
        created = size == 0
        newline, separator = "\n", ""
        if size:
            head = os.pread(fd, 4096, 0)
            if b"\r\n" in head and head.count(b"\r\n") == head.count(b"\n"):
                newline = "\r\n"
            if os.pread(fd, 1, size - 1) != b"\n":
                separator = newline
        data = render(Appending(fd, size, newline, separator))
        if size + len(data) > limit:
            raise VaultkitError(too_big(len(data), size))
        view = memoryview(data)
        try:
            while view:  # one write(2) for a regular file; the loop only guards a short write
                view = view[os.write(fd, view):]
        except BaseException:  # still locked: take back a partial write (disk full, signal)
            os.ftruncate(fd, size)
            if created:
                os.unlink(path)
            raise
        fcntl.flock(fd, fcntl.LOCK_UN)  # the write is in; others may append while we sync
        os.fsync(fd)
    except OSError as exc:
        raise VaultkitError(f"{rel}: cannot append: {exc.strerror or exc}") from None
    except VaultkitError:
        if created:  # (an empty file made for an append that was refused)
            try:
                os.unlink(path)
            except OSError:
                pass
        raise
    finally:
        os.close(fd)  # closing also releases the lock on every error path
    return created


def _entry_level(data: bytes, rel: str, folder: Path | None = None) -> int:
    """The heading level the journal's entries already use: ``##`` when the file carries
    its entries at level 2 (most real journals), else the seeds' ``###``. An entry at
    another level would be read as part of the entry above it. A journal with no entry yet
    (new, or only its title) takes the level of the latest other journal in ``folder``."""
    from vaultkit.vault.entries import detect_level
    from vaultkit.vault.parse import parse_note

    level = detect_level(parse_note(rel, data)) if data else None
    if level is None and folder is not None:
        return workspace_entry_level(folder, rel.rsplit("/", 1)[-1])
    return 2 if level == 2 else 3


_JOURNAL_NAME = re.compile(r"^\d{4}-\d{2}-\d{2}\.md$")


def workspace_entry_level(folder: Path, exclude: str = "") -> int:
    """The entry level (2 or 3) of the latest journal in ``folder`` that has entries (the
    three latest are looked at), for a journal that has none yet: ``log`` creating a day's
    journal, ``init`` writing its first entry, ``recover`` into a journal with no entry."""
    from vaultkit.core.bounded import read_regular
    from vaultkit.vault.entries import detect_level
    from vaultkit.vault.parse import parse_note

    try:
        names = sorted((n for n in os.listdir(folder) if _JOURNAL_NAME.match(n)
                        and n != exclude), reverse=True)
    except OSError:
        return 3
    for name in names[:3]:
        try:
            data = read_regular(folder / name, 1 << 20)
        except OSError:
            continue
        level = detect_level(parse_note(name, data))
        if level is not None:
            return 2 if level == 2 else 3
    return 3


def _count_lines(fd: int, size: int, rel: str = "") -> int:
    """Lines in the file (a last line without its newline counts).

    Raises VaultkitError when the file is not UTF-8: appending UTF-8 to it would make a
    file in two encodings that no reader decodes.
    """
    import codecs

    decoder = codecs.getincrementaldecoder("utf-8")()
    count = 0
    offset = 0
    last = b"\n"
    try:
        while offset < size:
            chunk = os.pread(fd, min(1 << 20, size - offset), offset)
            if not chunk:
                break
            decoder.decode(chunk)
            count += chunk.count(b"\n")
            last = chunk[-1:]
            offset += len(chunk)
        decoder.decode(b"", final=True)
    except UnicodeDecodeError as exc:
        raise VaultkitError(f"{rel}: not valid UTF-8 (near byte {offset + exc.start + 1:,}); "
                            "nothing appended: convert the file to UTF-8 first") from None
    return count + (0 if last == b"\n" else 1)

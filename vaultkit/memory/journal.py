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
                           f"{budgets.entry_max_lines} (budgets.entry_max_lines) that `check` "
                           "holds journals to: log it as several entries, or put the detail in "
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
    path = root / rel
    from vaultkit.core.confine import make_folders, write_target

    # the real journal: no symlink (out of the vault, to NOW.md, to .git/config), no folder
    # symlinked out or into .git/
    make_folders(root, path.parent)
    path = write_target(root, rel)
    fd = _open_locked(path, rel)
    try:
        size = os.fstat(fd).st_size
        created = size == 0
        newline = "\n"
        prefix = ""
        lines_before = 0
        level = 3
        if created:
            prefix = f"# {day.isoformat()}\n"
        else:
            level = _entry_level(os.pread(fd, 1 << 20, 0), rel)  # read under the lock
            head = os.pread(fd, 4096, 0)
            if b"\r\n" in head and head.count(b"\r\n") == head.count(b"\n"):
                newline = "\r\n"
            last = os.pread(fd, 1, size - 1)
            if last != b"\n":
                prefix = newline
            lines_before = _count_lines(fd, size, rel)
        title, body, warnings = shape_entry(settings, level, hhmm, title, body)
        heading_line = f"{'#' * level} {hhmm} {DASH} {title}"
        data = (prefix + render_entry(hhmm, title, body, newline, level)).encode("utf-8")
        if size + len(data) > limit:  # past the limit the whole day's journal is unreadable
            raise VaultkitError(
                f"{rel}: the entry ({len(data):,} bytes) would take the journal "
                f"({size:,} bytes) over the {limit:,}-byte limit (budgets.max_file_bytes); "
                "nothing written: shorten it, or put the detail in a note and link it")
        view = memoryview(data)
        try:
            while view:  # one write(2) for a regular file; the loop only guards a short write
                written = os.write(fd, view)
                view = view[written:]
        except BaseException:  # still locked: take back a partial entry (disk full, signal)
            os.ftruncate(fd, size)
            if created:
                os.unlink(path)
            raise
        fcntl.flock(fd, fcntl.LOCK_UN)  # the write is in; others may append while we sync
        os.fsync(fd)
    except OSError as exc:
        raise VaultkitError(f"{rel}: cannot append: {exc.strerror or exc}") from None
    except VaultkitError:
        if created:  # (an empty journal made for an entry that was refused)
            try:
                os.unlink(path)
            except OSError:
                pass
        raise
    finally:
        os.close(fd)  # closing also releases the lock on every error path
    # the entry opens with a blank line; a missing final newline only completes the last line
    line = lines_before + (1 if created else 0) + 2
    return LogResult(rel, created, line, heading_line, warnings,
                     line + (1 + len(body) if body else 0))


def _entry_level(data: bytes, rel: str) -> int:
    """The heading level the journal's entries already use: ``##`` when the file carries
    its entries at level 2 (most real journals), else the seeds' ``###``. An entry at
    another level would be read as part of the entry above it."""
    from vaultkit.vault.entries import detect_level
    from vaultkit.vault.parse import parse_note

    return 2 if detect_level(parse_note(rel, data)) == 2 else 3


def _open_locked(path: Path, rel: str) -> int:
    """The journal opened for appending and exclusively locked.

    Once the lock is held, the descriptor must still be the file at ``path``: ``archive``
    moves a journal while holding the same lock, and a writer that opened it just before
    would otherwise append to the moved (or removed) file. Then it opens the path again.
    """
    import errno
    import stat
    from vaultkit.core.bounded import not_regular

    for _ in range(20):
        try:  # a FIFO or device named like a journal is never opened, let alone written
            why = not_regular(os.stat(path).st_mode)
        except FileNotFoundError:
            why = None
        except OSError as exc:
            raise VaultkitError(f"{rel}: cannot open for appending: {exc.strerror or exc}") \
                from None
        if why:
            raise VaultkitError(f"{rel}: {why.replace('not read', 'nothing written')}")
        try:
            # O_NOFOLLOW: a symlink put there since the check is refused, not followed;
            # O_NONBLOCK: a FIFO put there never blocks the open
            fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK
                         | getattr(os, "O_NOFOLLOW", 0), 0o666)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise VaultkitError(f"{rel}: is a symlink; vaultkit never writes through one, "
                                    "nothing written") from None
            raise VaultkitError(f"{rel}: cannot open for appending: {exc.strerror or exc}") \
                from None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                os.close(fd)
                raise VaultkitError(f"{rel}: is not a regular file; nothing written")
            fcntl.flock(fd, fcntl.LOCK_EX)
            held = os.fstat(fd)
            now = os.stat(path)
            if (held.st_dev, held.st_ino) == (now.st_dev, now.st_ino):
                if not_regular(held.st_mode):  # swapped in since the check above
                    os.close(fd)
                    raise VaultkitError(f"{rel}: not a regular file; nothing written")
                return fd
        except FileNotFoundError:
            pass
        except OSError as exc:
            os.close(fd)
            raise VaultkitError(f"{rel}: cannot lock: {exc.strerror or exc}") from None
        os.close(fd)
    raise VaultkitError(f"{rel}: the file kept moving while being opened; nothing written")


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

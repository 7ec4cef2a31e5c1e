"""Bring back what the history says was lost, without rewriting history or new work.

What ``vaultkit recover`` writes for each kind of event (see :mod:`vaultkit.memory.history`):

``journal-rewrite``
    The lost lines are appended to the journal, where it is now (archived or not), under
    a marked entry ``### HH:MM — Recovered from <commit> on <today>`` (at the journal's
    own entry level: ``##`` when its entries are ``##``) carrying the comment
    ``<!-- vaultkit-recovered <commit> <path> -->``. Only lines the journal does not hold
    any more are appended, in their old order; entries written since stay untouched
    above. The append is one ``O_APPEND`` write under the journal's lock, like
    ``vaultkit log``, so it passes the append-only hook. A journal that no longer exists
    gets its lines in the recovery note instead. A journal that no longer starts with
    its committed (HEAD) text, which an append alone would leave refused by the hook, is
    rewritten once instead: the committed bytes first, then the marked entries (without
    the lines HEAD holds), then what is in it now past the whole lines it still shares
    with the committed start, every byte kept; one atomic rename under the same lock and
    confinement, within the same size limit (:func:`_restore_head`). A journal an
    earlier run left that way (its events recovered) is put right too.
``memory-shrink``, ``memory-pruned`` (named by its id), ``mass-deletion``
    The lost lines go to the recovery note, ``memory/semantic/recovered.md``
    (``semantic/recovered.md`` in a memory-only vault), under ``## From <file>, cut by
    <commit> on <date>`` with the same marker: the curated file itself is not rewritten
    (its budget may be why it was cut). Move what is still true back by hand.
``note-deleted``
    The note's last committed bytes are restored to its path when that is free, else
    beside it as ``<name>.recovered-<sha7>.md``; written atomically.
``bootstrap-truncated``
    Nothing to bring back: the lines were in the file all along, the runtime cut them.

Idempotent: an event already recovered (its lines are back, or its note is back; the
marker comment proves nothing by itself) is skipped, so a second run writes nothing.
Each write is atomic (one locked append that is taken back if it fails, or a temporary
file renamed into place); events are recovered oldest first, so a run that stops
half-way is finished by running it again.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from dataclasses import dataclass
from pathlib import Path

from vaultkit.core.errors import VaultkitError
from vaultkit.memory.history import (Event, beside, credential_lines, file_on_disk, marker,
                                     missing_lines, quoted, recovery_note)

RECOVERY_NOTE_HEAD = (
    "# Recovered memory\n\n"
    "Lines `vaultkit recover` brought back from the git history, each block under the file "
    "and commit that lost them. Move what is still true to where it belongs, then delete "
    "the block.\n")


@dataclass
class Recovery:
    event: Event
    action: str  # "append", "restore", "skip"
    path: str | None  # the vault path written (or that would be)
    lines: int = 0  # non-blank lines brought back
    reason: str = ""  # for "skip"

    def to_dict(self) -> dict:
        return {"id": self.event.id, "kind": self.event.kind, "commit": self.event.commit,
                "action": self.action, "path": self.path, "lines": self.lines,
                "reason": self.reason}


def select(events: list[Event], wanted: str | None, everything: bool) -> list[Event]:
    """The events an ``EVENT`` argument (an id or commit, or a unique prefix) or ``--all``
    names, oldest first (so that later losses of one file append after earlier ones)."""
    if everything:  # (a MEMORY.md prune within its allowance was meant: named by id only)
        chosen = [e for e in events if e.is_loss]
    else:
        key = (wanted or "").strip().lower()
        if not re.fullmatch(r"[0-9a-f]{4,40}", key):
            raise VaultkitError(f"{wanted!r}: give an event id from `vaultkit history` (or "
                                "its first four characters or more), or --all")
        chosen = [e for e in events if e.id.startswith(key)]
        if not chosen:
            chosen = [e for e in events if e.commit.startswith(key)]
        if not chosen:
            raise VaultkitError(f"{wanted}: no such loss event in the history (see "
                                "`vaultkit history` for the ids)")
        if len({e.id for e in chosen}) > 1 and any(e.id.startswith(key) for e in chosen):
            ids = ", ".join(e.id for e in chosen)
            raise VaultkitError(f"{wanted}: ambiguous, matches events {ids}")
    return sorted(chosen, key=lambda e: e.timestamp)


def recover(root: Path, settings, events: list[Event], *, dry_run: bool = False,
            now: dt.datetime | None = None) -> list[Recovery]:
    """Recover ``events`` (see the module docs); with ``dry_run`` only say what would be done."""
    from vaultkit.memory.memset import vault_zone

    now = now or dt.datetime.now(vault_zone(settings))
    profile = settings.profile
    out = []
    heads: dict[str, bytes | None] = {}  # journal -> its committed bytes, when it lost them
    pending: dict[str, list] = {}  # journal -> [(Recovery, block)] of a prefix restore
    for event in events:
        target = event.current if event.kind == "journal-rewrite" else None
        if target is not None and target not in heads and file_on_disk(root, target).is_file():
            heads[target] = _lost_head(root, target, profile.budgets.max_file_bytes)
            if heads[target] is not None:
                pending[target] = []
        if event.kind == "bootstrap-truncated":
            out.append(Recovery(event, "skip", event.path, reason=(
                "nothing to bring back: the lines stayed in the file; the runtime cut them "
                "while it was over the limit" + ("" if event.recovered else
                                                  " (trim it: see `vaultkit check`)"))))
            continue
        if event.recovered:
            out.append(Recovery(event, "skip", event.current or event.path,
                                reason="already recovered"))
            continue
        if event.kind == "note-deleted":
            out.append(_restore(root, event, dry_run))
            continue
        if target is not None and not file_on_disk(root, target).is_file():
            target = None  # the journal is gone since: its lines go to the recovery note
        note = target or recovery_note(profile)
        path = file_on_disk(root, note)
        current = _read_text(path)
        held = current
        if note in pending:  # what the journal will hold: its committed start, the blocks
            held = "\n".join([heads[note].decode("utf-8", "replace"), current or "",
                              *(block(3) for _, block in pending[note])])
        withheld = credential_lines(event.lost)  # never written back: a placeholder instead
        lines = [withheld.get(line, line) for line in missing_lines(held, event.lost)]
        count = sum(1 for line in lines if line.strip() and line not in withheld.values())
        if count == 0:
            out.append(Recovery(event, "skip", note, reason="already recovered" + (
                f" (lines holding a credential are not brought back: {len(withheld)})"
                if withheld else "")))
            continue
        if withheld:  # a placeholder an earlier run wrote is not written again
            lines = [line for line in lines if line not in withheld.values()
                     or line not in (held or "")]
        limit = profile.budgets.max_file_bytes
        if target is not None:
            def block(level: int, event=event, lines=lines) -> str:
                return _journal_block(event, lines, now, level)
        else:
            def block(level: int, event=event, lines=lines) -> str:
                return _note_block(event, lines)
        if note in pending:  # written below, in one go with the journal's committed start
            recovery = Recovery(event, "append", note, count, reason="committed start restored")
            pending[note].append((recovery, block))
            out.append(recovery)
            continue
        if dry_run:  # the same refusal the write would give
            size = len(current.encode("utf-8")) if current is not None else 0
            level = _entry_level_of(current, note, path.parent)
            head = RECOVERY_NOTE_HEAD if target is None and not size else ""
            data = len((head + block(level)).encode("utf-8"))
            if size + data > limit:
                raise VaultkitError(_too_big(note, event, limit)(data, size))
        else:
            _append(root, note, block, RECOVERY_NOTE_HEAD if target is None else "",
                    limit, _too_big(note, event, limit))
        out.append(Recovery(event, "append", note, count))
    for note, blocks in pending.items():
        _restore_head(root, note, heads[note], [block for _, block in blocks], profile,
                      dry_run)
        if not blocks:  # every line was back already, after the journal's new start
            first = next(r for r in out if r.event.current == note and
                         r.event.kind == "journal-rewrite")
            out[out.index(first)] = Recovery(first.event, "append", note, 0,
                                             reason="committed start restored")
    return out


def _lost_head(root: Path, rel: str, limit: int) -> bytes | None:
    """The committed (HEAD) bytes of the journal ``rel`` when its text on disk no longer
    starts with them (the append-only hook would refuse it), else None: no git, no HEAD,
    not committed, committed over ``limit`` bytes (never loaded), or still an append to
    what was committed."""
    from vaultkit.core import gitenv
    from vaultkit.vault.gitstate import first_change

    base, inner = _confined(root, rel)
    path = base / inner
    spec = f"HEAD:./{path.name}"
    try:
        proc = gitenv.run_git(["cat-file", "-s", spec], cwd=path.parent)
        if proc.returncode != 0 or int(proc.stdout.strip() or 0) > limit:
            return None
        proc = gitenv.run_git(["cat-file", "blob", spec], cwd=path.parent)
    except (FileNotFoundError, OSError, ValueError):
        return None
    if proc.returncode != 0:
        return None
    head = proc.stdout
    current = _read_text(path)
    if current is None or first_change(head.decode("utf-8", "replace"), current) is None:
        return None
    return head


def _split_after_common(head: bytes, data: bytes) -> bytes:
    """``data`` past the whole lines it shares with the start of ``head`` (line endings
    aside): what was written since the journal was rewritten."""
    old = head.splitlines(keepends=True)
    new = data.splitlines(keepends=True)
    at = 0
    for a, b in zip(old, new):
        if a.rstrip(b"\r\n") != b.rstrip(b"\r\n") or not a.endswith(b"\n") \
                or not b.endswith(b"\n"):
            break
        at += len(b)
    return data[at:]


def _restore_head(root: Path, rel: str, head: bytes, blocks: list, profile,
                  dry_run: bool) -> None:
    """Rewrite the journal ``rel`` as its committed bytes ``head`` first (byte for byte),
    then ``blocks`` (the restored entries, rendered at the journal's entry level), then
    what is in it now past the lines it still shares with ``head``, every byte kept: what
    the append-only hook accepts. Under the journal's lock (the one ``log`` and the
    appends take), confined like them (no symlink, FIFO, device, other hard links), one
    atomic rename; nothing written past ``budgets.max_file_bytes``."""
    from vaultkit.core.atomic import write_atomic
    from vaultkit.core.confine import open_append, write_target
    from vaultkit.memory.journal import _entry_level
    from vaultkit.vault.gitstate import first_change

    limit = profile.budgets.max_file_bytes
    base, inner = _confined(root, rel)
    path = write_target(base, inner)
    if dry_run:
        data = path.read_bytes()
    else:
        fd = open_append(path, rel)  # locked, so no entry lands between the read and rename
    try:
        if not dry_run:
            size = os.fstat(fd).st_size
            data = os.pread(fd, size, 0) if size else b""
        crlf = b"\r\n" in data and data.count(b"\r\n") == data.count(b"\n")
        newline = "\r\n" if crlf else "\n"
        # the level the journal will have: its committed start and what follows it
        level = _entry_level((head + b"\n" + _split_after_common(head, data))[:1 << 20],
                             rel, path.parent)
        text = "".join(block(level) for block in blocks).replace("\n", newline).encode()
        if first_change(head.decode("utf-8", "replace"),
                        data.decode("utf-8", "replace")) is None:
            new = data + (newline.encode() if data and not data.endswith(b"\n") else b"") \
                + text  # restored meanwhile: the blocks are appended
        else:
            tail = _split_after_common(head, data)
            new = head + (newline.encode() if head and not head.endswith(b"\n") else b"")
            new += text
            if tail:
                if tail.strip(b"\r\n") and not tail.startswith((b"\n", b"\r\n")):
                    new += newline.encode()  # a blank line before the next entry
                new += tail
        if len(new) > limit:
            raise VaultkitError(
                f"{rel}: its committed lines, the lines brought back and what was written "
                f"since come to {len(new):,} bytes, over the {limit:,}-byte limit "
                "(budgets.max_file_bytes), past which it is not read; nothing written: "
                f"archive or trim it first, or restore its start by hand from "
                f"`git show HEAD:./{path.name}` (in {path.parent})")
        if not dry_run:
            write_atomic(base / inner, new, root=base)
    finally:
        if not dry_run:
            os.close(fd)


def _too_big(note: str, event: Event, limit: int):
    def message(data: int, size: int) -> str:
        return (f"{note}: the {data:,} bytes that event {event.id} would bring back take it "
                f"({size:,} bytes) over the {limit:,}-byte limit (budgets.max_file_bytes), "
                "past which it is not read; nothing written for this event: archive or "
                "trim the file first, or recover the lines by hand from "
                f"`git show {event.commit[:10]}^:{event.path.removeprefix('../')}`")
    return message


def _entry_level_of(text: str | None, rel: str, folder: Path) -> int:
    from vaultkit.memory.journal import _entry_level

    return _entry_level((text or "").encode("utf-8"), rel, folder)


def _journal_block(event: Event, lines: list[str], now: dt.datetime, level: int = 3) -> str:
    """The recovered entry, at the journal's own entry ``level`` (``##`` or ``###``): at
    another level it would read as part of the entry above it."""
    from vaultkit.memory.journal import DASH

    n = sum(1 for line in lines if line.strip())
    if event.source == "snapshot":  # lost between commits: no commit to name
        return "\n".join([
            "", f"{'#' * level} {now:%H:%M} {DASH} Restored lines lost on {event.day} "
                f"{event.date[11:16]}", marker(event),
            f"- {n} line{'s' * (n != 1)} removed from this journal before the snapshot at "
            f"{event.date[11:16]} on {event.day} (snapshot {event.commit[:10]}), never "
            "committed, brought back by `vaultkit recover`.",
            "- They follow below as they were written; later entries stay above as they are.",
            "- Review them and move anything still open into today's journal.",
            "", *lines]) + "\n"
    who = quoted(event.author.split(" <", 1)[0])
    return "\n".join([
        "", f"{'#' * level} {now:%H:%M} {DASH} Recovered from {event.commit[:10]} on "
            f"{now:%Y-%m-%d}",
        marker(event),
        f"- {n} line{'s' * (n != 1)} that commit {event.commit[:10]} ({event.day}, {who}: "
        f"{quoted(event.subject)!r}) removed from this journal, brought back by "
        "`vaultkit recover`.",
        "- They follow below as they were written; later entries stay above as they are.",
        "- Review them and move anything still open into today's journal.",
        "", *lines]) + "\n"


def _note_block(event: Event, lines: list[str]) -> str:
    path = quoted(event.path.removeprefix('../'))
    if event.source == "snapshot":
        return "\n".join([
            "", f"## From {path}, cut before the snapshot at {event.date[11:16]} on "
                f"{event.day}", marker(event),
            f"These lines were removed from {path} between commits (snapshot "
            f"{event.commit[:10]}).", "", *lines]) + "\n"
    return "\n".join([
        "", f"## From {path}, cut by {event.commit[:10]} on {event.day}", marker(event),
        f"Commit {event.commit[:10]} ({quoted(event.author.split(' <', 1)[0])}: "
        f"{quoted(event.subject)!r}) removed these lines from {path}.",
        "", *lines]) + "\n"


def _read_text(path: Path) -> str | None:
    from vaultkit.core.bounded import read_regular
    from vaultkit.memory.history import READ_LIMIT

    try:
        return read_regular(path, READ_LIMIT).decode("utf-8", "replace")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise VaultkitError(f"{path}: cannot read: {exc.strerror or exc}; nothing "
                            "written") from None


def _confined(root: Path, rel: str) -> tuple[Path, str]:
    """``(root, path)`` a write of the vault path ``rel`` is confined to: the vault, or
    the workspace for a bootstrap file above a memory-only vault (``../MEMORY.md``)."""
    if rel.startswith("../"):
        return root.parent, rel[3:]
    return root, rel


def _append(root: Path, rel: str, block, head: str, limit: int, too_big) -> None:
    """Append ``block(entry level)`` (creating the file with ``head``) through the one
    appending writer of ``log`` (:func:`vaultkit.memory.journal.append_locked`): one
    locked O_APPEND write, confined (no symlink, FIFO, device or file with other hard
    links), nothing written past ``limit`` (``budgets.max_file_bytes``)."""
    from vaultkit.memory.journal import _entry_level, append_locked

    base, inner = _confined(root, rel)

    def render(target) -> bytes:
        level = _entry_level(target.head(1 << 20), rel, (base / inner).parent)
        prefix = head if target.created else "\n" * bool(target.separator)
        return (prefix + block(level)).replace("\n", target.newline).encode("utf-8")

    append_locked(base, inner, rel, render, limit, too_big)


def _without_credentials(event: Event) -> bytes:
    """The deleted note's bytes, as they were but for the lines holding a credential,
    which become a placeholder comment (see :func:`credential_lines`)."""
    data = event.blob or b""
    withheld = credential_lines(event.lost)
    if not withheld:
        return data
    text = data.decode("utf-8", "replace")
    out = []
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        out.append(withheld.get(body, body) + line[len(body):])
    return "".join(out).encode("utf-8")


def _restore(root: Path, event: Event, dry_run: bool) -> Recovery:
    from vaultkit.core.atomic import write_atomic

    count = sum(1 for line in event.lost if line.strip())
    for rel in (event.path, beside(event.path, event.commit)):
        path = file_on_disk(root, rel)
        if os.path.lexists(path):
            continue
        if not dry_run:
            base, inner = _confined(root, rel)
            write_atomic(base / inner, _without_credentials(event), root=base)
        return Recovery(event, "restore", rel, count)
    return Recovery(event, "skip", event.path,
                    reason=f"{event.path} and {beside(event.path, event.commit)} are both taken")

"""Bring back what the history says was lost, without rewriting history or new work.

What ``vaultkit recover`` writes for each kind of event (see :mod:`vaultkit.memory.history`):

``journal-rewrite``, ``mass-deletion`` of a typed, knowledge or topic note
    The lost lines the file does not hold any more go back where they stood, around what
    was written since, with the undo ``vaultkit watch`` makes
    (:func:`vaultkit.vault.loss.undo_deletions`): an overwritten journal becomes its old
    lines followed by the new text, as an append would have left it; an entry deleted
    from the middle comes back between its neighbours. No heading, marker or comment of
    vaultkit's is written: the file holds only memory. The file is where it is now
    (archived or not), rewritten once per run by one atomic rename under its lock (the
    one ``log`` and ``watch`` take), confined like them, within ``budgets.max_file_bytes``
    (:func:`_put_back`). A journal committed keeps HEAD's text first, byte for byte, as
    the append-only hook wants (:func:`_placed`): lines a commit lost go back after it;
    lines lost between commits go back in place, which gives the journal its committed
    start back when the overwrite took it too; a journal that still does not start with
    it (one an earlier run left with the lines after the summary) is written as HEAD's
    text, then what it holds past the whole lines it shares with HEAD's start. A file
    that no longer exists gets its lines in the recovery note instead. Committed lines
    the work tree lost since HEAD that no snapshot saw are a ``journal-rewrite`` event of
    their own (``source`` ``"work-tree"``, :func:`vaultkit.memory.history.
    scan_work_tree_losses`), put back the same way.
``memory-shrink``, ``memory-pruned`` (named by its id), ``mass-deletion`` of a bootstrap file
    The lost lines go to the recovery note, ``memory/semantic/recovered.md``
    (``semantic/recovered.md`` in a memory-only vault), under ``## From <file>, cut by
    <commit> on <date>`` with a ``<!-- vaultkit-recovered ... -->`` marker: the curated
    file itself is not rewritten (its budget may be why it was cut). Move what is still
    true back by hand.
``note-deleted``
    The note's last committed bytes are restored to its path when that is free, else
    beside it as ``<name>.recovered-<sha7>.md``; written atomically.
``bootstrap-truncated``
    Nothing to bring back: the lines were in the file all along, the runtime cut them.

Idempotent: an event already recovered (its lines are back, wherever they are: put back
by ``watch``, by an earlier run, or under the marked heading an older vaultkit appended;
or its note is back; a marker comment proves nothing by itself) is skipped, and only the
lines a file lacks are put back, so each line is written once and a second run writes
nothing. Each write is atomic (a temporary file renamed into place under the file's lock,
or one locked append to the recovery note that is taken back if it fails); events are
recovered oldest first, so a run that stops half-way is finished by running it again.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from vaultkit.core.errors import VaultkitError
from vaultkit.memory.history import (MARKER, Event, beside, credential_lines, file_on_disk,
                                     marker, missing_lines, quoted, recovery_note)

RECOVERY_NOTE_HEAD = (
    "# Recovered memory\n\n"
    "Lines `vaultkit recover` brought back from the git history, each block under the file "
    "and commit that lost them. Move what is still true to where it belongs, then delete "
    "the block.\n")


@dataclass
class Recovery:
    event: Event
    action: str  # "put-back" (in place), "append" (the recovery note), "restore", "skip"
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


def recover(root: Path, settings, events: list[Event], *,
            dry_run: bool = False) -> list[Recovery]:
    """Recover ``events`` (see the module docs); with ``dry_run`` only say what would be done."""
    profile = settings.profile
    limit = profile.budgets.max_file_bytes
    out: list[Recovery] = []
    # file -> [(index in out, event)] whose lines go back in place, in one locked rewrite
    in_place: dict[str, list[tuple[int, Event]]] = {}
    heads: dict[str, bytes | None] = {}  # journal -> its committed (HEAD) bytes
    for event in events:
        target = _in_place_target(root, profile, event)
        if target is not None and event.kind == "journal-rewrite" and target not in heads:
            # (every journal named, recovered or not: one an earlier run left without its
            # committed start gets it back)
            heads[target] = _committed_bytes(root, target, limit)
            in_place.setdefault(target, [])
        if event.kind == "journal-edit":
            out.append(Recovery(event, "skip", event.current or event.path, reason=(
                "nothing to bring back: its lines were edited, not lost (the old wording is "
                f"in git: git show {event.commit[:10]}^:{event.path})")))
            continue
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
        if target is not None:  # filled in below, once the file's rewrite is made
            in_place.setdefault(target, []).append((len(out), event))
            out.append(Recovery(event, "put-back", target))
            continue
        out.append(_to_recovery_note(root, profile, event, limit, dry_run))
    for rel, items in in_place.items():
        counts, start = _put_back(root, rel, heads.get(rel), [e for _, e in items], limit,
                                  dry_run)
        for (at, event), count in zip(items, counts):
            if count:
                out[at] = Recovery(event, "put-back", rel, count,
                                   reason="committed start restored" if start else "")
            else:
                out[at] = Recovery(event, "skip", rel, reason="already recovered")
        if start and not any(counts):  # every line was there: only the start comes back
            first = next((i for i, r in enumerate(out) if r.event.kind == "journal-rewrite"
                          and (r.event.current or r.event.path) == rel), None)
            if first is not None:
                out[first] = Recovery(out[first].event, "put-back", rel, 0,
                                      reason="committed start restored")
    return out


def _in_place_target(root: Path, profile, event: Event) -> str | None:
    """The file whose lost lines ``event`` puts back where they stood: a journal's, and a
    typed, knowledge or topic note's (not MEMORY.md nor another bootstrap file, whose
    budget may be why they were cut: their lines go to the recovery note), when it is on
    disk and the version before the loss is known. None otherwise."""
    if event.old is None or event.kind not in ("journal-rewrite", "mass-deletion"):
        return None
    rel = event.current or event.path
    if event.kind == "mass-deletion" and (rel.startswith("../") or
                                          profile.layer_of(rel) in (None, "bootstrap")):
        return None
    return rel if file_on_disk(root, rel).is_file() else None


def _to_recovery_note(root: Path, profile, event: Event, limit: int,
                      dry_run: bool) -> Recovery:
    """Append the event's lost lines the recovery note does not hold yet to it, under the
    file and the commit (or snapshot) that lost them."""
    note = recovery_note(profile)
    path = file_on_disk(root, note)
    current = _read_text(path)
    withheld = credential_lines(event.lost)  # never written back: a placeholder instead
    lines = [withheld.get(line, line) for line in missing_lines(current, event.lost)]
    count = sum(1 for line in lines if line.strip() and line not in withheld.values())
    if count == 0:
        return Recovery(event, "skip", note, reason="already recovered" + (
            f" (lines holding a credential are not brought back: {len(withheld)})"
            if withheld else ""))
    if withheld:  # a placeholder an earlier run wrote is not written again
        lines = [line for line in lines if line not in withheld.values()
                 or line not in (current or "")]
    block = _note_block(event, lines)
    if dry_run:  # the same refusal the write would give
        size = len(current.encode("utf-8")) if current is not None else 0
        data = len(((RECOVERY_NOTE_HEAD if not size else "") + block).encode("utf-8"))
        if size + data > limit:
            raise VaultkitError(_too_big(note, event, limit)(data, size))
    else:
        _append(root, note, lambda _level: block, RECOVERY_NOTE_HEAD, limit,
                _too_big(note, event, limit))
    return Recovery(event, "append", note, count)


def _committed_bytes(root: Path, rel: str, limit: int) -> bytes | None:
    """The committed (HEAD) bytes of the journal ``rel``; None with no git, no HEAD, not
    committed, or committed over ``limit`` bytes (never loaded)."""
    from vaultkit.core import gitenv

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
    return proc.stdout if proc.returncode == 0 else None


def _after_common(head: str, text: str) -> str:
    """``text`` past the whole lines it shares with the start of ``head`` (line endings
    aside): what was written since the journal was rewritten."""
    old = head.splitlines(keepends=True)
    new = text.splitlines(keepends=True)
    at = 0
    for a, b in zip(old, new):
        if a.rstrip("\r\n") != b.rstrip("\r\n") or not a.endswith("\n") \
                or not b.endswith("\n"):
            break
        at += len(b)
    return text[at:]


def _split_head(text: str, head: str) -> tuple[str, str]:
    """``text``, which starts with the committed ``head`` (an append to it), as HEAD's lines
    (the last with what was appended onto it, when HEAD has no final newline) and the rest."""
    k = head.count("\n") + (0 if head.endswith("\n") or not head else 1)
    lines = text.split("\n")
    if k >= len(lines):
        return text, ""
    return "\n".join(lines[:k]) + "\n", "\n".join(lines[k:])


def _undo_all(events: list[Event], text: str, fixed: str,
              committed: str = "") -> tuple[str, list[int]]:
    """``text`` with each event's lost lines that neither it nor ``fixed`` (text kept
    before it: HEAD's) holds put back where they stood in the event's old version
    (:func:`vaultkit.vault.loss.undo_deletions`, watch's restore), events in order; and how
    many lines each brought back. A line holding a credential comes back as its
    placeholder (once); vaultkit's own marker comments are never memory to bring back.
    Lines ``committed`` (HEAD's text, put back as such) holds are not counted."""
    from collections import Counter

    from vaultkit.vault.loss import judge, undo_deletions

    counts = []
    head = Counter(committed.replace("\r\n", "\n").split("\n")) if committed else Counter()
    for event in events:
        held = fixed + "\n" + text
        withheld = credential_lines(event.lost)
        lost = event.lost
        if event.source == "work-tree" and event.old is not None:
            # judged again on the text the events before it left: a committed line whose
            # entry's heading an earlier event put back is that line's edit again, no loss
            again = Counter(judge(event.old, fixed + text).lost)
            lost = [line for line in lost if not line.strip() or _take(again, line)]
        missing = [line for line in missing_lines(held, lost)
                   if not line.lstrip().startswith(f"<!-- {MARKER} ")]
        if withheld:  # a placeholder already there is not written again
            have = Counter(held.replace("\r\n", "\n").split("\n"))
            kept = []
            for line in missing:
                placeholder = withheld.get(line)
                if placeholder is not None and have[placeholder] > 0:
                    have[placeholder] -= 1
                    continue
                kept.append(line)
            missing = kept
        count = sum(1 for line in missing if line.strip() and line not in withheld)
        if count:
            text = undo_deletions(event.old or "", text, missing, withheld)
            for line in missing:
                if line.strip() and line not in withheld and head[line] > 0:
                    head[line] -= 1
                    count -= 1
        counts.append(count)
    return text, counts


def _take(counter, line: str) -> bool:
    """Whether ``counter`` still holds ``line`` (taking it once)."""
    if counter[line] > 0:
        counter[line] -= 1
        return True
    return False


def _placed(text: str, head: str | None, events: list[Event]) -> tuple[str, list[int], bool]:
    """The file's new text with the events' lines back in place, the lines each brought
    back, and whether the journal's committed start had to be put back first.

    A journal committed (``head``) keeps HEAD's text first, byte for byte, as the
    append-only hook wants it: lines a commit lost go back after it; lines lost between
    commits go back in place, which gives HEAD's start back when the overwrite took it
    too. When that is not enough (a journal an earlier ``recover`` left with every line
    after the summary), HEAD's text comes first and what the file holds past the lines it
    shares with HEAD's start follows, without the committed lines (each is written once),
    every other byte kept, the lines brought back among it."""
    from vaultkit.vault.gitstate import first_change

    if head is None:
        new, counts = _undo_all(events, text, "")
        return new, counts, False
    if first_change(head, text) is None:  # an append to HEAD: its lines stay as they are
        fixed, rest = _split_head(text, head)
        new, counts = _undo_all(events, rest, fixed)
        if new == rest:  # nothing put back: the file stays as it is, byte for byte
            return text, counts, False
        return _joined(fixed, new), counts, False
    new, counts = _undo_all(events, text, "", head)
    if first_change(head, new) is None:
        return new, counts, True
    if _head_in_order(head, new):
        # HEAD's lines are all there, in their order, each once, some perhaps edited (a
        # typo fixed) or with lines between them: nothing committed is lost or moved (the
        # hook passes it), and putting HEAD's text back before it would write every
        # committed line twice. The committed lines put back in place count as brought
        # back: HEAD's text was not put back as such
        new, counts = _undo_all(events, text, "")
        return new, counts, False
    # HEAD's text comes back whole, first; the committed lines the journal still holds past
    # its start (moved, or left after a summary by an older recover) are not written twice
    rest = _without_lines(_after_common(head, text), head)
    new, counts = _undo_all(events, rest, head)
    return _joined(head, new), counts, True


def _without_lines(text: str, head: str) -> str:
    """``text`` without the non-blank lines ``head`` holds (as a multiset), every other
    byte kept."""
    from collections import Counter

    from vaultkit.vault.gitstate import split_lines

    have = Counter(line for line in split_lines(head)[0] if line.strip())
    out = []
    for line in text.splitlines(keepends=True):
        bare = line.rstrip("\r\n")
        if bare.strip() and have[bare] > 0:
            have[bare] -= 1
            continue
        out.append(line)
    return "".join(out)


def _head_in_order(head: str, text: str) -> bool:
    """True when ``text`` holds the non-blank lines of ``head`` in their order, each once,
    and none twice, with only other lines between them; a line the model of loss
    (:func:`vaultkit.vault.loss.judge`) judges an edit of one of them counts as it."""
    from vaultkit.vault.gitstate import split_lines
    from vaultkit.vault.loss import judge

    back = {new: old for old, new in judge(head, text).edited}
    committed = [line for line in split_lines(head)[0] if line.strip()]
    held = set(committed)
    lines = (back.pop(line, line) for line in split_lines(text)[0])
    return [line for line in lines if line in held] == committed


def _joined(first: str, rest: str) -> str:
    """``first`` then ``rest``, each on lines of its own, a heading after a blank line."""
    if not first or not rest:
        return first + rest
    newline = "\r\n" if first.endswith("\r\n") else "\n"
    if not first.endswith("\n"):
        first += newline
    if rest.strip("\r\n") and not rest.startswith(("\n", "\r\n")) \
            and first.strip() and not first.endswith(newline * 2):
        first += newline  # a blank line before the next entry
    return first + rest


def _put_back(root: Path, rel: str, head: bytes | None, events: list[Event], limit: int,
              dry_run: bool) -> tuple[list[int], bool]:
    """Rewrite ``rel`` once with the events' lost lines back where they stood
    (:func:`_placed`): under the lock ``log`` and watch take, confined like them (no
    symlink, FIFO, device, other hard links), one atomic rename; nothing written past
    ``budgets.max_file_bytes``. Returns the lines each event brought back and whether the
    committed start came back."""
    from vaultkit.core.atomic import write_atomic
    from vaultkit.core.confine import open_append, write_target
    from vaultkit.vault.gitstate import decode

    base, inner = _confined(root, rel)
    path = write_target(base, inner)
    fd = None if dry_run else open_append(path, rel)  # locked: no entry lands meanwhile
    try:
        if fd is None:
            from vaultkit.core.bounded import read_regular
            from vaultkit.memory.history import READ_LIMIT

            data = read_regular(path, READ_LIMIT)
        else:
            size = os.fstat(fd).st_size
            if size > limit:
                raise VaultkitError(f"{rel}: {size:,} bytes, over the {limit:,}-byte limit "
                                    "(budgets.max_file_bytes), past which it is not read; "
                                    "nothing written: archive or trim it first")
            data = os.pread(fd, size, 0) if size else b""
        text = decode(data)
        new, counts, start = _placed(text, None if head is None else decode(head), events)
        if new == text:
            return counts, False
        bom = b"\xef\xbb\xbf" if data.startswith(b"\xef\xbb\xbf") else b""
        encoded = bom + new.encode("utf-8")
        if len(encoded) > limit:
            raise VaultkitError(
                f"{rel}: with the lines brought back where they stood it comes to "
                f"{len(encoded):,} bytes, over the {limit:,}-byte limit "
                "(budgets.max_file_bytes), past which it is not read; nothing written: "
                "archive or trim it first, or bring the lines back by hand (`vaultkit "
                "history --format json` lists them)")
        if fd is not None:
            write_atomic(base / inner, encoded, root=base)
        return counts, start
    finally:
        if fd is not None:
            os.close(fd)


def _too_big(note: str, event: Event, limit: int):
    def message(data: int, size: int) -> str:
        return (f"{note}: the {data:,} bytes that event {event.id} would bring back take it "
                f"({size:,} bytes) over the {limit:,}-byte limit (budgets.max_file_bytes), "
                "past which it is not read; nothing written for this event: archive or "
                "trim the file first, or recover the lines by hand from "
                f"`git show {event.commit[:10]}^:{event.path.removeprefix('../')}`")
    return message


def _note_block(event: Event, lines: list[str]) -> str:
    path = quoted(event.path.removeprefix('../'))
    if event.source == "work-tree":
        return "\n".join([
            "", f"## From {path}, cut since {event.commit[:10]} on {event.day}", marker(event),
            f"These committed lines (HEAD {event.commit[:10]}) were removed from {path} "
            "before any snapshot saw it.", "", *lines]) + "\n"
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

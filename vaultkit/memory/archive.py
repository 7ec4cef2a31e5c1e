"""Move old journals into ``memory/archive/`` and keep every link resolving.

A journal (``memory/YYYY-MM-DD.md``) is archived when its day lies more than
``keep_days`` days before today (in the vault's time zone). Inside a git work tree a
tracked journal moves with ``git mv`` (history follows it); otherwise its bytes are
copied (atomically, mode and mtime kept), read back and compared, and only then is
the original removed. A journal whose archive name is taken is left where it is.

Links: the vault is re-resolved as it will be after the moves, with the same
resolver ``check`` uses. Every link that resolves now and would afterwards open
something else (or nothing) is rewritten, and no other: Obsidian finds
``[[2026-01-01]]`` by name, so plain wikilinks keep working and stay untouched; a
path-qualified wikilink (``[[memory/2026-01-01]]``) gets the shortest target that
opens the moved note, and a relative Markdown link (``[x](../2026-01-01.md)``, or one
pointing at a moved journal) gets the new relative path. Alias, heading/block subpath
and embed marker are kept. Each changed note is written once, atomically. A journal's
own lines are never edited (journals are append-only, moved or not): when a move would
break a link written in a journal, that journal (if it would move) or the journal it
links to stays where it is, and the report says why.
``INDEX.md`` is regenerated afterwards when the vault has one.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import fcntl
import hashlib
import os
import posixpath
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from vaultkit.core import plain
from vaultkit.core.bounded import read_open
from vaultkit.core.errors import VaultkitError
from vaultkit.vault.model import MARKDOWN

_MD_DEST = re.compile(r"\]\(\s*(<[^<>\n]*>|(?:[^\s()\\]|\\.|\((?:[^\s()\\]|\\.)*\))*)")


@dataclass
class LinkEdit:
    path: str  # the note's path after the moves
    line: int
    old: str
    new: str
    start: int = 0  # offsets into the note's text
    end: int = 0

    def to_dict(self) -> dict:
        return {"path": self.path, "line": self.line, "old": self.old, "new": self.new}


@dataclass
class ArchivePlan:
    moves: list[tuple[str, str]] = field(default_factory=list)
    edits: list[LinkEdit] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    cutoff: _dt.date | None = None
    index_updated: bool = False
    method: str = "copy"  # "git" or "copy"

    def to_dict(self, dry_run: bool) -> dict:
        return {"dryRun": dry_run, "cutoff": self.cutoff.isoformat() if self.cutoff else None,
                "moves": [{"from": a, "to": b} for a, b in self.moves],
                "linkEdits": [e.to_dict() for e in self.edits],
                "skipped": [{"path": p, "reason": r} for p, r in self.skipped],
                "indexUpdated": self.index_updated}


def plan(vault, keep_days: int, today: _dt.date) -> ArchivePlan:
    """What ``archive`` would do: the moves and the link edits they need."""
    if keep_days < 0:
        raise VaultkitError("--keep-days must be 0 or more")
    out = ArchivePlan(cutoff=today - _dt.timedelta(days=keep_days))
    prefix = vault.profile.memory_prefix
    taken = {p.lower() for p in vault.notes} | {p.lower() for p in vault.attachments}
    mapping: dict[str, str] = {}
    for note in sorted(vault.notes_in("journal"), key=lambda n: n.path):
        try:
            day = _dt.date.fromisoformat(note.name)
        except ValueError:
            continue
        if day >= out.cutoff:
            continue
        if note.error:
            out.skipped.append((note.path, f"not readable: {note.error}"))
            continue
        dest = f"{prefix}archive/{note.path.rsplit('/', 1)[-1]}"
        if dest.lower() in taken or (vault.root / dest).exists():
            out.skipped.append((note.path, f"{dest} already exists"))
            continue
        mapping[note.path] = dest
        taken.add(dest.lower())
    # A journal is append-only (journal-append-only compares its lines with HEAD, moved
    # or not), so a link inside one is never rewritten. When a move would need that, the
    # journal involved stays where it is: the linking journal itself when it would move,
    # else the journal it links to. Repeat until no such edit remains.
    while mapping:
        edits, blocked = _link_edits(vault, mapping)
        if not blocked:
            break
        for path, reason in blocked.items():
            mapping.pop(path, None)
            out.skipped.append((path, reason))
    else:
        edits = []
    out.moves = sorted(mapping.items())
    out.edits = edits
    return out


def _link_edits(vault, mapping: dict[str, str]) -> tuple[list[LinkEdit], dict[str, str]]:
    """The edits the moves in ``mapping`` need, and journals that must not move."""
    from vaultkit.vault.resolve import Resolver
    from vaultkit.vault.loader import Vault

    after_notes = {}
    for path, note in vault.notes.items():
        new = mapping.get(path, path)
        after_notes[new] = plain.replace(note, path=new, text=note.text) \
            if new != path else note
    after = Vault(vault.root, vault.settings, dict(sorted(after_notes.items())),
                  vault.attachments, vault.problems, vault.external)
    resolver = Resolver(after)
    before = vault.resolver
    edits: list[LinkEdit] = []
    blocked: dict[str, str] = {}
    for path, note in vault.notes.items():
        if note.error or not note.links:
            continue
        moved_note = after_notes[mapping.get(path, path)]
        append_only = vault.layers.get(path) == "journal"
        starts = None
        for link, res in zip(note.links, before.resolve_all(note)):
            if res.path is None or link.external or not link.target:
                continue  # broken already, a URL, or [[#Heading]] (the note itself)
            want = mapping.get(res.path, res.path)
            if resolver.resolve(moved_note, link).path == want:
                continue
            new_raw = _rewrite(link, want, moved_note.path, resolver)
            span = None
            if new_raw is not None and new_raw != link.raw and not append_only:
                if starts is None:
                    starts = _line_starts(note.text)
                span = _locate(note.text, starts, link)
            if span is not None:
                edits.append(LinkEdit(moved_note.path, link.line, link.raw, new_raw, *span))
                continue
            why = ("journals are append-only, so the link is not rewritten" if append_only
                   else "the link cannot be rewritten")
            if path in mapping:
                blocked.setdefault(path, f"kept: its link {link.raw} (line {link.line}) would "
                                         f"break after the move, and {why}")
            elif res.path in mapping:
                blocked.setdefault(res.path, f"kept: {path}:{link.line} links to it as "
                                             f"{link.raw}, which would break, and {why}")
    return edits, blocked


def _rewrite(link, target: str, source: str, resolver) -> str | None:
    """The link written so that, from ``source``, it opens ``target``."""
    sub = ("#" + link.subpath) if link.subpath else ""
    if link.kind == MARKDOWN:
        folder = source.rsplit("/", 1)[0] if "/" in source else ""
        rel = posixpath.relpath(target, folder or ".")
        matches = list(_MD_DEST.finditer(link.raw))
        if not matches:
            return None
        m = matches[-1]
        old = m.group(1)
        dest = f"<{rel}{sub}>" if old.startswith("<") else quote(rel, safe="/()-._~") + (
            "#" + quote(link.subpath, safe="/^-._~") if link.subpath else "")
        return link.raw[:m.start(1)] + dest + link.raw[m.end(1):]
    full = target[:-3] if target.lower().endswith(".md") else target
    if link.target.lower().endswith(".md"):
        full = target
    # Keep the writer's style: a path stays a path, a bare name the shortest unambiguous name.
    text = full if "/" in link.target else resolver.link_text(target, source)
    if resolver.resolve_target(text, source) != target:
        text = full
    pipe = "\\|" if "\\|" in link.raw else "|"
    alias = f"{pipe}{link.alias}" if link.alias is not None else ""
    bang = "!" if link.embed else ""
    return f"{bang}[[{text}{sub}{alias}]]"


def _line_starts(text: str) -> list[int]:
    starts = [0]
    for i, ch in enumerate(text):
        if ch == "\n":
            starts.append(i + 1)
    return starts


def _locate(text: str, starts: list[int], link) -> tuple[int, int] | None:
    if not 0 < link.line <= len(starts):
        return None
    line_start = starts[link.line - 1]
    line_end = starts[link.line] if link.line < len(starts) else len(text)
    offset = line_start + max(link.column - 1, 0)
    if text.startswith(link.raw, offset):
        return offset, offset + len(link.raw)
    found = text.find(link.raw, line_start, line_end)
    if found < 0:
        return None
    return found, found + len(link.raw)


# -- doing it --------------------------------------------------------------------------

def execute(vault, p: ArchivePlan) -> ArchivePlan:
    """Carry out a plan: verified moves, then the link edits, then INDEX.md."""
    from vaultkit.core.atomic import write_atomic
    from vaultkit.core.bounded import read_regular

    root = vault.root
    moved_to = {new: old for old, new in p.moves}
    # Nothing moves unless every file involved is still exactly what was read.
    involved = {old for old, _ in p.moves} | {moved_to.get(e.path, e.path) for e in p.edits}
    for path in sorted(involved):
        try:
            current = read_regular(root / path, vault.profile.budgets.max_file_bytes)
        except OSError as exc:
            raise VaultkitError(f"{path}: cannot read: {exc.strerror or exc}; nothing moved") \
                from None
        if current != _text_bytes(vault.notes[path]):
            raise VaultkitError(f"{path}: changed while archive ran; nothing moved, run it again")
    from vaultkit.core.confine import make_folders, write_target

    # Every file written or moved is the real file, in the vault, outside .git/: a journal
    # linked to NOW.md or an archive folder linked out of the vault stops everything.
    try:
        for old, new in p.moves:
            write_target(root, old)
            make_folders(root, (root / new).parent)
            write_target(root, new)
    except VaultkitError as exc:
        message = exc.args[0].replace("nothing written there", "not written")
        raise VaultkitError(message.replace("not written", "nothing moved")) from None
    refused = set()
    for path in sorted({e.path for e in p.edits if e.path not in moved_to}):
        try:  # a note linked to another (an alias) keeps its link; the real note is edited
            write_target(root, path)
        except VaultkitError as exc:
            refused.add(path)
            p.skipped.append((path, exc.args[0].split(": ", 1)[-1].replace(
                "not written", "links not rewritten")))
    p.edits = [e for e in p.edits if e.path not in refused]
    for path in sorted({moved_to.get(e.path, e.path) for e in p.edits}):
        if not os.access(root / path, os.W_OK):  # its links could not be rewritten after the move
            raise VaultkitError(f"{path}: is read-only, so its links to the journals cannot be "
                                "rewritten; nothing moved")
    tracked = _git_tracked(root)
    p.method = "git" if tracked is not None else "copy"
    index_staged = _index_to_stage(vault, tracked)
    for old, new in p.moves:
        with _journal_lock(root / old) as data:
            if data != _text_bytes(vault.notes[old]):
                raise VaultkitError(f"{old}: changed while archive ran; not moved, run it again")
            _move(root, old, new, data, tracked)
    by_note: dict[str, list[LinkEdit]] = {}
    for edit in p.edits:
        by_note.setdefault(edit.path, []).append(edit)
    applied: list[LinkEdit] = []
    for path, edits in sorted(by_note.items()):
        note = vault.notes[moved_to.get(path, path)]
        text = note.text
        for edit in sorted(edits, key=lambda e: e.start, reverse=True):
            text = text[:edit.start] + edit.new + text[edit.end:]
        data = (b"\xef\xbb\xbf" if note.bom else b"") + text.encode("utf-8")
        # under the journal lock: an entry appended meanwhile is neither lost nor overwritten
        with _journal_lock(root / path) as current:
            if current != _text_bytes(note):
                p.skipped.append((path, "changed while archive ran; links not rewritten"))
                continue
            write_atomic(root / path, data, root=root)
        applied.extend(edits)
    p.edits = sorted(applied, key=lambda e: (e.path, e.line))
    if tracked is not None:
        changed = [e.path for e in applied if moved_to.get(e.path) in tracked]
        if changed:
            from vaultkit.vault.scan import git

            git(root, "add", "--", *sorted(set(changed)))
    p.index_updated = _refresh_index(vault)
    if p.index_updated and index_staged:
        # staged with the move it lists, so the commit of the move is not refused as stale
        from vaultkit.vault.scan import git

        git(root, "add", "--", index_staged)
    return p


def _index_to_stage(vault, tracked: set[str] | None) -> str | None:
    """INDEX.md's path when git tracks it and it has no unstaged edit (a run stages only what
    it writes, never an edit of the owner's), else None."""
    if not tracked:
        return None
    try:
        from vaultkit.links.indexgen import index_path
    except ImportError:
        return None
    path = index_path(vault)
    if path not in tracked:
        return None
    from vaultkit.vault.scan import git

    return path if git(vault.root, "diff", "--quiet", "--", path).returncode == 0 else None


@contextlib.contextmanager
def _journal_lock(path: Path):
    """Hold the lock ``vaultkit log`` takes, so no entry lands in a journal being moved."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield read_open(fd)
    finally:
        os.close(fd)


def _move(root: Path, old: str, new: str, data: bytes, tracked: set[str] | None) -> None:
    """Move one journal; the bytes at the destination are checked before the source goes."""
    from vaultkit.core.atomic import write_atomic

    src, dst = root / old, root / new
    digest = hashlib.sha256(data).digest()
    from vaultkit.core.confine import make_folders

    make_folders(root, dst.parent)
    if tracked is not None and old in tracked:
        from vaultkit.vault.scan import git

        proc = git(root, "mv", "--", old, new)
        if proc.returncode != 0:
            raise VaultkitError(f"git mv {old} {new} failed: "
                                f"{proc.stderr.decode(errors='replace').strip()}")
        if hashlib.sha256(dst.read_bytes()).digest() != digest:
            raise VaultkitError(f"{new}: content differs from {old} after git mv; stopped")
        return
    st = os.stat(src)
    write_atomic(dst, data, mode=st.st_mode & 0o7777, root=root)
    if hashlib.sha256(dst.read_bytes()).digest() != digest:
        os.unlink(dst)
        raise VaultkitError(f"{new}: the copy does not match {old}; original kept, stopped")
    try:
        shutil.copystat(src, dst)
    except OSError:
        pass
    os.unlink(src)


def _text_bytes(note) -> bytes:
    return (b"\xef\xbb\xbf" if note.bom else b"") + note.text.encode("utf-8")


def _git_tracked(root: Path) -> set[str] | None:
    """Vault-relative paths git tracks, or None when the vault is not in a work tree."""
    from vaultkit.vault.scan import git

    try:
        top = git(root, "rev-parse", "--show-toplevel")
    except OSError:
        return None
    if top.returncode != 0:
        return None
    proc = git(root, "ls-files", "-z", "--full-name", "--", ".")
    if proc.returncode != 0:
        return None
    toplevel = Path(top.stdout.decode().strip()).resolve()
    try:
        base = root.resolve().relative_to(toplevel).as_posix()
    except ValueError:
        return None
    base = "" if base == "." else base + "/"
    out = set()
    for name in proc.stdout.decode("utf-8", "surrogateescape").split("\0"):
        if name and name.startswith(base):
            out.add(name[len(base):])
    return out


def _refresh_index(vault) -> bool:
    try:
        from vaultkit.links.indexgen import index_path, write_index
    except ImportError:
        return False
    from vaultkit.vault.loader import load_vault

    if not (vault.root / index_path(vault)).exists():
        return False
    fresh = load_vault(vault.root, root=vault.root, settings=vault.settings)
    return write_index(fresh)

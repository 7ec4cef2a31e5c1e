"""Memory forensics: the losses a vault's git history holds, found in one pass.

:func:`scan_history` reads the history of the vault's memory files with one ``git log``
(``--raw -M --numstat``: every change with its blob ids, renames paired, lines added and
deleted per file), then reads the blob sizes it needs with two ``git cat-file
--batch-check`` and the blob contents with one ``git cat-file --batch``: five git
processes in all (with the ``rev-parse`` that finds the repository), whatever the number
of commits or notes. Only changes that removed lines are read in full, and no version
over ``budgets.max_file_bytes`` is loaded (:func:`_bounded_blobs`); a version over it or
missing from the store is a warning in :attr:`History.warnings`, and a ``git log`` that
stops on a missing object is read again as :func:`scan_history` describes.

The events it reports, newest first:

``journal-rewrite``
    A journal (``memory/YYYY-MM-DD.md``) whose committed lines were removed or rewritten:
    the old version is not a prefix of the new one, and lines of it are gone (a reorder
    loses nothing; text appended onto a last line without its newline is an append).
``mass-deletion``
    A structured, knowledge, topic (``memory/homelab.md``) or bootstrap file that lost the
    profile's share of its
    non-blank lines (``git: mass_deletion_ratio``, half by default) in one commit, or was
    emptied.
``journal-edit``
    A journal whose committed lines were edited, none lost: each changed line kept at least
    0.6 of its characters (a typo fixed, a number corrected, a clause reworded; the model
    of loss, :mod:`vaultkit.vault.loss`). Listed so the change is seen, not a loss:
    ``recover`` and the audit leave it; the old wording is in the commit before it.
``memory-shrink``
    ``MEMORY.md``, the curated layer, lost more durable lines in one commit than its pruning
    allowance: non-blank lines removed without going into another note the same commit
    wrote (a distillation into ``memory/lessons/...`` loses nothing; :func:`memory_md_cut`,
    the judgement the snapshot pass, the hook and ``vaultkit watch`` share).
``memory-pruned``
    A ``MEMORY.md`` cut within the pruning allowance (``git: memory_md_prune_ratio``, a
    quarter of its durable lines by default; :func:`vaultkit.vault.loss.prune_allowance`):
    curation, listed as pruned, not a loss. ``recover --all`` and the audit leave it alone;
    ``vaultkit recover ID`` still brings its lines back into the recovery note.
``note-deleted``
    A journal, structured, knowledge, topic or bootstrap note deleted (or moved out of the vault,
    or into ``.trash/``) without a move into the archive: nothing of the same name was
    added to the archive layer in the same commit.
``bootstrap-truncated``
    A period during which a bootstrap file was longer than the runtime's per-file limit
    (``bootstrapMaxChars``, 20,000 characters by default, counted as the runtime counts):
    from the commit that took it over the limit to the one that brought it back, or until
    now. Characters lost is the most the file was over.

Renames and moves into the archive are not losses; neither are the files the profile
lists as rewritten or deleted by design (``git: mass_deletion_exempt``: ``NOW.md``,
``BOOTSTRAP.md``), nor ``memory/INDEX.md`` (generated). Merge commits are skipped (their
changes are in the commits they merge).

Each event says whether it was *recovered* since, judged on the working tree: every lost
non-blank line is back in the file (where it lives now, after later renames) or in the
recovery note, or the note is back at its path or beside it. ``vaultkit recover``'s
marker comment proves nothing (anyone can write one): only the lines count. A truncation
period is recovered when it ended.

:func:`scan_work_tree_losses` adds, for ``history`` and ``recover``, the committed journal
lines the work tree lost since HEAD that no snapshot saw (``source`` ``"work-tree"``).

With ``since``, ``git log --since`` limits the pass: losses are per commit and exact; a
truncation period is seen only if the file changed inside the window.
"""

from __future__ import annotations

import datetime as dt
import fnmatch
import hashlib
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Iterator

from vaultkit.core.errors import VaultkitError

KINDS = ("journal-rewrite", "memory-shrink", "memory-pruned", "mass-deletion", "note-deleted",
         "bootstrap-truncated", "journal-edit")
MEMORY_MD = "MEMORY.md"
# a knowledge note: lines that have no journal to go back to
RECOVERY_NOTE = "semantic/recovered.md"
MARKER = "vaultkit-recovered"  # <!-- vaultkit-recovered <commit> <path> -->
_LOSS_LAYERS = ("journal", "bootstrap", "structured", "knowledge", "topics", "dated")
_NULL = "0" * 40

def run_git(args: list[str], cwd: Path, *, stdin: bytes | None = None, stream=None):
    """Run one git command through :mod:`vaultkit.core.gitenv` (the repository's command hooks,
    pager, fsmonitor, external diff and textconv drivers switched off).

    With ``stream`` (a file for its standard error), return the running process to read
    its output from as it comes; otherwise the completed process."""
    from vaultkit.core import gitenv

    try:
        if stream is not None:
            return gitenv.popen_git(args, cwd=cwd, stderr=stream)
        return gitenv.run_git(args, cwd=cwd, input=stdin)
    except FileNotFoundError:
        raise VaultkitError("git is not installed; history needs git") from None
    except OSError as exc:
        raise VaultkitError(f"git could not be run: {exc.strerror or exc}") from None


@dataclass
class Event:
    kind: str
    commit: str
    timestamp: int
    date: str  # the author date, ISO 8601 in the author's zone
    author: str
    subject: str
    path: str  # vault path at the time of the loss
    lines: int = 0  # non-blank lines lost
    bytes: int = 0
    chars: int = 0  # bootstrap-truncated: the most characters over the limit
    limit: int = 0
    limit_source: str = ""  # memory-pruned: where the pruning ratio came from
    current: str | None = None  # where the file is now (after later renames)
    recovered: bool = False
    # between commits: every line it lost was accepted as removed on purpose
    # (VAULTKIT_ACCEPT_DELETION, vaultkit.vault.loss.AcceptedRemovals): not a loss
    accepted: bool = False
    lost: list[str] = field(default_factory=list, repr=False)  # the lost lines, in order
    # journal-rewrite and journal-edit: the lines the new version holds and the old lacked
    # (an edit's new wording among them): what tells a branch switched to (_from_git)
    added: list[str] = field(default_factory=list, repr=False)
    blob: bytes | None = field(default=None, repr=False)  # note-deleted: the deleted file
    # the file's text before the loss, so that `recover` puts the lines back where they stood
    old: str | None = field(default=None, repr=False)
    before: int = 0  # non-blank lines before the commit
    end_commit: str | None = None  # bootstrap-truncated: the commit that ended the period
    end_date: str | None = None
    days: float = 0.0
    source: str = "commit"  # "snapshot": lost between commits, found in vaultkit's snapshots

    @property
    def id(self) -> str:
        digest = hashlib.sha1(f"{self.kind}\0{self.commit}\0{self.path}".encode()).hexdigest()
        return digest[:10]

    @property
    def day(self) -> str:
        return self.date[:10]

    @property
    def recoverable(self) -> bool:
        return self.kind != "bootstrap-truncated"

    @property
    def is_loss(self) -> bool:
        """False for a ``MEMORY.md`` prune within its allowance (curation), a journal's
        lines edited and a cut accepted on purpose: not a loss."""
        return self.kind not in ("memory-pruned", "journal-edit") and not self.accepted

    def describe(self) -> str:
        """What was lost, in a phrase."""
        s = "s" * (self.lines != 1)
        if self.kind == "journal-rewrite":
            return f"{self.lines} journal line{s} ({self.bytes:,} bytes) removed or rewritten"
        if self.kind == "journal-edit":
            return (f"{self.lines} committed journal line{s} edited (each kept most of its "
                    "text: a correction), none lost")
        if self.kind in ("memory-shrink", "mass-deletion"):
            return (f"{self.lines} of its {self.before} non-blank lines ({self.bytes:,} bytes) "
                    f"deleted")
        if self.kind == "memory-pruned":
            return (f"{self.lines} of its {self.before} durable lines ({self.bytes:,} bytes) "
                    f"pruned, within the allowance of {self.limit} "
                    f"({self.limit_source or 'git: memory_md_prune_ratio'})")
        if self.kind == "note-deleted":
            return f"deleted with {self.lines} non-blank line{s} ({self.bytes:,} bytes)"
        until = f"until {self.end_date[:10]}" if self.end_date else "until now"
        return (f"over the runtime's {self.limit:,}-character limit for {self.days:.1f} days "
                f"({until}), up to {self.chars:,} characters cut")

    def to_dict(self) -> dict:
        out = {"id": self.id, "kind": self.kind, "commit": self.commit, "date": self.date,
               "author": self.author, "subject": self.subject, "path": self.path,
               "current": self.current, "lines": self.lines, "bytes": self.bytes,
               "recovered": self.recovered}
        if self.kind == "memory-pruned":
            out["allowance"] = self.limit
            out["allowanceSource"] = self.limit_source
        if self.kind == "bootstrap-truncated":
            out.update(chars=self.chars, limit=self.limit, endCommit=self.end_commit,
                       endDate=self.end_date, days=round(self.days, 2))
            del out["lines"], out["bytes"]
        elif self.kind != "note-deleted":
            out["before"] = self.before
        if self.source != "commit":
            out["source"] = self.source
        if self.accepted:
            out["accepted"] = True
        return out


@dataclass
class Commit:
    sha: str
    timestamp: int
    date: str
    author: str
    subject: str
    changes: list = field(default_factory=list)  # [_Change]


@dataclass
class _Change:
    status: str
    old: str | None  # vault paths; None outside the vault
    new: str | None
    old_oid: str
    new_oid: str
    added: int | None = None  # numstat; None for binary files
    deleted: int | None = None
    counted: bool = True  # False: git could not count lines (an object missing)


@dataclass
class History:
    """What :func:`scan_history` found, and the series the HTML report draws."""

    events: list[Event]
    commits: int
    head: str | None
    memory_bytes: list[tuple[int, int]] = field(default_factory=list)  # (time, bytes)
    bootstrap_bytes: list[tuple[int, int]] = field(default_factory=list)
    layer_counts: list[tuple[int, dict[str, int]]] = field(default_factory=list)
    journal_days: Counter = field(default_factory=Counter)  # day -> journal lines added
    max_chars: int = 20000
    limits_source: str = ""
    # versions not judged: over the size bound, or missing from the object store
    warnings: list[str] = field(default_factory=list)
    # why there is no git history to read (a folder that is no repository), else ""
    outside_git: str = ""


# -- reading the history ----------------------------------------------------------------

class _Repo:
    """Where the vault sits in its repository (paths both ways), from one ``rev-parse``."""

    def __init__(self, root: Path, settings):
        from vaultkit.vault.gitstate import GitState

        stub = SimpleNamespace(root=root, profile=settings.profile, settings=settings)
        self.state = GitState(stub)  # type: ignore[arg-type]
        if not self.state.available:
            raise VaultkitError(f"history needs git: {self.state.reason}")
        self.settings = settings
        self.profile = settings.profile
        self.root = root
        self._vault_paths: dict[str, str | None] = {}  # a path recurs in many commits
        self._layers: dict[str, str | None] = {}

    def vault_path(self, repo_path: str) -> str | None:
        try:
            return self._vault_paths[repo_path]
        except KeyError:
            path = self._vault_paths[repo_path] = self._vault_path(repo_path)
            return path

    def _vault_path(self, repo_path: str) -> str | None:
        path = self.state.vault_path(repo_path)
        if path is None:
            return None
        if not path.startswith("../"):
            from vaultkit.vault.scan import in_skipped_folder

            if in_skipped_folder(path) or \
                    self.settings.is_excluded(path):
                return None  # .trash/ and excluded folders: out of the vault
        return path

    def layer_of(self, path: str) -> str | None:
        try:
            return self._layers[path]
        except KeyError:
            layer = self._layers[path] = self.state.layer_of(path)
            return layer

    def pathspecs(self) -> list[str]:
        """The vault (and the bootstrap files above a memory-only vault), as literal
        paths: git skips every other folder of the repository."""
        return self.state._pathspecs()

    def markdown_pathspecs(self) -> list[str]:
        """The Markdown files of the vault (and the bootstrap files above a memory-only
        vault): the only files history judges. Read with these, an image or a binary whose
        object is missing (a partial or shallow clone, a damaged store) is never read, and
        never stops the pass; but git then matches every path of every commit (several
        times slower), so they are only used when the plain read hit a missing object."""
        prefix = "" if self.state.down else self.state.prefix
        escaped = re.sub(r"([*?\[\]\\])", r"\\\1", prefix)
        external = [":(top,literal)" + p for p in self.state._external]
        return [f":(top,glob,icase){escaped}**/*.md", *external]


def _tokens(stream) -> Iterator[bytes]:
    """The NUL-separated fields of a stream, as they arrive (parsing overlaps git's work)."""
    rest = b""
    while True:
        chunk = stream.read(1 << 20)
        if not chunk:
            break
        fields = (rest + chunk).split(b"\0")
        rest = fields.pop()
        yield from fields
    if rest:
        yield rest


def _parse_log(tokens, repo: _Repo) -> list[Commit]:
    """Commits of ``git log -z --raw --numstat`` with the header format of ``scan_history``."""
    tokens = iter(tokens)
    commits: list[Commit] = []
    current: Commit | None = None
    pending: dict[str, _Change] = {}  # repo path (new side) -> change, for numstat
    raw: list = []
    for token in tokens:
        token = token.lstrip(b"\n")
        if token.startswith(b"\x1e"):
            sha, stamp, date, author, subject = token[1:].decode(
                "utf-8", "replace").split("\x1f", 4)
            current = Commit(sha, int(stamp), date, author, subject)
            commits.append(current)
            pending = {}
            raw = current.changes
            continue
        if current is None or not token:
            continue
        if token.startswith(b":"):
            parts = token[1:].decode("ascii", "replace").split()
            status = parts[4][:1] if len(parts) >= 5 else "?"
            count = 2 if status in ("R", "C") else 1
            paths = [os.fsdecode(next(tokens, b"")) for _ in range(count)]
            old_repo, new_repo = (paths[0], paths[-1]) if paths else (None, None)
            if status == "A":
                old_repo = None
            elif status == "D":
                new_repo = None
            change = _Change(status, repo.vault_path(old_repo) if old_repo else None,
                             repo.vault_path(new_repo) if new_repo else None,
                             parts[2] if len(parts) > 2 else _NULL,
                             parts[3] if len(parts) > 3 else _NULL)
            pending[new_repo or old_repo or ""] = change
            if change.old is not None or change.new is not None:
                raw.append(change)
            continue
        fields = token.split(b"\t", 2)
        if len(fields) == 3:  # numstat: added, deleted, path (empty: a rename follows)
            path = os.fsdecode(fields[2])
            if not path:  # old path, then new path
                next(tokens, b"")
                path = os.fsdecode(next(tokens, b""))
            change = pending.get(path)
            if change is not None:
                change.added = int(fields[0]) if fields[0].isdigit() else None
                change.deleted = int(fields[1]) if fields[1].isdigit() else None
    return commits


def _read_blobs(root: Path, oids: list[str], *, sizes_only: bool = False) -> dict:
    """``{oid: bytes}`` (or ``{oid: size}``) for ``oids``, with one ``git cat-file``;
    an object missing from the store is left out. Read contents only of blobs whose size
    :func:`_bounded_blobs` checked first."""
    oids = [o for o in dict.fromkeys(oids) if o and o != _NULL]
    if not oids:
        return {}
    mode = "--batch-check" if sizes_only else "--batch"
    proc = run_git(["cat-file", mode], root, stdin="".join(o + "\n" for o in oids).encode())
    out = proc.stdout
    result: dict = {}
    pos, end = 0, len(out)
    while pos < end:
        eol = out.find(b"\n", pos)
        if eol < 0:
            break
        header = out[pos:eol].decode("ascii", "replace").split()
        pos = eol + 1
        if len(header) != 3:  # "<oid> missing"
            continue
        oid, size = header[0], int(header[2])
        if sizes_only:
            result[oid] = size
        else:
            result[oid] = out[pos:pos + size]
            pos += size + 1
    return result


def _bounded_blobs(root: Path, wanted: dict[str, tuple[str, str]], limit: int,
                   sizes: dict[str, int], warnings: list[str]) -> dict[str, bytes]:
    """The contents of the ``wanted`` blobs (``{oid: (commit, path)}``), each read only
    after its size is known (``git cat-file --batch-check``, recorded in ``sizes``) to be
    at most ``limit`` bytes (``budgets.max_file_bytes``, the bound of a note on disk).

    A version over the limit is never loaded: the pass once took 801 MB for a 68 MB
    journal rewrite and ran out of memory on a 137 MB one. It, and a version missing from
    the object store, is a warning naming the commit and the path; the change it belongs
    to is not judged."""
    todo = [o for o in wanted if o and o != _NULL]
    unknown = [o for o in todo if o not in sizes]
    sizes.update(_read_blobs(root, unknown, sizes_only=True))
    readable = []
    for oid in todo:
        commit, path = wanted[oid]
        size = sizes.get(oid)
        if size is None:
            warnings.append(f"{path} in {commit[:10]}: git object {oid[:10]} is missing from "
                            "the repository (a partial or shallow clone, or a damaged "
                            "store); that change is not judged")
        elif size > limit:
            warnings.append(f"{path} in {commit[:10]}: a version (git object {oid[:10]}) of "
                            f"{size:,} bytes, over the "
                            f"{limit:,}-byte limit (budgets.max_file_bytes); not read, that "
                            "change is not judged")
        else:
            readable.append(oid)
    return _read_blobs(root, readable)


# -- comparing versions -----------------------------------------------------------------

def _text(data: bytes | None) -> str:
    from vaultkit.vault.gitstate import decode

    return "" if data is None else decode(data)


def lost_lines(old: str, new: str) -> list[str]:
    """The lines of ``old`` that ``new`` lost: :func:`vaultkit.vault.loss.judge`, the one
    judgement of a loss (the hook's, ``recover``'s, ``watch``'s and the audit's too): an
    edit of a line (a typo fixed, a number corrected) is not a loss, nor is a rename's
    link rewrite."""
    from vaultkit.vault.loss import judge

    return judge(old, new).lost


def _without(lines: list[str], elsewhere: Counter) -> list[str]:
    """``lines`` minus those ``elsewhere`` holds (multiset)."""
    if not elsewhere:
        return lines
    elsewhere = Counter(elsewhere)
    out = []
    for line in lines:
        if line.strip() and elsewhere[line] > 0:
            elsewhere[line] -= 1
        else:
            out.append(line)
    return out


def memory_md_cut(old: str, new: str, elsewhere: Counter) -> list[str]:
    """The lines a change of ``MEMORY.md`` from ``old`` to ``new`` took away, less those
    ``elsewhere`` holds (the other notes the same commit or snapshot wrote): the one
    judgement of a ``MEMORY.md`` cut, in git history and between commits alike. Its lines
    are the curated, durable layer, so it is measured against its own pruning allowance
    (:func:`vaultkit.vault.loss.prune_allowance`), not ``mass_deletion_ratio``; a
    distillation that moves lines into another note (``memory/lessons/...``) loses
    nothing."""
    return _without(lost_lines(old, new), elsewhere)


def _nonblank(lines) -> list[str]:
    return [line for line in lines if line.strip()]


def _bytes_of(lines) -> int:
    return sum(len(line.encode("utf-8")) + 1 for line in lines)


# -- the pass -----------------------------------------------------------------------------

def scan_history(root: Path, settings, *, since: str | None = None,
                 max_chars: int | None = None, limits_source: str = "") -> History:
    """Every memory-loss event in the vault's history (see the module docs), newest first."""
    repo = _Repo(root, settings)
    state = repo.state
    if not state.has_head:
        return History([], 0, None, max_chars=max_chars or 0, limits_source=limits_source)
    if max_chars is None:
        from vaultkit.vault.openclaw import bootstrap_limits

        workspace = root if settings.profile.memory_prefix else root.parent
        max_chars, _, limits_source = bootstrap_limits(SimpleNamespace(
            root=root, profile=settings.profile, settings=settings, workspace=workspace))
    # a version over the read bound is not diffed either: git counts it as binary ("-"),
    # and its change is read (and warned about) like any change git could not count
    args = ["-c", f"core.bigFileThreshold={settings.profile.budgets.max_file_bytes}",
            "log", "--no-merges", "--reverse", "-z", "--raw", "--numstat", "-M",
            "--no-abbrev", "--no-color",
            "--format=%x1e%H%x1f%at%x1f%aI%x1f%an <%ae>%x1f%s"]
    if since:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", since.strip()):
            since = since.strip() + "T00:00:00"  # git reads a bare date as that day at this hour
        args.append(f"--since={since}")
    commits, failure = _log(repo, args + ["HEAD", "--", *repo.pathspecs()])
    if failure is not None and _MISSING.search(failure):
        # an object is missing: perhaps one history does not judge (an image, a binary)
        commits, failure = _log(repo, args + ["HEAD", "--", *repo.markdown_pathspecs()])
    warnings = []
    if failure is not None and _MISSING.search(failure):
        # a Markdown version --numstat (or rename detection) needs is missing: read the
        # changes without them; each is then judged from the versions that can be read
        plain = [a for a in args if a not in ("--numstat", "-M")] + ["--no-renames"]
        commits, again = _log(repo, plain + ["HEAD", "--", *repo.markdown_pathspecs()])
        if again is not None:
            raise VaultkitError("git log failed: " + again)
        warnings.append(f"git could not read every version ({failure}); lines were counted "
                        "from the versions that could be read, renames were not followed")
        for commit in commits:
            for change in commit.changes:
                change.counted = False
    elif failure is not None:
        raise VaultkitError("git log failed: " + failure)
    history = _analyse(repo, commits, max_chars, limits_source)
    history.warnings[:0] = warnings
    from vaultkit.vault.loss import AcceptedRemovals

    # a commit that took lines out with VAULTKIT_ACCEPT_DELETION (a `git revert --no-commit`
    # of an entry, an older entry cut in an amend) was told they go on purpose, as a
    # snapshot's loss is
    record = AcceptedRemovals(root)
    if record.files:
        for event in history.events:
            _accept(event, record)
    return history


_MISSING = re.compile(r"unable to read|missing (blob|object)|bad object|could not read",
                      re.IGNORECASE)


def _log(repo: _Repo, args: list[str]) -> tuple[list[Commit], str | None]:
    """The commits of one ``git log``, and git's first error line when it failed."""
    import tempfile

    with tempfile.TemporaryFile() as errors:
        proc = run_git(args, repo.state.toplevel, stream=errors)
        try:
            commits = _parse_log(_tokens(proc.stdout), repo)
        finally:
            proc.stdout.close()
            code = proc.wait()
        if code != 0:
            errors.seek(0)
            detail = errors.read().decode("utf-8", "replace").strip().splitlines()
            return commits, (detail[0] if detail else "no message")
    return commits, None


def _analyse(repo: _Repo, commits: list[Commit], max_chars: int, source: str) -> History:
    profile = repo.profile
    ratio = profile.git.mass_deletion_ratio
    from vaultkit.vault.loss import prune_setting

    prune, prune_source = prune_setting(repo.settings, repo.root)
    exempt = [re.compile(fnmatch.translate(p)) for p in profile.git.mass_deletion_exempt]
    index_path = profile.expand(profile.index.path) if profile.index else ""
    memory_md = MEMORY_MD if profile.memory_prefix else "../" + MEMORY_MD

    def lossy(path: str | None) -> str | None:
        """The layer of a memory file whose losses count, else None."""
        if path is None or not path.lower().endswith(".md") or path == index_path:
            return None
        layer = repo.layer_of(path)
        if layer not in _LOSS_LAYERS:
            return None
        if any(p.match(path.removeprefix("../")) for p in exempt):
            return None
        return layer

    # first walk: what to read, the series that need no blob
    line_counts: dict[str, int] = {}
    candidates: list[tuple[int, str, _Change, str]] = []  # (commit index, kind, change, layer)
    renames: list[tuple[int, str, str]] = []
    layer_now: Counter = Counter()
    layer_series: list[tuple[int, dict[str, int]]] = []
    journal_days: Counter = Counter()
    bootstrap_steps: list[tuple[int, str, str | None]] = []  # (commit index, path, oid)
    first_oids: dict[str, str] = {}
    seen: set[str] = set()
    for index, commit in enumerate(commits):
        archive_names = {c.new.rsplit("/", 1)[-1] for c in commit.changes
                         if c.new is not None and c.status in ("A", "R", "C")
                         and repo.layer_of(c.new) == "archive"}
        for c in commit.changes:
            old_layer = repo.layer_of(c.old) if c.old else None
            new_layer = repo.layer_of(c.new) if c.new else None
            if c.status != "A" and c.old is not None and c.old.lower().endswith(".md"):
                layer_now[old_layer] -= 1
            if c.new is not None and c.status != "D" and c.new.lower().endswith(".md"):
                layer_now[new_layer] += 1
            if old_layer == "bootstrap":
                if c.old not in seen:  # its version before the first commit read
                    first_oids[c.old] = c.old_oid
                if c.new != c.old:
                    bootstrap_steps.append((index, c.old, None))
            if new_layer == "bootstrap":
                bootstrap_steps.append((index, c.new, c.new_oid))
            seen.update(p for p in (c.old, c.new) if p)
            if new_layer == "journal" and c.added:
                journal_days[commit.date[:10]] += c.added
            known = line_counts.pop(c.old, None) if c.old else None
            if c.new is not None and c.added is not None:
                base = 0 if c.status == "A" else known
                if base is not None:
                    line_counts[c.new] = base + c.added - (c.deleted or 0)
            if c.status == "R" and c.old != c.new and c.old is not None and c.new is not None:
                renames.append((index, c.old, c.new))
            layer = lossy(c.old)
            if layer is None or c.status in ("A", "C"):
                continue
            if c.new is None:  # deleted, or moved out of the vault
                if c.old.rsplit("/", 1)[-1] in archive_names:
                    continue  # an archive move git did not pair up
                candidates.append((index, "note-deleted", c, layer))
                continue
            uncounted = not c.counted or c.deleted is None  # git did not count its lines
            if c.status == "R" and new_layer == "archive":
                if c.deleted or uncounted:
                    candidates.append((index, "journal-rewrite" if layer == "journal"
                                       else "mass-deletion", c, layer))
                continue
            if not c.deleted and not uncounted:
                continue
            if layer == "journal":
                candidates.append((index, "journal-rewrite", c, layer))
            elif (c.old == memory_md or known is None or uncounted
                  or c.deleted >= ratio * known / 2):
                candidates.append((index, "memory-shrink" if c.old == memory_md
                                   else "mass-deletion", c, layer))
        layer_series.append((commit.timestamp, {k: v for k, v in layer_now.items() if k}))

    # second: sizes of every bootstrap version, contents of what may be a loss
    sizes = _read_blobs(repo.state.toplevel, [o for _, _, o in bootstrap_steps if o]
                        + list(first_oids.values()), sizes_only=True)
    wanted: dict[str, tuple[str, str]] = {}  # oid -> (commit, path) it is read for
    for index, kind, c, _ in candidates:
        sha = commits[index].sha
        wanted.setdefault(c.old_oid, (sha, f"{c.old} (before)"))
        if kind != "note-deleted":
            wanted.setdefault(c.new_oid, (sha, str(c.new)))
    where = {oid: (commits[i].sha, path) for i, path, oid in bootstrap_steps if oid}
    where.update({oid: (commits[0].sha, f"{path} (before)") for path, oid in first_oids.items()
                  if commits})
    for oid, size in sizes.items():
        if size > max_chars:
            wanted.setdefault(oid, where.get(oid, ("", oid)))
    # lines a cut moved into another note of the same commit are not lost: read those notes
    moved_into: dict[int, list[tuple[str, str]]] = {}
    for index, kind, _, _ in candidates:
        if kind != "journal-rewrite" and index not in moved_into:
            moved_into[index] = [(c.new, c.new_oid) for c in commits[index].changes
                                 if c.new is not None and c.status != "D"
                                 and c.new.lower().endswith(".md")]
            for path, oid in moved_into[index]:
                wanted.setdefault(oid, (commits[index].sha, path))
    warnings: list[str] = []
    blobs = _bounded_blobs(repo.state.toplevel, wanted, profile.budgets.max_file_bytes,
                           sizes, warnings)

    def lines_of(oid: str) -> list[str]:
        return _text(blobs.get(oid)).replace("\r\n", "\n").split("\n")

    moved_all: dict[int, Counter] = {}  # per commit: the lines of every note it wrote

    def moved(index: int, path: str) -> Counter:
        """Lines the other notes written by commit ``index`` hold (all but ``path``)."""
        if index not in moved_all:
            moved_all[index] = Counter(line for _, oid in moved_into.get(index, [])
                                       for line in lines_of(oid))
        own = [oid for p, oid in moved_into.get(index, []) if p == path]
        if not own:
            return moved_all[index]
        return moved_all[index] - Counter(line for oid in own for line in lines_of(oid))

    events: list[Event] = []
    for index, kind, c, layer in candidates:
        commit = commits[index]
        old = _text(blobs.get(c.old_oid))
        event = Event(kind, commit.sha, commit.timestamp, commit.date, commit.author,
                      commit.subject, c.old, current=c.old)
        if kind == "note-deleted":
            nonblank = _nonblank(old.splitlines())
            if not nonblank or not _nonblank(_without(old.splitlines(), moved(index, c.old))):
                continue  # empty, or every line went into another note
            event.lines, event.before = len(nonblank), len(nonblank)
            event.bytes = len(blobs.get(c.old_oid) or b"")
            event.blob = blobs.get(c.old_oid)
            event.lost = old.splitlines()
            event.path = event.current = c.old
        else:
            from vaultkit.vault.gitstate import content_lines, first_change

            new = _text(blobs.get(c.new_oid))
            if c.old_oid not in blobs or c.new_oid not in blobs:
                continue
            if kind == "journal-rewrite":
                if first_change(old, new) is None:
                    continue  # an append (onto a last line without its newline, too)
                from vaultkit.vault.loss import judge
                from vaultkit.vault.loss import lost_lines as lacking

                judged = judge(old, new)
                lost = judged.lost
                event.added = lacking(new, old)  # (the new version's lines the old lacks)
                if not _nonblank(lost) and judged.edited:
                    event.kind = "journal-edit"  # corrected, nothing lost: listed, not a loss
                    lost = [was for was, _ in judged.edited]
            elif kind == "memory-shrink":
                from vaultkit.vault.loss import prune_allowance

                lost = memory_md_cut(old, new, moved(index, c.new))
                event.before = content_lines(old)
                event.limit = prune_allowance(event.before, prune)
                event.limit_source = prune_source
                if 0 < len(_nonblank(lost)) <= event.limit:
                    event.kind = "memory-pruned"  # curation within the allowance
            else:
                before, after = content_lines(old), content_lines(new)
                if before == 0 or (after > 0 and before - after < ratio * before):
                    continue
                lost = _without(lost_lines(old, new), moved(index, c.new))
                if after > 0 and len(_nonblank(lost)) < ratio * before:
                    continue  # most of the cut went into another note
                event.before = before
            nonblank = _nonblank(lost)
            if not nonblank:
                continue
            event.before = event.before or content_lines(old)
            event.lost, event.lines, event.bytes = lost, len(nonblank), _bytes_of(lost)
            event.current, event.old = c.new, old
        event.current = _follow(event.current, index, renames)
        events.append(event)

    events += _truncation_periods(commits, bootstrap_steps, first_oids, sizes, blobs,
                                  max_chars)
    memory_series, bootstrap_series = _size_series(commits, bootstrap_steps, first_oids, sizes,
                                                   memory_md)
    for event in events:
        event.recovered = _is_recovered(repo, event)
    events.sort(key=lambda e: (e.timestamp, KINDS.index(e.kind)), reverse=True)
    return History(events, len(commits), commits[-1].sha if commits else None,
                   memory_series, bootstrap_series, layer_series, journal_days, max_chars,
                   source, warnings)


def _follow(path: str | None, index: int, renames: list[tuple[int, str, str]]) -> str | None:
    """Where ``path`` went through the renames made after commit ``index``."""
    for at, old, new in renames:
        if at > index and old == path:
            path = new
    return path


def _size_series(commits, steps, first_oids, sizes, memory_md):
    """``(time, bytes)`` of MEMORY.md and of the whole bootstrap set after each change."""
    current = {p: sizes.get(o, 0) for p, o in first_oids.items()}
    memory, total = [], []
    for index, path, oid in steps:
        current[path] = sizes.get(oid, 0) if oid else 0
        stamp = commits[index].timestamp
        if path == memory_md:
            memory.append((stamp, current[path]))
        total.append((stamp, sum(current.values())))
    return memory, total


def _truncation_periods(commits, steps, first_oids, sizes, blobs, max_chars) -> list[Event]:
    from vaultkit.vault.runtimes import js_trim_end, u16len

    def length(oid: str | None) -> int:
        if not oid or sizes.get(oid, 0) <= max_chars:  # a UTF-16 unit needs a byte or more
            return 0
        if oid not in blobs:  # over the read bound (or missing): at least a unit per 4 bytes
            return sizes[oid] // 4
        return u16len(js_trim_end(_text(blobs.get(oid))))  # as OpenClaw counts

    open_periods: dict[str, Event] = {}
    out: list[Event] = []
    now = int(dt.datetime.now(dt.timezone.utc).timestamp())
    for path, oid in first_oids.items():  # over already when the window began
        over = length(oid) - max_chars
        if over > 0 and commits:
            first = commits[0]
            open_periods[path] = Event("bootstrap-truncated", first.sha, first.timestamp,
                                       first.date, first.author, first.subject, path,
                                       chars=over, limit=max_chars, current=path)
    for index, path, oid in steps:
        commit = commits[index]
        over = length(oid) - max_chars
        period = open_periods.get(path)
        if over > 0:
            if period is None:
                open_periods[path] = Event("bootstrap-truncated", commit.sha, commit.timestamp,
                                           commit.date, commit.author, commit.subject, path,
                                           chars=over, limit=max_chars, current=path)
            else:
                period.chars = max(period.chars, over)
        elif period is not None:
            period.end_commit, period.end_date = commit.sha, commit.date
            period.days = (commit.timestamp - period.timestamp) / 86400
            out.append(open_periods.pop(path))
    for period in open_periods.values():
        period.days = (now - period.timestamp) / 86400
        out.append(period)
    return out


# -- recovered since? ------------------------------------------------------------------------

def file_on_disk(root: Path, vault_path: str) -> Path:
    return (root.parent / vault_path[3:]) if vault_path.startswith("../") else root / vault_path


def recovery_note(profile) -> str:
    return profile.memory_prefix + RECOVERY_NOTE


def beside(path: str, commit: str) -> str:
    """Where a deleted note goes back when its path is taken: ``name.recovered-<sha7>.md``."""
    stem, dot, ext = path.rpartition(".")
    return f"{stem}.recovered-{commit[:7]}.{ext}" if dot else f"{path}.recovered-{commit[:7]}"


def marker(event: Event) -> str:
    """The comment recover writes above what it brings back (it proves nothing: see
    :func:`_is_recovered`); the path is :func:`quoted` and cannot close the comment."""
    return f"<!-- {MARKER} {event.commit} {quoted(event.path).replace('--', '- -')} -->"


def quoted(text: str) -> str:
    """Text from git's metadata (a commit subject, an author's name) as it may be written
    into memory: a credential in it is never written (the whole text is replaced by what
    holds it, masked: ``log`` refuses exactly this), and control characters are escaped."""
    from vaultkit.vault.secretscan import first_secret

    found = first_secret(text)
    if found is not None:
        return f"[not quoted: it holds a {found.describe()}]"
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii")
                   for ch in text)


def credential_lines(lines: list[str]) -> dict[str, str]:
    """``{line: placeholder}`` for the lost lines that hold a credential the detector
    recognises (scanned together, so a table's header still names a column). ``recover``
    writes the placeholder instead (a commit may have removed the line to remove the
    credential; ``log`` refuses to write one), and such a line does not count when an
    event's recovery is judged."""
    from vaultkit.vault.secretscan import has_candidates, scan_text

    text = "\n".join(lines)
    if not has_candidates(text):
        return {}
    out: dict[str, str] = {}
    for found in scan_text(text):
        line = lines[found.line - 1]
        out.setdefault(line, f"<!-- vaultkit recover: a line holding a {found.describe()} "
                             "is not brought back; credentials stay out of memory -->")
    return out


def _judged(lines: list[str]) -> list[str]:
    """The lost lines whose presence proves a recovery: all but those with a credential."""
    withheld = credential_lines(lines)
    return [line for line in lines if line not in withheld] if withheld else lines


READ_LIMIT = 16 * 1024 * 1024  # a memory file larger than this is not read back


def _read(path: Path) -> str | None:
    """A file's text, or None when it is missing, unreadable or not a regular file."""
    from vaultkit.core.bounded import read_regular

    try:
        return read_regular(path, READ_LIMIT).decode("utf-8", "replace")
    except OSError:
        return None


def _holds(text: str | None, lines: list[str]) -> bool:
    if text is None:
        return False
    have = Counter(text.replace("\r\n", "\n").split("\n"))
    need = Counter(_nonblank(lines))
    return all(have[line] >= k for line, k in need.items())


def missing_lines(text: str | None, lost: list[str]) -> list[str]:
    """The lost lines ``text`` does not hold (blank lines between them kept)."""
    have = Counter((text or "").replace("\r\n", "\n").split("\n"))
    out = []
    for line in lost:
        if not line.strip():
            out.append(line)
        elif have[line] > 0:
            have[line] -= 1
        else:
            out.append(line)
    while out and not out[0].strip():
        out.pop(0)
    while out and not out[-1].strip():
        out.pop()
    return out


# a day's journal with something after its date: a sync tool's conflict copy
# (`2026-12-07.sync-conflict-20261207-213000-ABCDEFG.md`, `2026-12-07 (conflict ...).md`)
# or a timestamped variant, which journal-filename says to append to the day's journal
_COPY_OF_JOURNAL = re.compile(r"(\d{4}-\d{2}-\d{2})[^\d/][^/]*\.md", re.IGNORECASE)


def _journal_of_copy(path: str) -> str | None:
    """The day's journal beside ``path`` when ``path`` is a copy or variant of it: a copy
    deleted once its lines are in that journal (merged by hand, or the same lines all
    along) lost nothing."""
    folder, _, name = path.rpartition("/")
    m = _COPY_OF_JOURNAL.fullmatch(name)
    if m is None:
        return None
    return f"{folder}/{m.group(1)}.md" if folder else f"{m.group(1)}.md"


def _is_recovered(repo: _Repo, event: Event) -> bool:
    if event.kind == "journal-edit":
        return False  # nothing was lost
    if event.kind == "bootstrap-truncated":
        return event.end_commit is not None
    root = repo.root
    if event.kind == "note-deleted":
        places = [event.path, beside(event.path, event.commit)]
        journal = _journal_of_copy(event.path)
        if journal is not None:
            places.append(journal)
        for place in places:
            if _holds(_read(file_on_disk(root, place)), _judged(event.lost)):
                return True
        return False
    texts = [_read(file_on_disk(root, event.current or event.path)),
             _read(root / recovery_note(repo.profile))]
    # proven by the lost lines being there, never by recover's marker comment: a marker
    # is text anyone (an agent tidying MEMORY.md) can write without bringing anything back
    return not _nonblank(missing_lines("\n".join(t for t in texts if t), _judged(event.lost)))


# -- between commits: vaultkit's snapshots ---------------------------------------------------

class _SnapshotRepo(_Repo):
    """:class:`_Repo` for the snapshot chain: its paths are vault paths already."""

    def __init__(self, root: Path, settings, store):
        self.state = SimpleNamespace(toplevel=store.cwd)
        self.settings = settings
        self.profile = settings.profile
        self.root = root
        self.store = store
        self._vault_paths = {}
        self._layers = {}

    def _vault_path(self, repo_path: str) -> str | None:
        from vaultkit.vault.snapshots import vault_path_of

        path = vault_path_of(repo_path)
        if not path.startswith("../") and self.settings.is_excluded(path):
            return None
        return path

    def layer_of(self, path: str) -> str | None:
        try:
            return self._layers[path]
        except KeyError:
            layer = "bootstrap" if path.startswith("../") else self.profile.layer_of(path)
            self._layers[path] = layer
            return layer

    def pathspecs(self) -> list[str]:
        return []


def scan_snapshot_losses(root: Path, settings, *, since: str | None = None,
                         record: bool = True, warnings: list[str] | None = None) -> list[Event]:
    """The losses between commits: the same events as :func:`scan_history` (but truncation
    periods) found in vaultkit's snapshot chain (:mod:`vaultkit.vault.snapshots`), each
    with ``source`` ``"snapshot"``. Empty when the vault has no snapshots.

    With ``record`` a snapshot of the files as they are now is taken first, so a loss
    since the last snapshot is found too (the files are only read; the snapshot goes to
    the private ref). Every read of the chain is bounded as the git history's are (the
    log read as it comes, at most ``MAX_CHANGES`` changed files and ``MAX_CHAIN``
    snapshots; no version over ``budgets.max_file_bytes``): what is not read goes into
    ``warnings``."""
    from vaultkit.vault.snapshots import MAX_CHAIN, MAX_CHANGES, open_store

    store = open_store(root, settings)
    if store is None:
        return []
    try:
        return _snapshot_losses(root, settings, store, since, record, MAX_CHAIN, MAX_CHANGES)
    finally:
        if warnings is not None:
            warnings.extend(w for w in store.warnings if w not in warnings)


def _snapshot_losses(root, settings, store, since, record, max_chain, max_changes):
    if record:
        store.snapshot(prune=False)
    if store.head() is None:
        return []
    repo = _SnapshotRepo(root, settings, store)
    # (a version over the read bound is not diffed by git either, as in scan_history)
    args = ["-c", f"core.bigFileThreshold={settings.profile.budgets.max_file_bytes}",
            "log", "--no-merges", "--reverse", "-z", "--raw", "--numstat", "-M",
            "--no-abbrev", "--no-color", f"--max-count={max_chain + 1}",
            "--format=%x1e%H%x1f%at%x1f%aI%x1f%an <%ae>%x1f%s"]
    if since:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", since.strip()):
            since = since.strip() + "T00:00:00"
        args.append(f"--since={since}")
    args.append(store.ref)
    fields, _ = store.listing(args, what=("the chain's log", "changed files"),
                              limit=max_changes, counted=lambda f: f[:1] == b":")
    commits = _parse_log(iter(fields), repo)
    if len(commits) > max_chain:  # (one more than the bound asked for: the oldest, left out)
        del commits[0]
        store.warn(f"{store.ref}: the chain holds more than {max_chain:,} snapshots; the "
                   "older ones are not read")
    history = _analyse(repo, commits, 1 << 62, "")
    for warning in history.warnings:  # (a version over budgets.max_file_bytes, missing)
        store.warn(f"{store.ref}: {warning}")
    events = [e for e in history.events if e.kind != "bootstrap-truncated"]
    from vaultkit.vault.loss import AcceptedRemovals

    record = AcceptedRemovals(root)
    for event in events:
        event.source = "snapshot"
        event.recovered = event.recovered or _is_recovered(repo, event)
        _accept(event, record)
    if any(not e.recovered or e.kind == "journal-rewrite" for e in events):
        from vaultkit.vault.gitstate import GitState

        stub = SimpleNamespace(root=root, profile=settings.profile, settings=settings)
        state = GitState(stub)  # type: ignore[arg-type]
        if state.available:
            # (a change git made, a commit lists, or a branch switched to, is listed by the
            # commits or not at all, recovered or not: each change is listed once)
            events = [e for e in events if not _from_git(state, e) and (
                e.recovered or not _held_by_git(state, e))]
    events.sort(key=lambda e: (e.timestamp, KINDS.index(e.kind)), reverse=True)
    return events


def _accept(event: Event, record) -> None:
    """Leave out of ``event`` the lines a commit accepted as removed on purpose
    (``VAULTKIT_ACCEPT_DELETION``; ``record``, the workspace's
    :class:`~vaultkit.vault.loss.AcceptedRemovals`): when it lost no other line it is
    ``accepted``, listed but not a loss; otherwise its lines are the others."""
    if event.recovered or event.kind == "bootstrap-truncated":
        return
    mine = record.of(event.current or event.path) or record.of(event.path)
    if not mine:
        return
    rest = [line for line in event.lost if line not in mine]
    if not _nonblank(rest):
        event.accepted = True
    elif len(rest) != len(event.lost):
        event.lost = rest
        event.lines = len(_nonblank(rest))


def _from_git(state, event: Event) -> bool:
    """True when a journal change between commits (a loss or an edit) is git's, not the
    owner's: a commit lists it, or it is a branch switch. Either every line it took out is
    one a commit of another branch, a tag, a remote-tracking branch or HEAD's ancestors
    holds in that file and HEAD's version does not (an entry of a branch left for another
    is that branch's: `recover` must not copy it here; an edit committed since is the
    commit's event), or every line it brought in is such a line (a switch to another
    branch) and what it took out is committed and back in the file (switched back).
    Lines HEAD's version holds and the file lacks count as lost: the work tree lost them.
    A change with any other line is kept whole: its lines are matched by text alone, and a
    common line ("- Tests pass") of an entry lost here is no less lost for another
    branch's entry holding the same text."""
    from vaultkit.vault.gitstate import split_lines

    path = event.current or event.path
    if event.kind not in ("journal-rewrite", "journal-edit") or not state.has_head \
            or state.repo_path(path) is None:
        return False
    committed = state.lines_committed(path)
    if not committed:
        return False
    elsewhere = committed - set(split_lines(state.committed_text(path) or "")[0])
    lost = _nonblank(event.lost)
    if all(line in elsewhere for line in lost):
        return True
    added = _nonblank(event.added)
    if not added or not all(line in elsewhere for line in added):
        return False
    back = Counter(split_lines(_read(file_on_disk(state.root, path)) or "")[0])
    return all(line in committed and (line in elsewhere or back[line] > 0) for line in lost)


def _held_by_git(state, event: Event) -> bool:
    """True when the lines of a loss between commits are staged (a version other than
    HEAD's) or in a stash (`git stash`): git moved them on purpose and they are not lost
    (:func:`vaultkit.vault.loss.judge`, the hook's judgement, with the same holders)."""
    from vaultkit.vault.loss import judge

    path = event.current or event.path
    if state.repo_path(path) is None:
        return False

    def holders():
        staged = state.index_texts(path)
        if staged != state.committed_text(path):  # staged on purpose, not HEAD's copy
            yield staged
        yield from state.stash_texts(path)

    lost = judge("\n".join(_judged(event.lost)), "", holders).lost
    return not _nonblank(lost)


def listed_by_commits(between: list[Event], commits: list[Event]) -> list[Event]:
    """``between`` (events of the snapshot chain and the work tree) less each one a commit
    made at or after it lists: the same file and kind, and every line it lists among that
    commit's lines (a loss or an edit seen between commits and committed since, recovered
    or not, is that commit's event: each change is listed once)."""
    if not between or not commits:
        return between
    by_file: dict[tuple, list[Event]] = {}
    for event in commits:
        by_file.setdefault((event.kind, event.current or event.path), []).append(event)
    kept = []
    for event in between:
        lines = Counter(_nonblank(event.lost))
        if not any(later.timestamp >= event.timestamp and not lines - Counter(later.lost)
                   for later in by_file.get((event.kind, event.current or event.path), ())):
            kept.append(event)
    return kept


# -- since HEAD: the work tree ---------------------------------------------------------------

def scan_work_tree_losses(root: Path, settings, between: list[Event]) -> list[Event]:
    """Committed journal lines the work tree lost since HEAD, no snapshot having seen them
    (a line written over before any snapshot was taken): HEAD is the last known good
    version of each journal. One ``journal-rewrite`` event per journal on disk whose text
    is not an append to HEAD's and lost lines of it by the one judgement
    (:func:`vaultkit.vault.loss.judge`: an edit of a committed line is not lost, nor a line
    the staged journal or a stash holds), less the lines an open loss of ``between`` (the
    snapshot chain's) already lists, with ``source`` ``"work-tree"``, ``commit`` HEAD, the
    file's modification time as its date and HEAD's text as the version before. Empty
    outside git, before the first commit, or with nothing lost. Three git runs at most:
    the diff against HEAD, the changed journals' HEAD blobs, the stash when a line is still
    unexplained."""
    import datetime as dt

    from vaultkit.core.bounded import read_regular
    from vaultkit.vault.gitstate import GitState, decode, first_change
    from vaultkit.vault.loss import judge

    stub = SimpleNamespace(root=root, profile=settings.profile, settings=settings)
    state = GitState(stub)  # type: ignore[arg-type]
    if not state.available or not state.has_head:
        return []
    changed = [c for c in state.changes if c.status in ("M", "T") and c.old == c.new
               and c.old is not None and state.relevant(c)
               and state.layer_of(c.old) == "journal"]
    if not changed:
        return []
    listed = Counter()  # lines the snapshot chain's open losses list, per file
    for event in between:
        if event.kind == "journal-rewrite" and not event.recovered and event.is_loss:
            listed.update((event.current or event.path, line) for line in event.lost)
    repo = SimpleNamespace(root=root, profile=settings.profile)
    events = []
    for change in changed:
        path = change.old
        old = state.head_text(change)
        disk = file_on_disk(root, path)
        try:  # (decoded as HEAD's blob is: a byte-order mark is no line's text)
            new = decode(read_regular(disk, settings.profile.budgets.max_file_bytes,
                                      follow_symlinks=False))
        except OSError:
            new = None
        if old is None or new is None or first_change(old, new) is None:
            continue  # unreadable (gone, a symlink, over budgets.max_file_bytes), or an append

        def holders(path=path, old=old):
            staged = state.index_texts(path)
            if staged != old:  # staged on purpose, not HEAD's copy
                yield staged
            yield from state.stash_texts(path)

        lost = []
        # (judged as the hook's HEAD comparison judges: a removal on purpose is accepted
        # by the commit that makes it, VAULTKIT_ACCEPT_DELETION, and then HEAD lacks it)
        for line in judge(old, new, holders).lost:
            if line.strip() and listed[(path, line)] > 0:
                listed[(path, line)] -= 1
                continue
            lost.append(line)
        if not _nonblank(lost):
            continue
        try:
            when = int(disk.stat().st_mtime)
        except OSError:
            continue
        date = dt.datetime.fromtimestamp(when).astimezone().isoformat(timespec="seconds")
        event = Event("journal-rewrite", state.head or "", when, date, "", "", path,
                      current=path, source="work-tree")
        event.lost, event.lines, event.bytes = lost, len(_nonblank(lost)), _bytes_of(lost)
        event.old, event.before = old, len(_nonblank(old.splitlines()))
        event.recovered = _is_recovered(repo, event)  # type: ignore[arg-type]
        events.append(event)
    return events

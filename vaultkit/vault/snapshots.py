"""vaultkit's own snapshots of the memory files, on a private git ref.

A journal is lost most often before it is ever committed: the nightly backup commits a
file the day's summary run already overwrote. A snapshot records every memory file
whose content changed since the last snapshot as one commit on a private ref, so the
lines are kept between commits and the hook can compare a staged journal with them.

Where it lives
    In a git repository: the ref ``refs/vaultkit/snapshots`` of the vault's own repository
    (``refs/vaultkit/snapshots-<key>`` for a vault in a subfolder of the repository or in a
    linked worktree, so two vaults or two worktrees never share one chain). The objects
    are ordinary git objects in the repository's object store. In a folder that is not a
    git repository: a bare repository ``.vaultkit/snapshots.git`` with the same ref.

What it never touches
    HEAD, the index, the work tree, the stash, the branches and their reflogs. A snapshot
    is written with plumbing only: ``fast-import`` fed the bytes read (the file's own bytes,
    no clean filter; read through a descriptor opened without following a symlink, its
    folders too, so no git process opens the file), ``update-index`` on a temporary index
    file (``GIT_INDEX_FILE``), ``write-tree``, ``commit-tree`` and ``update-ref <ref> <new>
    <old>`` (atomic: a ref moved by another writer meanwhile is not overwritten). So it works before the first
    commit, during a rebase, on a detached HEAD and with a dirty index.

What is recorded
    Every Markdown file of the memory: the bootstrap files (``MEMORY.md``, ``AGENTS.md``,
    ... also those one folder up from a memory-only vault), and everything under the memory
    folder (journals, archive, typed and topic notes). Never ``.git/``, ``.vaultkit/``, a
    file over ``budgets.max-file-bytes``, a symlink or anything that is not a regular file.
    Each snapshot's tree holds every such file (unchanged ones by the same blob, so they
    cost nothing); paths are vault paths, a bootstrap file above a memory-only vault is
    kept as ``.workspace/NAME``.

Unchanged files cost one ``stat``
    The store keeps a table (size, mtime, ctime, inode, blob id of every file) beside the
    ref (``<git dir>/vaultkit/<ref name>.stat``); a file whose size, mtime, ctime and inode
    match, and whose mtime and ctime were older than the snapshot that recorded it by the
    racy margin, is not read (a copy that put the size and mtime back changed the ctime).
    Nothing changed means no git process but the ``rev-parse`` that found the repository;
    the ``snapshot`` command says it without that either, from the record of
    :mod:`vaultkit.vault.quicksnap`, when the last run left one.

What each snapshot changed is written down
    Beside the ref, the chain's record (``<ref name>.chain``: each snapshot's commit,
    parent, time and changed files with their blobs) and the append index (``<ref
    name>.appends``: the blob each new version starts with, whole, to a line's end). A
    run that kept the versions read up to some snapshot reads the later ones from the
    record, not from ``git log``; the journal rule reads a journal's newest version and
    not those it was appended to when the staged text holds it. What they do not hold is
    read from git, so they change no verdict; without them the hook's cost grew with the
    square of the snapshots of a journal appended to all day.

Retention
    ``[snapshots] keep-days`` in vaultkit.toml (default 30): snapshots older than that are
    dropped by the ``snapshot`` command (the chain is rewritten from the newest snapshot
    older than the limit, which becomes its root, so the files as they were then are kept).

Every read of the chain is bounded
    The ref is only as trustworthy as the repository: anyone who can write ``.git`` can
    point it at a commit whose tree holds a 10 GB blob or millions of entries. So a blob's
    content is read only after ``cat-file --batch-check`` says it is at most
    ``budgets.max-file-bytes`` (and :data:`MAX_READ_BYTES` in one read in all); a tree's
    listing and the chain's log are read from git's pipe as they come, and stop past
    :data:`MAX_TREE_ENTRIES` entries, :data:`MAX_CHANGES` changed files,
    :data:`MAX_CHAIN` snapshots or :data:`MAX_READ_BYTES` (git is stopped). What is not
    read is a warning in :attr:`Store.warnings` naming the object (once per store), never
    an error: what was read is judged as usual, and nothing read short is kept for a later
    run (a cut chain is never extended as if it were whole).
"""

from __future__ import annotations

import datetime as dt
import os
import stat
import subprocess
from pathlib import Path
from types import SimpleNamespace

from vaultkit.core.digests import sha1, sha256
from vaultkit.core.errors import VaultkitError
from vaultkit.core.plain import FRESH, Plain
from vaultkit.vault.cachefile import KeptFiles
# (RACY_NS: a file that close to a snapshot is read again)
from vaultkit.vault.store import RACY_NS, Later

REF = "refs/vaultkit/snapshots"
BARE_STORE = "snapshots.git"  # under .vaultkit/ in a folder that is not a git repository
WORKSPACE_PREFIX = ".workspace/"  # store path of a bootstrap file above a memory-only vault
DEFAULT_KEEP_DAYS = 30
DEFAULT_INTERVAL_MIN = 15
_IDENTITY = {"GIT_AUTHOR_NAME": "vaultkit", "GIT_AUTHOR_EMAIL": "vaultkit@localhost",
             "GIT_COMMITTER_NAME": "vaultkit", "GIT_COMMITTER_EMAIL": "vaultkit@localhost"}
_SETTINGS_KEYS = {"keep_days": 1, "interval": 1}  # name -> lowest value
# bounds of every read of the chain (module docs); far above what a real vault makes: the
# largest benchmarked vault has 100,000 notes, 30 days of a snapshot every 15 minutes are
# 2,880 snapshots
MAX_TREE_ENTRIES = 250_000  # entries read of one snapshot's tree
MAX_CHANGES = 1_000_000  # changed files read in one pass over the chain's log
MAX_CHAIN = 100_000  # snapshots read of the chain, the newest
MAX_READ_BYTES = 256 << 20  # bytes of git output one listing or one read of blobs takes
MAX_FIELD_BYTES = 1 << 20  # one path or subject (a real path is at most 4,096 bytes)
APPENDS_AT_MOST_BYTES = 8 << 20  # the append index (about 100,000 appends)
CHAIN_AT_MOST_BYTES = 32 << 20  # the chain's record (about 100,000 snapshots)
_CHAIN_FORMAT = 1
_CHAIN_MARK = b"\0vkchain\0"  # before each record of the chain's record


class SnapshotSettings:
    """How long snapshots are kept and how often they are taken."""

    _fields = ("keep_days", "interval")
    keep_days: int
    interval: int  # minutes between snapshots a service promises

    def __init__(self, keep_days=DEFAULT_KEEP_DAYS, interval=DEFAULT_INTERVAL_MIN):
        self.keep_days = keep_days
        self.interval = interval


def snapshot_settings(settings) -> SnapshotSettings:
    """``[snapshots]`` of vaultkit.toml, checked (``keep-days``, ``interval`` in minutes)."""
    from vaultkit.vault.profile import ConfigError

    raw = getattr(settings.config, "snapshots", None) or {}
    out = SnapshotSettings()
    for key, value in raw.items():
        name = str(key).replace("-", "_")
        if name not in _SETTINGS_KEYS:
            known = ", ".join(k.replace("_", "-") for k in _SETTINGS_KEYS)
            raise ConfigError(f"vaultkit.toml: snapshots: unknown setting '{key}' (known: "
                              f"{known})")
        if isinstance(value, bool) or not isinstance(value, int) \
                or value < _SETTINGS_KEYS[name]:
            raise ConfigError(f"vaultkit.toml: snapshots: {key}: must be a whole number, at "
                              f"least {_SETTINGS_KEYS[name]}")
        setattr(out, name, value)
    return out


# -- which files ----------------------------------------------------------------------

def store_path(vault_path: str) -> str:
    return WORKSPACE_PREFIX + vault_path[3:] if vault_path.startswith("../") else vault_path


def vault_path_of(path: str) -> str:
    return "../" + path[len(WORKSPACE_PREFIX):] if path.startswith(WORKSPACE_PREFIX) else path


def is_memory_file(profile, rel: str, prefix: str | None = None) -> bool:
    """A vault path whose file snapshots record (Markdown, in the memory or the bootstrap)."""
    if not rel.lower().endswith(".md"):
        return False
    if rel.startswith("../"):
        return rel[3:] in profile.bootstrap_files
    prefix = profile.memory_prefix if prefix is None else prefix
    if not prefix or rel.startswith(prefix):
        return True
    return profile.layer_of(rel) in ("bootstrap", "journal", "archive", "structured",
                                     "knowledge", "dated", "index")


def memory_files(root: Path, settings, seen: dict | None = None
                 ) -> dict[str, tuple[int, int, int, int]]:
    """``{store path: (size, mtime_ns, ctime_ns, inode)}`` of the files a snapshot records
    (the ctime and inode tell an edit that put the size and mtime back, see
    vaultkit.vault.scan.FileEntry).

    Its own walk, one ``lstat`` per Markdown file and none for anything else: it never
    follows a symlink (file or folder), skips the folders the scan skips
    (:data:`vaultkit.vault.scan.SKIP_DIRS`) and the configured excludes.

    ``seen`` (a dict) gets what the walk looked at, for the record of
    :mod:`vaultkit.vault.quicksnap`: ``"dirs"``, each folder entered with its stat taken
    before it was listed and every file it ``lstat``'ed there; ``"above"``, the bootstrap
    files one folder up; ``"whole"``, False when a folder or a file could not be read."""
    from vaultkit.vault.scan import SKIP_DIRS

    profile = settings.profile
    prefix = profile.memory_prefix
    limit = profile.budgets.max_file_bytes
    excludes = settings.excludes_anything
    # (a folder is asked whole when entered, so a file in it is asked by its own path only)
    excluded = settings.is_excluded if excludes else None
    excluded_file = settings.file_excluder if excludes else None
    out: dict[str, tuple[int, int, int, int]] = {}
    if seen is not None:
        seen.update(dirs=[], above=[], whole=True)
    # each folder is opened and its files stat'ed by name in it (fstatat), as the scan
    # lists: the kernel resolves one path component per file, not the whole path
    by_fd = os.scandir in os.supports_fd
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
    stack = [(str(root), "")]
    while stack:
        folder, base = stack.pop()
        inside = not prefix or base.startswith(prefix)  # all of the memory folder counts
        fd = None
        try:
            if by_fd:
                fd = os.open(folder, flags)
            if seen is not None:  # (its stat before its listing: a later change shows)
                here = os.lstat(folder) if fd is None else os.fstat(fd)
                names: list[str] = []
                stats: list[tuple[int, int, int, int]] = []
                seen["dirs"].append((folder, here.st_ino, here.st_mtime_ns,
                                     here.st_ctime_ns, names, stats))
            with os.scandir(folder if fd is None else fd) as it:
                for entry in it:
                    name = entry.name
                    try:
                        if name[-3:].lower() == ".md" and entry.is_file(follow_symlinks=False):
                            rel = base + name
                            if not inside and not is_memory_file(profile, rel, prefix):
                                continue
                            if excluded_file is not None and excluded_file(rel):
                                continue
                            st = entry.stat(follow_symlinks=False)
                            if seen is not None:
                                names.append(name)
                                stats.append((st.st_size, st.st_mtime_ns, st.st_ctime_ns,
                                              st.st_ino))
                            if st.st_size <= limit:
                                out[rel] = (st.st_size, st.st_mtime_ns, st.st_ctime_ns,
                                            st.st_ino)
                        elif entry.is_dir(follow_symlinks=False) and name not in SKIP_DIRS:
                            rel = base + name
                            if excluded is None or not excluded(rel):
                                stack.append((os.path.join(folder, name), rel + "/"))
                    except OSError:
                        if seen is not None:
                            seen["whole"] = False
                        continue  # gone meanwhile
        except OSError:
            if seen is not None:
                seen["whole"] = False
            continue  # unreadable (check's file-unreadable says so)
        finally:
            if fd is not None:
                os.close(fd)
    if not prefix:  # the bootstrap files one folder up from a memory-only vault
        for name in profile.bootstrap_files:
            try:
                st = os.lstat(root.parent / name)
            except OSError:
                if seen is not None:
                    seen["above"].append((str(root.parent / name), None))
                continue
            if seen is not None:
                seen["above"].append((str(root.parent / name),
                                      (st.st_mode, st.st_size, st.st_mtime_ns,
                                       st.st_ctime_ns, st.st_ino)))
            if stat.S_ISREG(st.st_mode) and st.st_size <= limit:
                out[store_path("../" + name)] = (st.st_size, st.st_mtime_ns, st.st_ctime_ns,
                                                 st.st_ino)
    if seen is not None:
        seen["files"] = out
    return out


def _same(entry: list, numbers) -> bool:
    """Whether a table entry (``[size, mtime, oid, racy, ctime, inode]``; a table written
    before the ctime and inode were kept has four) records the file stat'ed as
    ``numbers`` (``(size, mtime_ns, ctime_ns, inode)``)."""
    return len(entry) == 6 and entry[0] == numbers[0] and entry[1] == numbers[1] \
        and entry[4] == numbers[2] and entry[5] == numbers[3]


def _starts_with(data: bytes, size: int, oid: str) -> bool:
    """Whether ``data`` starts with the blob ``oid`` of ``size`` bytes, which ends at a
    line's end: git's id of ``data[:size]`` is ``oid`` (SHA-1, or SHA-256 for a 64-digit
    id), so the check reads nothing from git."""
    if not 0 < size < len(data) or data[size - 1] != 10 or len(oid) not in (40, 64):
        return False
    digest = (sha1 if len(oid) == 40 else sha256)(b"blob %d\0" % size)
    digest.update(memoryview(data)[:size])
    return digest.hexdigest() == oid


def _read_appends(path: Path) -> dict[str, str]:
    """The well-formed lines of an append index file (two ids of one length, hex), in
    order; nothing when it is unreadable or over :data:`APPENDS_AT_MOST_BYTES`."""
    from vaultkit.core.bounded import read_regular

    try:
        data = read_regular(path, APPENDS_AT_MOST_BYTES, follow_symlinks=False)
    except OSError:
        return {}
    out: dict[str, str] = {}
    hexdigits = frozenset("0123456789abcdef")
    for line in data.decode("ascii", "replace").split("\n")[:-1]:  # (a torn tail: no \n)
        new, _, old = line.partition(" ")
        if len(new) == len(old) and len(new) in (40, 64) and new != old \
                and hexdigits.issuperset(new) and hexdigits.issuperset(old):
            out[new] = old
    return out


def _chain_records(path: Path) -> dict[str, tuple[str | None, int, list]]:
    """The chain's record (:meth:`Store._record_snapshot`): commit -> (parent, time,
    [(store path, blob, None when deleted)]), read once per version of its file in a
    process. A record that does not parse whole (a torn write) is passed over, from the
    next mark on; nothing is read when the file is unreadable or over
    :data:`CHAIN_AT_MOST_BYTES`."""
    import marshal

    from vaultkit.core.bounded import read_regular

    try:
        st = os.lstat(path)
    except OSError:
        return {}
    key = (str(path), st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    last = _CHAIN[:]  # (one read: a server's other thread may replace it meanwhile)
    if last and last[0] == key:
        return last[1]
    try:
        data = read_regular(path, CHAIN_AT_MOST_BYTES, follow_symlinks=False)
    except OSError:
        return {}
    out: dict[str, tuple[str | None, int, list]] = {}
    mark = len(_CHAIN_MARK)
    at = data.find(_CHAIN_MARK)
    while at >= 0:
        size = int.from_bytes(data[at + mark:at + mark + 4], "big")
        body = data[at + mark + 4:at + mark + 4 + size]
        try:
            fmt, commit, parent, stamp, changes = marshal.loads(body) \
                if len(body) == size else (None,) * 5
        except (ValueError, EOFError, TypeError):
            fmt = None
        if fmt != _CHAIN_FORMAT or not _is_oid(commit) or not (parent is None
                                                               or _is_oid(parent)) \
                or type(stamp) is not int or type(changes) is not list \
                or not all(type(c) is tuple and len(c) == 2 and type(c[0]) is str
                           and (c[1] is None or _is_oid(c[1])) for c in changes):
            at = data.find(_CHAIN_MARK, at + 1)  # (torn: on from the next mark)
            continue
        out[commit] = (parent, stamp, changes)
        at = data.find(_CHAIN_MARK, at + mark + 4 + size)
    _CHAIN[:] = [key, out]
    return out


def _is_oid(value) -> bool:
    return type(value) is str and len(value) in (40, 64) \
        and not value.strip("0123456789abcdef")


def file_of(root: Path, path: str) -> str:
    """The file on disk of a store path."""
    if path.startswith(WORKSPACE_PREFIX):
        return str(root.parent / path[len(WORKSPACE_PREFIX):])
    return os.path.join(root, path)


# -- the store ------------------------------------------------------------------------

class Snapshot:
    """One snapshot in the store."""

    _fields = ("commit", "time", "subject")
    commit: str
    time: int  # committer time, seconds since the epoch
    subject: str

    def __init__(self, commit, time, subject):
        self.commit = commit
        self.time = time
        self.subject = subject


class SnapshotResult:
    """What taking a snapshot did."""

    _fields = ("commit", "changed", "removed", "files", "pruned")
    commit: str | None  # the new snapshot, None when nothing changed
    changed: list[str]  # vault paths
    removed: list[str]
    files: int  # files the snapshot holds
    pruned: int  # snapshots dropped by the retention

    def __init__(self, commit, changed=FRESH, removed=FRESH, files=0, pruned=0):
        self.commit = commit
        self.changed = [] if changed is FRESH else changed
        self.removed = [] if removed is FRESH else removed
        self.files = files
        self.pruned = pruned

    def to_dict(self) -> dict:
        return {"commit": self.commit, "changed": self.changed, "removed": self.removed,
                "files": self.files, "pruned": self.pruned}


class Versions(list):
    """What :meth:`Store.versions` found (a list of its tuples), with what extending it to
    later snapshots needs: the chain's head then, the snapshot before the window and its
    files' blobs, the paths seen; and the paths a snapshot of the window deleted last
    (``gone``: not in the head's tree), None when not known.

    :meth:`summary` tells, per path, its newest version's blob and whether its versions
    hold more than one blob: what comparing them with the staged blobs needs, without going
    through every version (kept with them, and brought up to date as they are extended)."""

    def __init__(self, head, items, before=None, before_time=0, before_entries=None,
                 gone=None, summary=None):
        super().__init__(items)
        self.head, self.before, self.before_time = head, before, before_time
        self.before_entries = before_entries  # (None: not read yet; see base())
        self._summary = summary
        self.gone = gone
        self.saved: int | None = None  # how many of them the versions file holds

    @property
    def paths(self):
        """The paths that have versions (a view: do not change)."""
        return self.summary()[0].keys()

    def summary(self) -> tuple[dict[str, str], set[str], bool]:
        """``(tips, mixed, outside)``: each path's newest blob, the paths whose versions
        hold more than one blob, and whether a path is a bootstrap file outside the vault
        (``../NAME``, stored under ``.workspace/``)."""
        if self._summary is None:
            self._summary = _summarised(({}, set(), False), self)
        return self._summary

    def extended(self, head, base, out, gone) -> "Versions":
        """These versions and the later ones ``base`` (their files' versions before the
        window) and ``out``, as of ``head``."""
        summary = _summarised(self.summary(), [*base, *out], copy=True)
        extended = Versions(head, [*self, *base, *out], self.before, self.before_time,
                            self.before_entries, gone, summary)
        extended.saved = self.saved
        return extended

    def base(self, store: "Store") -> dict:
        """Vault path -> blob of every file of the snapshot before the window."""
        if self.before_entries is None:
            self.before_entries = {vault_path_of(p): e[2] for p, e in
                                   store._tree_entries(self.before).items()} \
                if self.before else {}
        return self.before_entries


def _summarised(summary, items, copy: bool = False):
    """``summary`` (see :meth:`Versions.summary`) with ``items``, later versions, added."""
    tips, mixed, outside = summary
    if copy:
        tips, mixed = dict(tips), set(mixed)
    for _, _, path, oid in items:
        tip = tips.get(path)
        if tip is not None and tip != oid:
            mixed.add(path)
        tips[path] = oid
        if not outside and path.startswith(("../", WORKSPACE_PREFIX)):
            outside = True
    return tips, mixed, outside


class Store:
    """One vault's snapshot chain (see the module docs). Build it with :func:`open_store`."""

    def __init__(self, root: Path, settings, *, cwd: Path, meta: Path, ref: str, bare: bool,
                 blobs: BlobMemo | None = None):
        self.root = root
        self.settings = settings
        self.cwd = cwd  # where git runs: the repository's top level, or the bare store
        self.meta = meta  # the folder of the stat table and the lock
        self.ref = ref
        self.bare = bare
        self.warnings: list[str] = []  # what a bounded read left out, each said once
        # the objects read from git: the caller's memo (a run's, a workspace's), else the
        # store's own (the watcher keeps one store over its rounds)
        self.memo = blobs if blobs is not None else BlobMemo()

    def warn(self, message: str) -> None:
        """Say once what a read of the chain left out (neutralised: a path in a hostile
        tree may hold anything)."""
        from vaultkit.vault.outbound import clean_line

        message = clean_line(message)
        if message not in self.warnings:
            self.warnings.append(message)

    def listing(self, args, *, what: str, limit: int, counted=None, sep: bytes = b"\0",
                check: bool = True) -> tuple[list[bytes], bool]:
        """``(fields, whole)``: git's output split on ``sep``, read from its pipe as it
        comes, never more than :data:`MAX_READ_BYTES` nor a field over
        :data:`MAX_FIELD_BYTES`, nor more than ``limit`` fields ``counted(field)`` accepts
        (all by default). Past a bound git is stopped, a warning names ``what``, and
        ``whole`` is False; the fields read so far are returned, the last whole one
        included. ``check``: a failed git is an error (else ``whole`` is False)."""
        import tempfile

        from vaultkit.core.gitenv import popen_git

        extra = {"GIT_DIR": str(self.cwd)} if self.bare else {}
        fields: list[bytes] = []
        count = total = 0
        over = ""
        with tempfile.TemporaryFile() as errors:
            try:
                proc = popen_git(args, cwd=self.cwd, stderr=errors,
                                 keep_repo_env=not self.bare, env=extra)
            except FileNotFoundError:
                raise VaultkitError("git is not installed; snapshots need git") from None
            except OSError as exc:
                raise VaultkitError(f"git could not be run: {exc}") from None
            rest = b""
            try:
                while not over:
                    chunk = proc.stdout.read1(1 << 20) if hasattr(proc.stdout, "read1") \
                        else proc.stdout.read(1 << 20)
                    if not chunk:
                        break
                    total += len(chunk)
                    if total > MAX_READ_BYTES:
                        over = f"more than {MAX_READ_BYTES:,} bytes"
                        break
                    parts = (rest + chunk).split(sep)
                    rest = parts.pop()
                    if len(rest) > MAX_FIELD_BYTES:
                        over = f"a field of more than {MAX_FIELD_BYTES:,} bytes"
                        break
                    for field_ in parts:
                        if counted is None or counted(field_):
                            count += 1
                            if count > limit:
                                over = f"more than {limit:,} {what[1]}"
                                break
                        fields.append(field_)
                if not over and rest:
                    fields.append(rest)
            finally:
                if over:
                    proc.kill()
                proc.stdout.close()
                code = proc.wait()
            if over:
                self.warn(f"{self.ref}: {what[0]} holds {over}; not read further (a snapshot "
                          "ref made by hand, or a damaged store?)")
                return fields, False
            if code != 0:
                errors.seek(0)
                detail = errors.read(4096).decode("utf-8", "replace").strip().splitlines()
                if check:
                    raise VaultkitError(f"snapshot store: git {args[0]} failed: "
                                        + (detail[0] if detail else f"exit {code}"))
                return fields, False
        return fields, True

    @property
    def refs_dir(self) -> Path:
        """The repository's common git folder (where ``refs/`` is)."""
        return self.cwd if self.bare else self.meta.parent

    @property
    def where(self) -> str:
        return (f"{self.cwd} ({self.ref})" if self.bare else self.ref)

    def git(self, args, *, input: bytes | None = None, env: dict | None = None,
            check: bool = True, network: bool = False) -> subprocess.CompletedProcess:
        from vaultkit.core.gitenv import run_git

        extra = dict(env or {})
        if self.bare and args[0] != "init":
            extra["GIT_DIR"] = str(self.cwd)
        try:
            proc = run_git(args, cwd=self.cwd, input=input, keep_repo_env=not self.bare,
                           env=extra, timeout=600, network=network)
        except FileNotFoundError:
            raise VaultkitError("git is not installed; snapshots need git") from None
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise VaultkitError(f"git could not be run: {exc}") from None
        if check and proc.returncode != 0:
            detail = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            raise VaultkitError(f"snapshot store: git {args[0]} failed: "
                                + (detail[0] if detail else f"exit {proc.returncode}"))
        return proc

    # -- state ---------------------------------------------------------------------

    @property
    def table_path(self) -> Path:
        return self.meta / (self.ref.rsplit("/", 1)[-1] + ".stat")

    @property
    def lock_path(self) -> Path:
        return self.meta / (self.ref.rsplit("/", 1)[-1] + ".lock")

    @property
    def checked_path(self) -> Path:
        """Touched by every snapshot run (changed or not): when snapshots last ran."""
        return self.meta / (self.ref.rsplit("/", 1)[-1] + ".checked")

    @property
    def events_path(self) -> Path:
        """The watcher's event log (JSON lines) that ``history`` and ``audit`` read."""
        return self.meta / (self.ref.rsplit("/", 1)[-1] + ".events.jsonl")

    def last_run(self) -> float | None:
        """When a snapshot last ran (seconds since the epoch), None if never."""
        try:
            return os.stat(self.checked_path).st_mtime
        except OSError:
            return None

    def has_ref_file(self) -> bool:
        """Whether git holds the ref, read from its files (loose, or in packed-refs)."""
        if (self.refs_dir / self.ref).is_file():
            return True
        if (self.refs_dir / "reftable").is_dir():  # git's other ref store: ask git
            return self.head() is not None
        try:
            with open(self.refs_dir / "packed-refs", "rb") as fh:
                return any(line.rstrip().endswith(b" " + self.ref.encode()) for line in fh)
        except OSError:
            return False

    def recorded(self) -> dict[str, str]:
        """``{store path: blob}`` of the newest snapshot (from the table when it is current)."""
        head = self.head()
        if head is None:
            return {}
        table = self._load_table()
        entries = table["entries"] if table.get("commit") == head else self._tree_entries(head)
        return {p: e[2] for p, e in entries.items() if e[2]}

    def current_oids(self, states) -> dict[str, str]:
        """Vault path -> blob of each file in ``states`` (``(vault path, size, mtime_ns,
        ctime_ns, inode)``, as the vault's listing has them) whose size, mtime, ctime and
        inode are those the newest snapshot's table recorded for it, not in the racy
        margin: its content is that blob, known without reading it."""
        head = self.head()
        table = self._load_table()
        if head is None or table.get("commit") != head:
            return {}
        entries = table["entries"]
        out = {}
        for path, *numbers in states:
            known = entries.get(path)  # (a vault path is its store path inside the vault)
            if known is not None and known[2] and not known[3] and _same(known, numbers):
                out[path] = known[2]
        return out

    def exists(self) -> bool:
        """True when this vault has snapshots (checked without running git)."""
        return self.table_path.is_file() or self.head() is not None

    def head(self) -> str | None:
        if self.bare and not (self.cwd / "HEAD").is_file():
            return None
        loose = self.loose_head()
        if loose is not None:
            return loose
        proc = self.git(["rev-parse", "-q", "--verify", self.ref + "^{commit}"], check=False)
        out = proc.stdout.decode("ascii", "replace").strip()
        return out if proc.returncode == 0 and out else None

    def loose_head(self) -> str | None:
        """The newest snapshot as git's own file for the ref names it (``update-ref`` writes
        it for every snapshot), read without running git; None when there is no such file
        (no snapshot yet, or the ref packed)."""
        try:
            with open(self.refs_dir / self.ref, "rb") as fh:
                value = fh.read(100).decode("ascii").strip()
        except (OSError, UnicodeDecodeError):
            return None
        if len(value) in (40, 64) and all(c in "0123456789abcdef" for c in value):
            return value
        return None

    def _load_table(self) -> dict:
        """The snapshot table, read once per version of its file in a process (the two
        snapshot rules of a check both ask; the file is only ever replaced, never written
        in place, so a new version is a new inode). Not to be changed by the caller."""
        try:
            st = os.stat(self.table_path, follow_symlinks=False)
            key = (str(self.table_path), st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
            last = _TABLE[:]  # (one read: a server's other thread may replace it meanwhile)
            if last and last[0] == key:
                return last[1]
            data = self.memo.files.load(self.table_path, 1 << 30)
            if isinstance(data, dict) and isinstance(data.get("entries"), dict) \
                    and data.get("ref") == self.ref:
                _TABLE[:] = [key, data]
                return data
        except (OSError, ValueError, EOFError, TypeError):
            pass
        return {"commit": None, "entries": {}}

    def _save_table(self, table: dict) -> None:
        import marshal

        _TABLE.clear()
        tmp = self.table_path.with_name(self.table_path.name + f".tmp{os.getpid()}")
        try:
            with open(tmp, "wb") as fh:
                fh.write(marshal.dumps(table))
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.table_path)
        except OSError:
            try:
                os.unlink(tmp)
            except OSError:
                pass

    def _lock(self) -> int:
        import fcntl

        self.meta.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0),
                     0o644)
        fcntl.flock(fd, fcntl.LOCK_EX)
        return fd

    # -- writing -------------------------------------------------------------------

    def snapshot(self, *, now: dt.datetime | None = None, prune: bool = True,
                 seen: dict | None = None) -> SnapshotResult:
        """Record every memory file that changed since the last snapshot (module docs).
        ``seen``: see :func:`memory_files`."""
        import time

        fd = self._lock()
        try:
            started = time.time_ns()
            files = memory_files(self.root, self.settings, seen)
            head = self.head()
            table = self._load_table()
            entries: dict[str, list] = table["entries"] if table.get("commit") == head else {}
            # (the chain's record is made from the table's entries, the parent's tree as
            # vaultkit wrote it; not from a listing of it, which a bound may cut short)
            recordable = head is None or bool(entries)
            if head is not None and not entries:
                entries = self._tree_entries(head)  # the table is lost or stale: rebuild it
            get = entries.get
            # (_same, inline: one comparison per file of the vault)
            todo = [p for p, (size, mtime, ctime, ino) in files.items()
                    if (k := get(p)) is None or len(k) != 6 or k[3] or k[0] != size
                    or k[1] != mtime or k[4] != ctime or k[5] != ino]
            # (with nothing to hash every file is known: equal counts mean equal sets)
            removed = sorted(p for p in entries if p not in files) \
                if todo or len(entries) != len(files) else []
            moment = (now or dt.datetime.now(dt.timezone.utc)).timestamp()
            checked = table.get("pruneChecked", 0) if table.get("commit") == head else 0
            due = prune and not (0 <= moment - checked < 86400)  # at most once a day
            if not todo and not removed and head is not None and not due:
                self._touch_checked()  # nothing changed: nothing written
                return SnapshotResult(None, [], [], len(files))
            appends: list[tuple[str, str]] = []
            hashed = self._hash(todo, entries, appends) if todo else []
            changed = []
            new_entries: dict[str, list] = {}
            for path, (size, mtime, ctime, ino) in files.items():
                known = get(path)
                new_entries[path] = [size, mtime, known[2] if known else None, 0, ctime, ino]
            for path, got in zip(todo, hashed):
                known = get(path)
                if got is None:  # vanished, unreadable or swapped for a link since the listing
                    if known is None:
                        del new_entries[path]
                    else:
                        new_entries[path] = [-1, -1, known[2], 1, -1, -1]
                    continue
                # (the stat of what was read, from its descriptor; in the racy margin
                # by its mtime or its ctime: hashed again next time)
                oid, size, mtime, ctime, ino = got
                new_entries[path] = [size, mtime, oid,
                                     int(max(mtime, ctime) >= started - RACY_NS), ctime, ino]
                if known is None or known[2] != oid:
                    changed.append(path)
            result = SnapshotResult(None, [vault_path_of(p) for p in sorted(changed)],
                                    [vault_path_of(p) for p in removed], len(new_entries))
            if changed or removed or head is None:
                if not new_entries and head is None:
                    return result  # nothing to record, and no chain yet
                self._record_appends(appends)
                commit, stamp = self._commit(new_entries, head, changed, removed, now)
                if stamp is not None and recordable:
                    self._record_snapshot(commit, head, stamp, entries, new_entries)
                result.commit = head = commit
            if due:
                result.pruned = self._prune(head, now)
                head = self.head()
                checked = moment
            if result.commit is not None or new_entries != entries or due \
                    or table.get("commit") != head:
                self._save_table({"version": 2, "ref": self.ref, "commit": head,
                                  "entries": new_entries, "pruneChecked": checked})
            self._touch_checked()
            return result
        finally:
            os.close(fd)

    def _touch_checked(self) -> None:
        try:
            fd = os.open(self.checked_path, os.O_WRONLY | os.O_CREAT
                         | getattr(os, "O_NOFOLLOW", 0), 0o644)
            os.close(fd)
            os.utime(self.checked_path)
        except OSError:
            pass

    def _tree_entries(self, commit: str) -> dict[str, list]:
        """Store path -> table entry of each file of ``commit``'s tree (at most
        :data:`MAX_TREE_ENTRIES`, read from git's pipe)."""
        fields, _ = self.listing(["ls-tree", "-r", "-z", "--full-tree", commit],
                                 what=(f"the tree of snapshot {commit[:10]}", "entries"),
                                 limit=MAX_TREE_ENTRIES)
        out = {}
        for item in fields:
            meta, _, name = item.partition(b"\t")
            parts = meta.split()
            if len(parts) == 3 and parts[1] == b"blob":
                out[os.fsdecode(name)] = [-1, -1, parts[2].decode(), 1]
        return out

    def _hash(self, paths: list[str], previous: dict | None = None,
              appends: list | None = None) -> list[tuple[str, int, int, int, int] | None]:
        """``(blob id, size, mtime_ns, ctime_ns, inode)`` of each file (store paths; the blob written into the
        store), None for one gone, not a regular file, over the limit, or reached through a
        symlink. ``appends`` gets ``(new blob, previous blob)`` for each file whose bytes
        start with the whole of its version in ``previous`` (the table's entries), ending
        at a line's end: an append (see :meth:`appended`).

        Each file is read through one descriptor opened without following a link, its
        folders too (:class:`~vaultkit.core.bounded.Beneath`), and judged by ``fstat`` on
        that descriptor: a file swapped for a symlink after the listing is not followed,
        and what is recorded is the bytes read, handed to git as they are (one
        ``fast-import`` for all of them; no git process opens the file)."""
        from vaultkit.core.bounded import Beneath

        limit = self.settings.profile.budgets.max_file_bytes
        read: list[tuple[bytes, os.stat_result] | None] = []
        with Beneath(self.root) as inside, Beneath(self.root.parent) as above:
            for path in paths:
                try:
                    if path.startswith(WORKSPACE_PREFIX):
                        read.append(above.read(path[len(WORKSPACE_PREFIX):], limit))
                    else:
                        read.append(inside.read(path, limit))
                except OSError:
                    read.append(None)  # gone, a symlink on the way, not regular, too big
        blobs = [item[0] for item in read if item is not None]
        oids = iter(self._write_blobs(blobs) if blobs else [])
        out = [None if item is None else (next(oids), item[1].st_size, item[1].st_mtime_ns,
                                          item[1].st_ctime_ns, item[1].st_ino)
               for item in read]
        if appends is not None and previous:
            for path, item, got in zip(paths, read, out):
                known = previous.get(path)
                if got is not None and known is not None and known[2] \
                        and known[2] != got[0] and _starts_with(item[0], known[0], known[2]):
                    appends.append((got[0], known[2]))
        return out

    @property
    def appends_path(self) -> Path:
        """The append index: ``<new blob> <old blob>`` lines, each saying the old blob's
        bytes are the start of the new one's, to a line's end (a journal appended to)."""
        return self.meta / (self.ref.rsplit("/", 1)[-1] + ".appends")

    def _record_appends(self, pairs: list[tuple[str, str]]) -> None:
        """Add ``pairs`` to the append index (under the snapshot lock). One ``O_APPEND``
        write; a line torn by a crash is not a well-formed line and is never read as one.
        Past :data:`APPENDS_AT_MOST_BYTES` the newest half is kept (written whole and
        renamed into place). A lost write costs a later read of those versions, never a
        verdict: what is not in the index is read."""
        if not pairs:
            return
        data = "".join(f"{new} {old}\n" for new, old in pairs).encode("ascii")
        path = self.appends_path
        try:
            try:
                size = os.lstat(path).st_size
            except FileNotFoundError:
                size = 0
            if size + len(data) > APPENDS_AT_MOST_BYTES:
                from vaultkit.core.atomic import write_atomic

                kept = _read_appends(path)
                lines = [f"{n} {o}\n" for n, o in kept.items()]
                keep = "".join(lines[len(lines) // 2:]).encode("ascii")
                write_atomic(path, keep + data)
                _APPENDS.clear()
                return
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT
                         | getattr(os, "O_NOFOLLOW", 0), 0o644)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)
        except OSError:
            pass

    def appended(self) -> dict[str, str]:
        """The append index (see :attr:`appends_path`): new blob -> the blob it starts
        with. Read once per version of its file in a process; empty when there is none or
        it is over :data:`APPENDS_AT_MOST_BYTES` (a file vaultkit did not write)."""
        path = self.appends_path
        try:
            st = os.lstat(path)
        except OSError:
            return {}
        key = (str(path), st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        last = _APPENDS[:]  # (one read: a server's other thread may replace it meanwhile)
        if last and last[0] == key:
            return last[1]
        found = _read_appends(path)
        _APPENDS[:] = [key, found]
        return found

    @property
    def chain_path(self) -> Path:
        """The chain's record: what each snapshot vaultkit wrote changed, by commit (see
        :meth:`_record_snapshot`), so that reading the snapshots made since a known one
        starts no ``git log``."""
        return self.meta / (self.ref.rsplit("/", 1)[-1] + ".chain")

    def _record_snapshot(self, commit: str, parent: str | None, stamp: int,
                         old: dict, new: dict) -> None:
        """Add the snapshot ``commit`` (on ``parent``, committed at ``stamp``) to the
        chain's record: the files whose blob differs between the parent's table entries
        ``old`` (its tree) and ``new`` (the commit's tree), as ``git log --raw`` lists
        them. One ``O_APPEND`` write of a marked, length-prefixed record under the
        snapshot lock; a record torn by a crash does not parse, and the reader goes on
        from the next mark. Past
        :data:`CHAIN_AT_MOST_BYTES` the record starts again; what it does not hold is
        read from git."""
        import marshal

        was = {p: e[2] for p, e in old.items() if e[2]}
        is_ = {p: e[2] for p, e in new.items() if e[2]}
        changes = sorted(((p, is_.get(p)) for p in was.keys() | is_.keys()
                          if was.get(p) != is_.get(p)), key=lambda c: os.fsencode(c[0]))
        body = marshal.dumps((_CHAIN_FORMAT, commit, parent, stamp, changes))
        data = _CHAIN_MARK + len(body).to_bytes(4, "big") + body
        path = self.chain_path
        try:
            try:
                size = os.lstat(path).st_size
            except FileNotFoundError:
                size = 0
            flags = os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
            if size + len(data) > CHAIN_AT_MOST_BYTES:
                from vaultkit.core.atomic import write_atomic

                write_atomic(path, data)
                return
            fd = os.open(path, flags | os.O_APPEND, 0o644)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)
        except (OSError, ValueError):
            pass

    def _recorded_since(self, start: str, head: str, since: int | None) -> list[bytes] | None:
        """What ``git log --raw -z`` (as :meth:`versions` asks it) prints for the snapshots
        after ``start`` up to ``head``, made from the chain's record; None when the record
        does not hold each of them, linked one to the next (a chain rewritten by the
        retention, a snapshot an older vaultkit wrote, a record started again), or when
        one is older than ``since`` (git's ``--since`` then decides)."""
        records = _chain_records(self.chain_path)
        steps = []
        at = head
        while at != start:
            record = records.get(at)
            if record is None or len(steps) >= MAX_CHAIN:
                return None
            steps.append((at, record))
            at = record[0]
        fields: list[bytes] = []
        count = 0
        zero = b"0" * len(head)
        for commit, (parent, stamp, changes) in reversed(steps):
            if since is not None and stamp < since:
                return None
            count += len(changes)
            if count > MAX_CHANGES:
                return None  # (git's listing warns)
            fields.append(b"\x1e%s %d %s" % (commit.encode(), stamp, (parent or "").encode()))
            for path, oid in changes:
                fields.append(b":100644 100644 %s %s %s" % (
                    zero, zero if oid is None else oid.encode(), b"M" if oid else b"D"))
                fields.append(os.fsencode(path))
        return fields

    def _write_blobs(self, blobs: list[bytes]) -> list[str]:
        """Write ``blobs`` into the store in one git process; their ids, in order.

        ``fast-import`` takes the bytes themselves (``data <n>``) and answers each
        ``get-mark`` with the object's id; below ``fastimport.unpackLimit`` objects (100 by
        default) it writes loose objects, as ``hash-object -w`` does."""
        feed = []
        for n, data in enumerate(blobs, 1):
            feed.append(b"blob\nmark :%d\ndata %d\n" % (n, len(data)))
            feed.append(data)
            feed.append(b"\n")
        feed += [b"get-mark :%d\n" % n for n in range(1, len(blobs) + 1)]
        feed.append(b"done\n")
        proc = self.git(["fast-import", "--quiet", "--done"], input=b"".join(feed))
        oids = proc.stdout.decode("ascii", "replace").split()
        if len(oids) != len(blobs):
            raise VaultkitError(f"snapshot store: git fast-import wrote {len(oids)} of "
                                f"{len(blobs)} objects")
        return oids

    def _commit(self, entries: dict[str, list], parent: str | None, changed, removed,
                now: dt.datetime | None) -> str:
        index = self.meta / f"index.{os.getpid()}.tmp"
        try:
            env = {"GIT_INDEX_FILE": str(index)}
            lines = b"".join(f"100644 {e[2]}\t".encode() + os.fsencode(p) + b"\0"
                             for p, e in sorted(entries.items()) if e[2])
            self.git(["update-index", "-z", "--index-info"], input=lines, env=env)
            tree = self.git(["write-tree"], env=env).stdout.decode().strip()
        finally:
            try:
                os.unlink(index)
            except OSError:
                pass
        message = snapshot_message(changed, removed)
        env = dict(_IDENTITY)
        # (the time is given to git, as it would take it, so that the chain's record below
        # knows it; not when the environment sets git's own dates, which then stand)
        seconds = None
        if now is not None or not (os.environ.keys() & {"GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE"}):
            moment = now or dt.datetime.now().astimezone()
            seconds = int(moment.timestamp())
            stamp = f"{seconds} {moment.strftime('%z') or '+0000'}"
            env.update(GIT_AUTHOR_DATE=stamp, GIT_COMMITTER_DATE=stamp)
        args = ["commit-tree", tree, "-F", "-"]
        if parent:
            args[2:2] = ["-p", parent]
        commit = self.git(args, input=message.encode("utf-8", "surrogateescape"),
                          env=env).stdout.decode().strip()
        self._move_ref(commit, parent)
        return commit, seconds

    def _move_ref(self, new: str, old: str | None) -> None:
        proc = self.git(["update-ref", "-m", "vaultkit snapshot", self.ref, new,
                         old or "0" * 40], check=False)
        if proc.returncode != 0:
            raise VaultkitError(f"{self.ref} was moved by another writer meanwhile; nothing "
                                "lost, run the snapshot again")

    def _prune(self, head: str | None, now: dt.datetime | None) -> int:
        """Drop the snapshots older than ``keep-days`` (a day's slack, so at most daily)."""
        if head is None:
            return 0
        keep = snapshot_settings(self.settings).keep_days
        moment = (now or dt.datetime.now(dt.timezone.utc)).timestamp()
        cutoff = int(moment - keep * 86400)
        chain = self.log()  # newest first
        if len(chain) < 2 or chain[-1].time >= cutoff - 86400:
            return 0
        # the newest snapshot older than the limit becomes the root: what the files were
        # then is kept, the steps before it are dropped
        keep_from = next(i for i, s in enumerate(chain) if s.time < cutoff)
        kept = chain[:keep_from + 1]
        sizes = self.sizes([snap.commit for snap in kept])
        odd = next((s.commit for s in kept if s.commit not in sizes
                    or sizes[s.commit][1] > MAX_FIELD_BYTES), None)
        if odd is not None:
            # (a snapshot commit is a few hundred bytes: this one was not made by vaultkit)
            self.warn(f"{self.ref}: snapshot {odd[:10]} is missing or over "
                      f"{MAX_FIELD_BYTES:,} bytes; not read, the retention is not applied")
            return 0
        parent = None
        for snap in reversed(kept):
            parent = self._copy_commit(snap.commit, parent)
        self._move_ref(str(parent), head)
        return len(chain) - len(kept)

    def _copy_commit(self, commit: str, parent: str | None, tree: str | None = None) -> str:
        """A copy of the snapshot ``commit`` (its message and dates) on ``parent``, with
        ``tree`` instead of its own when given: how the chain is rewritten."""
        proc = self.git(["cat-file", "commit", commit])
        header, _, body = proc.stdout.partition(b"\n\n")
        own = author = committer = None
        for line in header.decode("utf-8", "replace").splitlines():
            key, _, value = line.partition(" ")
            if key == "tree":
                own = value
            elif key == "author":
                author = value
            elif key == "committer":
                committer = value
        env = dict(_IDENTITY)
        env.update(GIT_AUTHOR_DATE=_date_of(author), GIT_COMMITTER_DATE=_date_of(committer))
        args = ["commit-tree", str(tree or own), "-F", "-"] + (["-p", parent] if parent else [])
        return self.git(args, input=body, env=env).stdout.decode().strip()

    # -- reading -------------------------------------------------------------------

    def log(self, *, since: int | None = None) -> list[Snapshot]:
        """The snapshots, newest first (from ``since``, seconds since the epoch, on)."""
        if self.head() is None:
            return []
        args = ["log", f"--max-count={MAX_CHAIN}", "--format=%H %ct %s", self.ref]
        if since is not None:
            args.insert(1, f"--since={dt.datetime.fromtimestamp(since, dt.timezone.utc).isoformat()}")
        out = []
        lines, _ = self.listing(args, what=("the chain's log", "snapshots"), limit=MAX_CHAIN,
                                sep=b"\n")
        for line in (x.decode("utf-8", "replace") for x in lines if x):
            sha, stamp, subject = (line.split(" ", 2) + ["", ""])[:3]
            out.append(Snapshot(sha, int(stamp), subject))
        return out

    def versions(self, *, since: int | None = None, wanted=None,
                 known: Versions | None = None) -> Versions:
        """``(commit, time, vault path, blob)`` of every recorded version of a file, each
        file's oldest first: what each snapshot since ``since`` wrote (``wanted(vault
        path)`` filters), and the version each such file had in the snapshot before the
        first of them.

        ``known``: what an earlier call with the same ``since`` (and no ``wanted``)
        returned; when the snapshots made since extend its chain, only they are read."""
        head = self.head()
        if head is None:
            return Versions(None, [])
        if known is not None and known.head == head:
            return known
        args = ["log", "--reverse", "-z", "--raw", "--no-renames", "--no-abbrev", "--root",
                f"--max-count={MAX_CHAIN}", "--format=%x1e%H %ct %P"]
        if since is not None:
            args.append(f"--since={dt.datetime.fromtimestamp(since, dt.timezone.utc).isoformat()}")
        extend = known is not None and known.head is not None and wanted is None
        what = ("the chain's log", "changed files")
        changes = lambda f: f[:1] == b":"  # noqa: E731  (a raw entry; its path follows)
        if extend:
            # (the snapshots vaultkit wrote since are in the chain's record: no git log)
            fields = self._recorded_since(known.head, head, since)
            whole = fields is not None
            if fields is None:
                fields, whole = self.listing(args + [f"{known.head}..{head}"], what=what,
                                             limit=MAX_CHANGES, counted=changes, check=False)
            if not whole:  # (that head is gone: pruned and collected; or over a bound)
                return self.versions(since=since, wanted=wanted)
        else:
            fields, whole = self.listing(args + [head], what=what, limit=MAX_CHANGES,
                                         counted=changes)
        out: list[tuple[str, int, str, str]] = []
        # (a path whose last change in the window is a deletion is not in the head's tree)
        gone = set(known.gone) if extend and known.gone is not None else set()
        commit, when, first, first_parents = "", 0, None, ""
        read = 0  # snapshots
        i = 0
        while i < len(fields):
            token = fields[i].lstrip(b"\n")
            i += 1
            if token.startswith(b"\x1e"):
                sha, _, rest = token[1:].decode().partition(" ")
                stamp, _, parents = rest.partition(" ")
                commit, when = sha, int(stamp)
                read += 1
                if first is None:
                    first, first_parents = commit, parents.strip()
                continue
            if token.startswith(b":") and i < len(fields):
                parts = token[1:].decode("ascii", "replace").split()
                path = vault_path_of(os.fsdecode(fields[i]))
                i += 1
                if len(parts) < 5 or not (wanted is None or wanted(path)):
                    continue
                if parts[4][:1] == "D":
                    gone.add(path)
                else:
                    gone.discard(path)
                    out.append((commit, when, path, parts[3]))
        if not extend and read >= MAX_CHAIN and first_parents:  # (--max-count stopped git)
            whole = False
            self.warn(f"{self.ref}: the chain holds more than {MAX_CHAIN:,} snapshots; the "
                      "older ones are not read")
        if extend:
            if first is None or first_parents != known.head:
                # not an extension (retention rewrote the chain, the ref went back): read
                # it all
                return self.versions(since=since, wanted=wanted)
            # the window's start is the same: files first written in it now get the
            # version they had then, ahead of their new ones
            paths = known.paths
            new = [p for p in dict.fromkeys(v[2] for v in out) if p not in paths]
            entries = known.base(self) if new and known.before else {}
            base = [(known.before, known.before_time, p, entries[p])
                    for p in new if p in entries]
            return known.extended(head, base, out,
                                  gone if known.gone is not None else None)
        before, stamp, entries = None, 0, {}
        if first is not None and since is not None:
            # the versions the window started from: the snapshot before its first one
            before = first_parents.split()[0] if first_parents else None
            if before:
                stamp = int(self.git(["log", "-1", "--format=%ct", before]).stdout.split()[0])
                entries = {vault_path_of(p): e[2] for p, e in self._tree_entries(before).items()}
                paths = {p for _, _, p, _ in out}
                out = [(before, stamp, p, oid) for p, oid in entries.items() if p in paths] + out
        # (a chain read short is never kept, nor extended later, as if it were whole: no
        # head, so each run reads it again and finds what a fresh run finds)
        return Versions(head if whole else None, out, before, stamp, entries,
                        gone if whole else None)

    def sizes(self, oids) -> dict[str, tuple[str, int]]:
        """``{oid: (type, size)}`` of the objects git has, from ``cat-file --batch-check``
        (nothing of their content is read)."""
        oids = [o for o in dict.fromkeys(oids) if o]
        if not oids:
            return {}
        out = self.git(["cat-file", "--batch-check"],
                       input="".join(o + "\n" for o in oids).encode()).stdout
        found = {}
        for line in out.decode("ascii", "replace").splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[2].isdigit():  # (else "<oid> missing")
                found[parts[0]] = (parts[1], int(parts[2]))
        return found

    def blobs(self, oids, names: dict[str, str] | None = None) -> dict[str, bytes]:
        """``{oid: content}`` of the blobs ``oids`` (those git has); each read from git
        once while the store's :class:`BlobMemo` holds it.

        One ``cat-file --batch`` read as it comes: each object's header (its size) is read
        before its content, and a blob over ``budgets.max-file-bytes``, an object that is
        not a blob, or one that would take this read past :data:`MAX_READ_BYTES` is not
        read: git is stopped there (a warning names the object, ``names``: oid -> what it
        is, a path in a snapshot) and started again for the objects after it."""
        oids = list(dict.fromkeys(oids))
        memo = self.memo
        result = {oid: memo.held[oid] for oid in oids if oid in memo.held}
        missing = [oid for oid in oids if oid not in result]
        if not missing:
            return result
        read: list[tuple[str, bytes]] = []
        budget = [MAX_READ_BYTES]
        while missing:
            missing = self._batch(missing, names or {}, budget, read)
        for oid, data in read:
            result[oid] = data
        memo.remember(read)
        return result

    def _batch(self, oids: list[str], names: dict, budget: list, read: list) -> list[str]:
        """Read ``oids`` with one ``cat-file --batch`` into ``read`` until one is refused
        (see :meth:`blobs`); the oids after that one, to read with another."""
        import tempfile

        from vaultkit.core.gitenv import popen_git

        limit = self.settings.profile.budgets.max_file_bytes
        extra = {"GIT_DIR": str(self.cwd)} if self.bare else {}
        with tempfile.TemporaryFile() as ask:  # (a file, not a pipe: git answers as it reads)
            ask.write("".join(o + "\n" for o in oids).encode())
            ask.seek(0)
            try:
                proc = popen_git(["cat-file", "--batch"], cwd=self.cwd,
                                 stderr=subprocess.DEVNULL, keep_repo_env=not self.bare,
                                 env=extra, stdin=ask)
            except FileNotFoundError:
                raise VaultkitError("git is not installed; snapshots need git") from None
            except OSError as exc:
                raise VaultkitError(f"git could not be run: {exc}") from None
            rest: list[str] = []
            try:
                for i, oid in enumerate(oids):
                    header = proc.stdout.readline(4096).decode("ascii", "replace").split()
                    if not header:
                        break  # (git stopped)
                    if len(header) != 3 or not header[2].isdigit():
                        continue  # "<oid> missing": not in the store, as before
                    kind, size = header[1], int(header[2])
                    named = (f"{names[oid]} (object {oid[:10]})" if oid in names
                             else f"object {oid[:10]}")
                    why = (f"is a {kind}, not a file's content" if kind != "blob" else
                           f"is {size:,} bytes, over the {limit:,}-byte limit "
                           "(budgets.max_file_bytes)" if size > limit else
                           f"would take the read past {MAX_READ_BYTES:,} bytes"
                           if size > budget[0] else "")
                    if why:
                        self.warn(f"{self.ref}: {named} {why}; not read, that version is "
                                  "not judged")
                        rest = oids[i + 1:]
                        break
                    data = proc.stdout.read(size + 1)[:size]  # (and the newline after it)
                    budget[0] -= size
                    read.append((header[0], data))
            finally:
                if rest:
                    proc.kill()
                proc.stdout.close()
                proc.wait()
        return rest

    def size_report(self) -> dict:
        """How many snapshots, from when to when, and the bytes their objects take."""
        chain = self.log()
        report = {"ref": self.ref, "store": str(self.cwd), "snapshots": len(chain),
                  "oldest": chain[-1].time if chain else None,
                  "newest": chain[0].time if chain else None, "objects": 0, "bytes": 0,
                  "keepDays": snapshot_settings(self.settings).keep_days}
        if chain:
            objs, _ = self.listing(["rev-list", "--objects", self.ref], sep=b"\n",
                                   what=("the chain's objects", "objects"),
                                   limit=MAX_CHANGES + MAX_CHAIN)
            oids = [line.split(b" ", 1)[0].decode("ascii", "replace") for line in objs if line]
            proc = self.git(["cat-file", "--batch-check=%(objectsize:disk)"],
                            input="".join(o + "\n" for o in oids).encode())
            sizes = [int(x) for x in proc.stdout.split() if x.isdigit()]
            report["objects"], report["bytes"] = len(oids), sum(sizes)
        return report

    # -- credentials in the chain ---------------------------------------------------

    def _chain_changes(self) -> list[tuple[str, int, list[tuple[str, str | None]]]]:
        """``(commit, time, [(store path, blob, or None when deleted)])`` of every snapshot,
        oldest first: the first one lists its whole tree, so every blob the chain holds is
        named where it was first recorded."""
        if self.head() is None:
            return []
        fields = self.git(["log", "--reverse", "-z", "--raw", "--no-renames", "--no-abbrev",
                           "--root", "--format=%x1e%H %ct", self.ref]).stdout.split(b"\0")
        out: list[tuple[str, int, list[tuple[str, str | None]]]] = []
        i = 0
        while i < len(fields):
            token = fields[i].lstrip(b"\n")
            i += 1
            if token.startswith(b"\x1e"):
                sha, _, stamp = token[1:].decode().partition(" ")
                out.append((sha, int(stamp.split()[0]), []))
                continue
            if token.startswith(b":") and i < len(fields) and out:
                parts = token[1:].decode("ascii", "replace").split()
                path = os.fsdecode(fields[i])
                i += 1
                if len(parts) >= 5:
                    out[-1][2].append((path, None if parts[4][:1] == "D" else parts[3]))
        return out

    def _scan_blobs(self, oids) -> dict[str, list]:
        """``{blob: findings}`` of the blobs among ``oids`` that hold a credential, judged
        as ``secret-in-memory`` judges a note (an example code block's placeholder is not
        one), read a bounded batch at a time."""
        from vaultkit.vault.gitstate import decode
        from vaultkit.vault.parse import parse_note
        from vaultkit.vault.secretscan import has_candidates, scan_text

        oids = list(dict.fromkeys(oids))
        found: dict[str, list] = {}
        for start in range(0, len(oids), 256):  # (at most 256 memory files in memory)
            # (read as every read of the chain is: a blob over max-file-bytes, or past the
            # read's bound, is not read, and a warning names it)
            for oid, data in self.blobs(oids[start:start + 256]).items():
                text = decode(data)
                if has_candidates(text):
                    findings = scan_text(text)
                    if findings:  # (parsed only then: its example blocks)
                        note = parse_note("snapshot.md", data)
                        if not note.error:
                            findings = scan_text(note.text, note.code_ranges)
                    if findings:
                        found[oid] = findings
        return found

    def credentials(self) -> list["HeldCredential"]:
        """Every credential a blob of the chain holds, each named by the snapshot that first
        recorded that blob at that path (what a push would send; the detector of
        ``secret-in-memory``)."""
        chain = self._chain_changes()
        found = self._scan_blobs(oid for _, _, changes in chain for _, oid in changes if oid)
        return _held(chain, found)

    def drop_secrets(self) -> "DroppedSecrets":
        """Rewrite the chain without the credentials it holds: each blob holding one is
        replaced by its text without the lines holding them (a private key from its BEGIN
        line to its END line); everything else, messages and dates included, is kept. The
        snapshots before the first such blob keep their ids. Under the snapshot lock; the
        ref moves in one step (``update-ref`` with the old value)."""
        fd = self._lock()
        try:
            head = self.head()
            chain = self._chain_changes()
            found = self._scan_blobs(oid for _, _, changes in chain for _, oid in changes
                                     if oid)
            held = _held(chain, found)
            if not found:
                return DroppedSecrets(head, head, [], 0)
            oids = list(found)
            raw = self.blobs(oids)
            cleaned = self._write_blobs([_without_credentials(raw[o], found[o]) for o in oids])
            parent, rewritten = self._rewrite(head, chain, dict(zip(oids, cleaned)), set())
            return DroppedSecrets(head, parent, held, rewritten)
        finally:
            os.close(fd)

    def forget(self, paths) -> tuple[str | None, str | None, int, list[str]]:
        """Rewrite the chain without ``paths`` (vault paths): no snapshot holds any version
        of them any more (a journal deleted on purpose stops counting as a loss). The
        snapshots before the first that held one keep their ids. ``(old head, new head,
        snapshots rewritten, the paths that were held)``. Under the snapshot lock."""
        fd = self._lock()
        try:
            head = self.head()
            chain = self._chain_changes()
            wanted = {store_path(p) for p in paths}
            held = sorted({p for _, _, changes in chain for p, _ in changes if p in wanted})
            missing = sorted(wanted - set(held))
            if missing:  # (a typo forgets nothing, and says so)
                raise VaultkitError(f"{vault_path_of(missing[0])}: no snapshot holds it (a "
                                    "vault path, as `vaultkit history` shows it); nothing "
                                    "rewritten")
            parent, rewritten = self._rewrite(head, chain, {}, set(held))
            return head, parent, rewritten, [vault_path_of(p) for p in held]
        finally:
            os.close(fd)

    def _rewrite(self, head, chain, mapping: dict[str, str], forget: set[str]):
        """Copy the chain from the first snapshot whose tree holds a blob of ``mapping``
        (old blob -> new) or a path of ``forget``, with those blobs replaced and those
        paths left out; move the ref in one step (from ``head``) and bring the stat table
        along (a replaced or forgotten file is read again by the next snapshot).
        ``(new head, snapshots rewritten)``."""
        index = self.meta / f"index.{os.getpid()}.tmp"
        env = {"GIT_INDEX_FILE": str(index)}
        files: dict[str, str] = {}
        parent: str | None = None
        rewriting = False
        rewritten = 0
        try:
            for commit, _, changes in chain:
                for path, oid in changes:
                    if oid is None:
                        files.pop(path, None)
                    else:
                        files[path] = oid
                swap = {p: mapping[o] for p, o in files.items() if o in mapping}
                drop = forget & files.keys()
                rewriting = rewriting or bool(swap or drop)
                if not rewriting:  # before the first: the same snapshot
                    parent = commit
                    continue
                tree = None
                if swap or drop:
                    self.git(["read-tree", commit], env=env)
                    lines = b"".join(f"100644 {new}\t".encode() + os.fsencode(p) + b"\0"
                                     for p, new in sorted(swap.items()))
                    lines += b"".join(b"0 " + b"0" * 40 + b"\t" + os.fsencode(p) + b"\0"
                                      for p in sorted(drop))
                    self.git(["update-index", "-z", "--index-info"], input=lines, env=env)
                    tree = self.git(["write-tree"], env=env).stdout.decode().strip()
                parent = self._copy_commit(commit, parent, tree)
                rewritten += 1
        finally:
            try:
                os.unlink(index)
            except OSError:
                pass
        self._move_ref(str(parent), head)
        table = self._load_table()
        if table.get("commit") == head:
            entries = {p: ([-1, -1, mapping[e[2]], 1] if e[2] in mapping else e)
                       for p, e in table["entries"].items() if p not in forget}
            self._save_table({**table, "commit": parent, "entries": entries})
        return parent, rewritten

    def push(self, remote: str) -> str:
        """Push the chain to ``remote`` (force: the retention rewrites it); git's answer."""
        proc = self.git(["push", "--force", "--quiet", "--no-verify", remote,
                         f"{self.ref}:{self.ref}"], env={"GIT_TERMINAL_PROMPT": "0"},
                        check=False, network=True)
        if proc.returncode != 0:
            # git's reason is its first fatal:/error: line; the last is often the tail of
            # an advice ("and the repository exists.")
            lines = [x.strip() for x in proc.stderr.decode("utf-8", "replace").splitlines()
                     if x.strip()]
            said = [x.split(":", 1)[1].strip() for x in lines
                    if x.startswith(("fatal:", "error:"))]
            detail = said[0] if said else (lines[0] if lines else f"exit {proc.returncode}")
            raise VaultkitError(f"push to {remote} failed: {detail}")
        return remote


class HeldCredential:
    """A credential a snapshot holds: the snapshot that first recorded it there, the vault
    path, and the detector's finding (its masked form only: safe to print)."""

    _fields = ("commit", "time", "path", "finding")
    commit: str
    time: int
    path: str
    finding: object  # vaultkit.vault.secretscan.Finding

    def __init__(self, commit, time, path, finding):
        self.commit = commit
        self.time = time
        self.path = path
        self.finding = finding


class DroppedSecrets:
    """What :meth:`Store.drop_secrets` did."""

    _fields = ("old", "new", "dropped", "rewritten")
    old: str | None  # the chain's head before
    new: str | None  # and after (the same when nothing held a credential)
    dropped: list  # the HeldCredential it took out
    rewritten: int  # snapshots copied without them

    def __init__(self, old, new, dropped, rewritten):
        self.old = old
        self.new = new
        self.dropped = dropped
        self.rewritten = rewritten


def _held(chain, found) -> list[HeldCredential]:
    """The credentials of ``found`` (blob -> findings) in ``chain`` (see
    :meth:`Store._chain_changes`), each where its blob was first recorded at its path."""
    out, seen = [], set()
    for commit, when, changes in chain:
        for path, oid in changes:
            if oid in found and (oid, path) not in seen:
                seen.add((oid, path))
                out += [HeldCredential(commit, when, vault_path_of(path), f)
                        for f in found[oid]]
    return out


def _without_credentials(data: bytes, findings) -> bytes:
    """``data`` without the lines holding ``findings`` (a private key's whole block), and
    again while what is left still holds one (a line that read as a token once its
    neighbour went)."""
    from vaultkit.vault.gitstate import decode
    from vaultkit.vault.secretscan import scan_text

    lines = data.split(b"\n")
    for _ in range(8):
        drop = set()
        for f in findings:
            first = f.line - 1
            last = first
            if f.kind == "private key":  # its body follows, up to the END line
                while last < len(lines) - 1 and b"-----END" not in lines[last]:
                    last += 1
            drop.update(range(first, last + 1))
        lines = [line for n, line in enumerate(lines) if n not in drop]
        findings = scan_text(decode(b"\n".join(lines)))
        if not findings:
            return b"\n".join(lines)
    return b""  # (never left holding one: nothing of it is kept)


BLOBS_AT_MOST_BYTES = 16 << 20  # what a BlobMemo holds at most


class BlobMemo:
    """Snapshot objects read, by id: an object's content never changes, so what its owner
    read once it does not ask git again. Its owner decides how long that is: a run (the
    two snapshot rules of one check share :attr:`Context.blobs`), the watcher's store
    over its rounds, a workspace over its calls (the answering process of ``vaultkit
    watch`` hands what each child read to the next: :meth:`start_telling`), and with them
    the memo files parsed (:attr:`files`). Held in memory only, the oldest let go first
    past ``at_most`` bytes (an object over a quarter of that is not held)."""

    def __init__(self, at_most: int | None = None, later=None):
        self.at_most = BLOBS_AT_MOST_BYTES if at_most is None else at_most
        # when the memo files are written (vaultkit.vault.store.Later: its owner's), and
        # those parsed, kept parsed by an answering process for its next child
        self.later = later if later is not None else Later()
        self.files = KeptFiles()
        # Store.versions() by (repository, ref, since) (changed_versions): a snapshot never
        # changes, so neither does what its chain recorded since a given time; later
        # snapshots only add to it
        self.versions: dict = {}
        self.held: dict[str, bytes] = {}
        self.size = 0  # the bytes held
        self.told: list[str] | None = None  # the ids read since start_telling()

    def remember(self, items) -> None:
        """Hold ``(oid, content)`` pairs read from git."""
        held = self.held
        for oid, data in items:
            if self.told is not None:
                self.told.append(oid)
            if oid in held or len(data) > self.at_most // 4:
                continue
            held[oid] = data
            self.size += len(data)
            while self.size > self.at_most:
                self.size -= len(held.pop(next(iter(held))))

    def heads_read(self) -> list[str]:
        """The newest snapshot of each chain whose versions were read through this memo."""
        return [v.head for v in self.versions.values() if isinstance(v.head, str)]

    def start_telling(self) -> None:
        """From now on, note the ids read (a child of the answering process, which tells
        its parent what it read: :meth:`read_since`)."""
        self.told = []

    def read_since(self) -> list[tuple[str, bytes]]:
        """``(oid, content)`` of the objects read since :meth:`start_telling` and held."""
        held = self.held
        return [(oid, held[oid]) for oid in dict.fromkeys(self.told or ()) if oid in held]


def _date_of(ident: str | None) -> str:
    """``<seconds> <zone>`` of an author or committer line."""
    parts = (ident or "").rsplit(" ", 2)
    return f"{parts[-2]} {parts[-1]}" if len(parts) == 3 else ""


def snapshot_message(changed, removed) -> str:
    shown = [vault_path_of(p) for p in list(changed)[:3]]
    more = len(changed) - len(shown)
    what = ", ".join(shown) + (f" and {more} more" if more > 0 else "")
    subject = (f"snapshot: {len(changed)} changed" + (f" ({what})" if changed else "")
               + (f", {len(removed)} removed" if removed else ""))
    body = [f"changed {vault_path_of(p)}" for p in changed]
    body += [f"removed {vault_path_of(p)}" for p in removed]
    return subject + "\n\n" + "\n".join(body) + "\n"


def _git_dirs(toplevel: Path) -> tuple[Path, Path] | None:
    """``(git dir, common git dir)`` of the work tree at ``toplevel``.

    Read from the files git keeps (``.git/``, or a ``.git`` file naming the git dir and its
    ``commondir``), as git itself finds them; ``git rev-parse`` only when those do not
    settle it (``GIT_DIR`` set, an unusual layout)."""
    import os as _os

    dotgit = toplevel / ".git"
    if not _os.environ.get("GIT_DIR") and not _os.environ.get("GIT_COMMON_DIR"):
        try:
            if dotgit.is_dir() and not dotgit.is_symlink():
                return dotgit, dotgit
            if dotgit.is_file():
                text = dotgit.read_text("utf-8", "surrogateescape").strip()
                if text.startswith("gitdir:"):
                    git_dir = (toplevel / text[7:].strip()).resolve()
                    common = git_dir
                    if (git_dir / "commondir").is_file():
                        common = (git_dir / (git_dir / "commondir").read_text(
                            "utf-8", "surrogateescape").strip()).resolve()
                    if (common / "objects").is_dir():
                        return git_dir, common
        except OSError:
            pass
    from vaultkit.core.gitenv import run_git

    try:
        proc = run_git(["rev-parse", "--path-format=absolute", "--git-dir",
                        "--git-common-dir"], cwd=toplevel)
    except OSError as exc:
        raise VaultkitError(f"git could not be run: {exc}") from None
    lines = proc.stdout.decode("utf-8", "surrogateescape").splitlines()
    if proc.returncode == 0 and len(lines) >= 2:
        return Path(lines[0]), Path(lines[1])
    return None


def open_store(root: Path, settings, *, create: bool = False, git_state=None,
               blobs: BlobMemo | None = None) -> Store | None:
    """The vault's snapshot store; None when it has none and ``create`` is False.

    ``git_state`` (a :class:`~vaultkit.vault.gitstate.GitState` already probed) saves the
    ``rev-parse`` that finds the repository; ``blobs``: the memo of objects read that the
    store reads through (:class:`BlobMemo`; default: the store's own).
    """
    from vaultkit.vault.gitstate import GitState

    root = Path(root)
    state = git_state
    if state is None:
        stub = SimpleNamespace(root=root, profile=settings.profile, settings=settings)
        state = GitState(stub)  # type: ignore[arg-type]
    if state.available and state.toplevel is not None:
        dirs = _git_dirs(Path(state.toplevel))
        if dirs is not None:
            git_dir, common = dirs
            where = state.prefix if not state.down else "down:" + state.down
            linked = git_dir != common
            ref = REF
            if where or linked:
                # (a linked worktree by its name, .git/worktrees/<name>: the same however
                # the path is spelt)
                key = f"{git_dir.name if linked else ''}\0{where}"
                ref = f"{REF}-{sha1(key.encode('utf-8', 'surrogateescape')).hexdigest()[:12]}"
            store = Store(root, settings, cwd=state.toplevel, meta=common / "vaultkit", ref=ref,
                          bare=False, blobs=blobs)
            if not create and not store.table_path.is_file() and not store.has_ref_file():
                return None  # (no git process spent on a vault without snapshots)
            return store
    bare = root / ".vaultkit" / BARE_STORE
    store = Store(root, settings, cwd=bare, meta=bare / "vaultkit", ref=REF, bare=True,
                  blobs=blobs)
    if not (bare / "HEAD").is_file():
        if not create:
            return None
        from vaultkit.vault.cachefile import ensure_cache_dir

        try:
            ensure_cache_dir(root / ".vaultkit")
        except OSError as exc:
            raise VaultkitError(f"{root / '.vaultkit'}: cannot create the snapshot store: "
                                f"{exc.strerror or exc}") from None
        if os.path.islink(bare):
            raise VaultkitError(f"{bare}: is a symlink; the snapshot store is not used")
        store.cwd = bare.parent  # (the store's folder does not exist yet)
        try:
            store.git(["init", "--bare", "--quiet", str(bare)])
        finally:
            store.cwd = bare
    return store


# -- what the hook compares ---------------------------------------------------------------

class JournalLoss(Plain):
    """Journal lines a snapshot held that the new version lacks."""

    _fields = ("path", "lines", "since", "commit", "deleted")
    path: str  # vault path
    lines: list[str]  # the lines gone, in the order they were written
    since: int  # time of the newest snapshot that still held one of them
    commit: str  # that snapshot
    deleted: bool  # the journal itself is gone (not on the new side, not on disk)

    def __init__(self, path, lines, since, commit, deleted=False):
        self.path = path
        self.lines = lines
        self.since = since
        self.commit = commit
        self.deleted = deleted


def changed_versions(store: Store, *, since: int | None, wanted,
                     current=None) -> list[tuple[str, int, str, str]]:
    """:meth:`Store.versions` without the files every recorded version of which is the
    current blob (``current(versions)``: the paths of which a version is not the current
    blob, asked only when there are versions): nothing of theirs can be lost, and after a
    watcher's first snapshot that is nearly every file of the vault, so none of their
    texts is read."""
    key = (str(store.cwd), store.ref, since)
    # (the two snapshot rules of one run ask for the same window; a later run reads only
    # the snapshots made since the last one that read it, kept beside the stat table)
    memo = store.memo.versions
    known = memo.get(key) or _load_versions(store, since)
    versions = memo[key] = store.versions(since=since, known=known)
    # (written again when the next run would read much more without it: a run after a
    # snapshot or two reads those from git faster than the whole window is written; a
    # process answering a check writes after its answer, at no cost to the caller, so
    # every time: the next check reads nothing from git unless a snapshot was made)
    if versions is not known and versions.head is not None and (
            versions.saved is None or len(versions) - versions.saved >= _SAVE_AFTER
            or store.memo.later.holding):
        store.memo.later(lambda: _save_versions(store, since, versions))
        versions.saved = len(versions)
    while len(memo) > 4:
        del memo[next(iter(memo))]
    if not versions:
        return versions
    differ = current(versions) if current is not None else versions.paths
    wanted = {path for path in differ if wanted is None or wanted(path)}
    return [v for v in versions if v[2] in wanted] if wanted else []


_VERSIONS_FORMAT = 3
_SAVE_AFTER = 256  # versions read from git since the versions file was written
# the last snapshot table read ([file key, table]): one per process
_TABLE: list = []
# the last append index read ([file key, {new blob: old blob}]): one per process
_APPENDS: list = []
# the last chain's record read ([file key, {commit: record}]): one per process
_CHAIN: list = []


def _versions_path(store: Store, since: int | None = None) -> Path:
    # one file per kind of window (the whole chain, the journal rule's; since the last
    # commit, mass-deletion's): each run asks for both, so one file would never hold
    # the window asked next
    name = store.ref.rsplit("/", 1)[-1] + (".versions" if since is None else ".since.versions")
    return store.meta / name


def _load_versions(store: Store, since: int | None) -> Versions | None:
    """The versions the last run read for the window from ``since``, if it is this one."""
    try:
        data = store.memo.files.load(_versions_path(store, since), 1 << 30)
        fmt, ref, when, head, items, before, before_time, gone, tips, mixed, outside = data
        if fmt != _VERSIONS_FORMAT or ref != store.ref or when != since \
                or not isinstance(items, list) or not isinstance(gone, (list, type(None))) \
                or not isinstance(tips, dict) or not isinstance(mixed, list) \
                or (items and (set(map(type, items)) != {tuple}
                               or set(map(len, items)) != {4})):
            return None
        versions = Versions(head, items, before, before_time,
                            gone=None if gone is None else set(gone),
                            summary=(tips, set(mixed), bool(outside)))
        versions.saved = len(versions)
        return versions
    except (OSError, ValueError, EOFError, TypeError):
        return None


def _save_versions(store: Store, since: int | None, versions: Versions) -> None:
    """Keep ``versions`` for the next run (atomically; a lost write costs one read)."""
    import marshal

    path = _versions_path(store, since)
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    try:
        with open(tmp, "wb") as fh:
            gone = None if versions.gone is None else sorted(versions.gone)
            tips, mixed, outside = versions.summary()
            fh.write(marshal.dumps((_VERSIONS_FORMAT, store.ref, since, versions.head,
                                    list(versions), versions.before, versions.before_time,
                                    gone, tips, sorted(mixed), outside)))
        os.replace(tmp, path)
    except (OSError, ValueError):
        try:
            os.unlink(tmp)
        except OSError:
            pass


def current_blobs(store: Store, git, vault):
    """The ``current`` of :func:`changed_versions` for the snapshot rules: the paths of
    which a version is not the staged blob when they compare the index
    (:func:`staged_differ`), else not the blob the snapshot table knows for the file (a
    file the listing shows changed since is not known: all its versions differ)."""
    # (one answer for the run's two snapshot rules, which share ``git``: the same object,
    # so the comparison with the versions is made once too)
    memo = git.__dict__.setdefault("_snapshot_current", {})
    key = str(store.cwd)

    def current(versions):
        found = memo.get(key)
        if found is None or found[0] is not versions:
            differ = staged_differ(store, git, versions) \
                if git.available and git.staged else None
            if differ is None:
                if git.available and git.staged:
                    now = git.index_oids
                else:  # (the listing compared with the table once, whichever window asks)
                    now = memo.get((key, "now"))
                    if now is None:
                        now = memo[(key, "now")] = store.current_oids(vault.listed_states())
                differ = {path for _, _, path, oid in versions if now.get(path) != oid}
            found = memo[key] = (versions, differ)
        return found[1]
    return current


def index_against_newest(vault, git) -> None:
    """Ask git now how the index differs from the newest snapshot in the repository (what
    :func:`staged_differ` asks; the answer is kept by ``git``)."""
    if not (git.available and git.staged):
        return
    store = open_store(vault.root, vault.settings, git_state=git)
    newest = store.head() if store is not None and not store.bare else None
    if newest is not None:
        git.index_against(newest)


def staged_differ(store: Store, git, versions: Versions) -> set[str] | None:
    """The paths of which a version is not the staged blob (none staged included), as
    comparing each version with :attr:`GitState.index_oids` finds them, without listing
    the whole index: git compares the index with the tree of the newest snapshot
    (``versions.head``), and a path it does not name has the blob that tree holds, which
    is that path's newest version, or none when a snapshot deleted it since. So a path
    differs when its versions hold two blobs, or git names it with another blob, or it was
    deleted and git does not name it. None when the tree cannot tell: a store outside the
    repository, a vault below the repository's top, bootstrap files outside it."""
    if store.bare or versions.head is None or versions.gone is None:
        return None
    tips, mixed, outside = versions.summary()
    if outside:
        return None
    staged = git.index_against(versions.head)
    if staged is None:
        return None
    differ = set(mixed)
    for path, oid in staged.items():
        tip = tips.get(path)
        if tip is not None and oid != tip:
            differ.add(path)
    differ.update(p for p in versions.gone if p in tips and p not in staged)
    return differ


def journal_losses(store: Store, new_texts, *, since: int | None, is_journal,
                   present=None, current=None, prefetch=None,
                   holders=None, accepted=None) -> list[JournalLoss]:
    """Journals whose new text (``new_texts(vault path) -> str | None``) lacks lines a
    snapshot since ``since`` held: the lines a commit of that text would seal away, as
    :func:`vaultkit.vault.loss.judge` judges them. ``holders(vault path)``: the other texts
    that hold the file now (the work tree, a stash; an iterable read lazily, only while a
    line is unexplained), whose lines are not lost either.

    A journal with no new text is passed over, unless ``present(vault path)`` says it is
    gone from the disk too: then it was deleted since that snapshot, every line it held and
    ``holders`` do not (a stash's untracked files: `git stash -u`) is lost, and the loss is
    ``deleted``. (With the file still on disk it is only not staged:
    a commit seals nothing.) ``current``: see :func:`changed_versions`. ``prefetch(paths)``
    is told the paths whose new texts are asked next. ``accepted``: the workspace's
    :class:`~vaultkit.vault.loss.AcceptedRemovals`, whose lines are not lost."""
    from collections import Counter

    from vaultkit.vault.gitstate import decode
    from vaultkit.vault.loss import judge

    versions = changed_versions(store, since=since, wanted=is_journal, current=current)
    by_path: dict[str, list[tuple[str, int, str]]] = {}
    for commit, when, path, oid in versions:
        by_path.setdefault(path, []).append((commit, when, oid))
    if prefetch is not None and by_path:
        prefetch(list(by_path))
    texts = {p: new_texts(p) for p in by_path}
    gone = {p for p, t in texts.items() if t is None and present is not None and not present(p)}
    for p in gone:
        texts[p] = ""
    names = {oid: f"{p} in snapshot {c[:10]}" for p, vs in by_path.items() for c, _, oid in vs}
    # each journal's newest version first: the versions it is known to have been appended
    # to (the append index) hold no line it does not, so when it is held they are not read
    # (a journal snapshotted N times since a commit is N versions of a growing file: reading
    # them all grew with the square of N)
    blobs = store.blobs([vs[-1][2] for p, vs in by_path.items() if texts[p] is not None],
                        names)
    appended = store.appended() if any(len(vs) > 1 for vs in by_path.values()) else {}
    known_held: dict[str, set[str]] = {}
    rest = []
    for path, vs in by_path.items():
        if texts[path] is None:
            continue
        known_held[path] = _appended_to(_held_whole(vs[-1:], blobs, texts[path]), appended)
        rest += [oid for _, _, oid in vs if oid not in known_held[path] and oid not in blobs]
    if rest:
        blobs = {**blobs, **store.blobs(rest, names)}
    out = []
    for path, vs in sorted(by_path.items()):
        text = texts[path]
        if text is None:
            continue
        # (a journal gone from the disk may still be held: `git stash -u` takes a new,
        # untracked journal out of the work tree into the stash's untracked files)
        others = () if holders is None else (lambda p=path: holders(p))
        held = _held_whole(vs, blobs, text) | known_held[path]
        mine = accepted.of(path) if accepted is not None else None
        lost: list[str] = []
        lost_seen: Counter = Counter()
        newest = None
        for commit, when, oid in vs:  # oldest first
            data = blobs.get(oid)
            if data is None or oid in held:
                continue
            need = Counter(line for line in judge(decode(data), text, others, mine).lost
                           if line.strip())
            for line, extra in need.items():
                if extra > lost_seen[line]:
                    lost += [line] * (extra - lost_seen[line])
                    lost_seen[line] = extra
            if need:
                newest = (commit, when)
        if lost:  # a line holding a credential is never brought back: not counted
            from vaultkit.vault.secretscan import has_candidates, scan_text

            text_lost = "\n".join(lost)
            if has_candidates(text_lost):
                secret = {lost[f.line - 1] for f in scan_text(text_lost)}
                lost = [line for line in lost if line not in secret]
        if lost and newest is not None:
            out.append(JournalLoss(path, lost, newest[1], newest[0], path in gone))
    return out


def _appended_to(held: set[str], appended: dict[str, str]) -> set[str]:
    """``held`` and every blob that one of them was appended to, as the append index
    (:meth:`Store.appended`) records it, back through the appends before it: a blob whose
    bytes are the start of a held blob's, to a line's end, holds none of its lines but
    those, so it is held too (what :func:`_held_whole` finds by reading it)."""
    out = set(held)
    todo = list(held)
    while todo:
        older = appended.get(todo.pop())
        if older is not None and older not in out:
            out.add(older)
            todo.append(older)
    return out


def _held_whole(versions, blobs: dict, text: str) -> set[str]:
    """The blob ids among ``versions`` every non-blank line of which ``text`` holds (as a
    multiset): :func:`vaultkit.vault.loss.judge` finds nothing lost in them, so they are
    not judged.

    Found in time proportional to the versions, not to their lines: a journal is appended
    to, so each snapshot's version is the next one's start. Newest first, a version whose
    bytes are the start of a version already found held (up to a line's end) holds no line
    that one does not, and is passed over with one byte comparison; only the others are
    counted. Without this the hook's cost grew with the square of the snapshots of a
    journal written hundreds of times between two commits (docs/performance.md)."""
    from collections import Counter

    from vaultkit.vault.gitstate import decode, split_lines

    have = None
    held: set[str] = set()
    covers: list[bytes] = []  # the newest versions found held (a few: a journal rewritten
    # and appended to again starts a new run of prefixes)
    for _, _, oid in reversed(versions):
        data = blobs.get(oid)
        if data is None or oid in held:
            continue
        if (not data or data.endswith(b"\n")) and any(c.startswith(data) for c in covers):
            held.add(oid)
            continue
        if have is None:
            have = Counter(split_lines(text)[0])
        if not any(line.strip() for line in Counter(split_lines(decode(data))[0]) - have):
            held.add(oid)  # (blank lines alone are never a loss)
            covers = [data, *covers[:3]]
    return held


def recorded_texts(store: Store, *, since: int | None, wanted,
                   current=None) -> dict[str, list[tuple[str, int, str]]]:
    """``{vault path: [(snapshot, time, text), ...]}``, oldest first: every version of the
    files ``wanted(vault path)`` accepts that the snapshots since ``since`` recorded
    (``current``: see :func:`changed_versions`)."""
    from vaultkit.vault.gitstate import decode

    versions = changed_versions(store, since=since, wanted=wanted, current=current)
    blobs = store.blobs([oid for _, _, _, oid in versions],
                        {oid: f"{path} in snapshot {c[:10]}" for c, _, path, oid in versions})
    out: dict[str, list[tuple[str, int, str]]] = {}
    for commit, when, path, oid in versions:
        if oid in blobs:
            out.setdefault(path, []).append((commit, when, decode(blobs[oid])))
    return out


def clock(stamp: int, zone=None) -> str:
    """``HH:MM`` of a snapshot (``YYYY-MM-DD HH:MM`` when not today), in ``zone``."""
    when = dt.datetime.fromtimestamp(stamp, zone or dt.datetime.now().astimezone().tzinfo)
    today = dt.datetime.now(when.tzinfo).date()
    return f"{when:%H:%M}" if when.date() == today else f"{when:%Y-%m-%d %H:%M}"

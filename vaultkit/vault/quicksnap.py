"""``vaultkit snapshot`` with nothing changed, answered before anything else is loaded.

Most runs of ``vaultkit snapshot`` (the cron line, the heartbeat's step) find nothing
changed. The full run spends most of its time before it looks at a file: the command
line's parser, the settings and the rule pack, ``git rev-parse``. So each run that
settles the store leaves a **record** beside the chain's record
(``<store folder>/quick-<key>``, one per folder the command is run from; see
:meth:`vaultkit.vault.snapshots.Store.chain_path`) of everything its answer rested on,
and the next run with the same plain command line (``vaultkit snapshot [PATH] [-q]
[--no-prune]``) checks that record first (:func:`answer`), with nothing but ``os`` and
``marshal``:

- where the vault and its repository were found: the stat (inode, mtime, ctime) of the
  folder named and of each folder above it up to the one holding ``.git`` (else to
  ``/``). A folder's mtime and ctime change whenever an entry is added, removed or
  renamed in it (``inode(7)``), so a ``vaultkit.toml``, a bootstrap file, a ``memory/``
  folder or a ``.git`` that appeared or went is seen (and the bootstrap files beside a
  vault named ``memory``, which make it a workspace's); the ``.git`` folder by its
  inode and owner, and its ``config``; no git variable that moves the repository
  (``GIT_DIR``, ``GIT_CEILING_DIRECTORIES``, ...) may be set;
- the settings: the bytes of ``vaultkit.toml`` and of the bundled rule pack they were
  built from (their SHA-1), the vaultkit version;
- the store: the ref's file naming the same newest snapshot, the stat table unchanged
  (same inode, size, mtime, ctime), the daily pruning not due;
- the files: each folder the walk entered, by its stat taken before it was listed (no
  Markdown file added, removed or renamed in it), and each Markdown file the walk
  ``lstat``'ed there with the same size, mtime, ctime and inode. The stat table says
  those are the newest snapshot's versions.

When every one of these holds, the full run would record nothing and print "nothing
changed", and this one prints the same line and touches the same ``.checked`` file.
Anything else (another option, a record missing or different in any number) runs the
full command, which writes the record again. The record vouches only for what was older
than the run that wrote it by :data:`~vaultkit.vault.cachefile.RACY_NS` (git's racy-git
rule: a file changed within the timestamps' granularity of the listing may change again
without its stat changing): a run that saw anything newer writes no record, and the next
one is a full run. A vault whose markers or ``.git`` is a symlink, a pack of
the vault's own (``profile = "rules.yaml"``), ``--profile`` or ``--root``, a ``.git``
file (a linked worktree, a submodule) or a repository another user owns never gets a
record: those runs are full runs, and so is a run by another user than the repository's
owner (git refuses it such a repository).
"""

from __future__ import annotations

import marshal
import os
import struct

from vaultkit import __version__
from vaultkit.core.digests import sha1

FORMAT = 2
PREFIX = "quick-"
KEEP = 8  # records kept in one store (one per folder `vaultkit snapshot` is run from)
MAX_RECORD_BYTES = 64 << 20  # (a 10,000-note vault's record is about 0.5 MB)
# what moves where git finds the repository (or which config it reads): with one of them
# set, the record cannot tell, and the full run asks git
GIT_ENV = ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE",
           "GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM",
           "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT")
PRUNE_EVERY_S = 86400  # (Store.snapshot drops old snapshots at most once a day)
# a file's size, mtime, ctime and inode, packed: a folder's files are one bytes object in
# the record, read without making an object per number
STAT = struct.Struct("<qqqQ")


def record_name(start: str) -> str:
    return PREFIX + sha1(os.fsencode(start)).hexdigest()[:16]


def _chain(start: str) -> tuple[list, tuple | None]:
    """``(folders, git)``: (path, mode, inode, mtime, ctime) of ``start`` and each folder
    above it up to the first holding ``.git`` (included), else up to ``/``; ``git``: that
    ``.git``'s (mode, inode, owner), or None."""
    out = []
    folder = start
    while True:
        st = os.lstat(folder)
        out.append((folder, st.st_mode, st.st_ino, st.st_mtime_ns, st.st_ctime_ns))
        try:
            git = os.lstat(os.path.join(folder, ".git"))
        except FileNotFoundError:
            git = None
        if git is not None:
            return out, (git.st_mode, git.st_ino, git.st_uid)
        up = os.path.dirname(folder)
        if up == folder:
            return out, None
        folder = up


def _metas(chain: list) -> list[str]:
    """Where a store beside any folder of the chain keeps its records (the repository's,
    a memory folder's own, the bare store of a folder not in git)."""
    out = []
    for folder, *_ in chain:
        out += [os.path.join(folder, ".git", "vaultkit"),
                os.path.join(folder, ".vaultkit", "snapshots.git", "vaultkit"),
                os.path.join(folder, "memory", ".git", "vaultkit")]
    return out


def _identity(path: str) -> tuple | None:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    return (st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


def _git_id(path: str) -> tuple | None:
    """A ``.git``'s (mode, inode, owner): what git's discovery and its ownership check see
    (not its times: git writes in it all the time)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    return (st.st_mode, st.st_ino, st.st_uid)


def _digest(path: str) -> str | None:
    """SHA-1 of a regular file's bytes (a symlink followed, as the settings read it); None
    when there is none. Anything else (a FIFO, a folder) raises OSError."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return None
    try:
        st = os.fstat(fd)
        if (st.st_mode & 0o170000) != 0o100000 or st.st_size > MAX_RECORD_BYTES:
            raise OSError(f"{path}: not a regular file")
        digest = sha1()
        while chunk := os.read(fd, 1 << 20):
            digest.update(chunk)
        return digest.hexdigest()
    finally:
        os.close(fd)


def answer(argv: list[str]) -> int | None:
    """The exit status of ``vaultkit snapshot ...`` (``argv`` from ``snapshot`` on) when
    the record shows that nothing changed (its line printed, unless ``-q``); None when the
    full command is to run: another option, no record, or anything the record does not
    vouch for."""
    quiet = no_prune = False
    path = None
    for arg in argv[1:]:
        if arg in ("-q", "--quiet"):
            quiet = True
        elif arg == "--no-prune":
            no_prune = True
        elif not arg or arg[0] == "-" or path is not None:
            return None  # (argparse says what it means, as before)
        else:
            path = arg
    environ = os.environ
    if any(name in environ for name in GIT_ENV):
        return None
    try:
        said = _unchanged(os.path.realpath(path or "."), no_prune)
    except Exception:  # (a record that does not hold what was written, a folder gone...)
        return None  # the full run tells, as before
    if said is None:
        return None
    if not quiet:
        try:
            # (the line the full run prints: numbers and a ref name of hex digits, nothing
            # the output boundary would change)
            print(said)
        except BrokenPipeError:
            return 0
    return 0


def _unchanged(start: str, no_prune: bool) -> str | None:
    chain, git = _chain(start)
    name = record_name(start)
    for meta in _metas(chain):
        try:
            fd = os.open(os.path.join(meta, name), os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
                         | getattr(os, "O_CLOEXEC", 0))
        except OSError:
            continue
        with os.fdopen(fd, "rb") as fh:
            data = fh.read(MAX_RECORD_BYTES + 1)
        if len(data) > MAX_RECORD_BYTES:
            continue
        record = marshal.loads(data)
        if type(record) is tuple and len(record) == 18 and record[:5] == (
                FORMAT, __version__, start, chain, git):
            break
    else:
        return None
    (_, _, _, _, _, rules, witnesses, gits, inputs, ref, ref_file, head, table, table_id,
     checked, prune_checked, files, dirs) = record
    if not no_prune:
        import time

        if not 0 <= time.time() - prune_checked < PRUNE_EVERY_S:
            return None  # (the full run drops old snapshots today)
    with open(ref_file, "rb") as fh:
        if fh.read(100).strip() != head.encode("ascii"):
            return None
    if _identity(table) != table_id:
        return None
    for path, identity in witnesses:
        if _identity(path) != identity:
            return None
    euid = os.geteuid()
    for path, identity in gits:
        # (the repository is its owner's: git refuses it to another user, and so does the
        # full run, which is what this answer must equal)
        if _git_id(path) != identity or (identity is not None and identity[2] != euid):
            return None
    # the packs are this installation's (another one's pack of the same version may differ)
    package = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    if rules not in (os.path.join(package, "_data", "rules"),
                     os.path.join(os.path.dirname(package), "rules")):
        return None
    for path, digest in inputs:
        if _digest(path) != digest:
            return None
    lstat = os.lstat
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) \
        | getattr(os, "O_CLOEXEC", 0)
    pack = STAT.pack
    for folder, ino, mtime, ctime, names, stats in dirs:
        fd = os.open(folder, flags)
        try:
            st = os.fstat(fd)
            if st.st_ino != ino or st.st_mtime_ns != mtime or st.st_ctime_ns != ctime:
                return None  # an entry added, removed or renamed
            if names and b"".join([pack(st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
                                   for st in [lstat(name, dir_fd=fd)
                                              for name in names.split("\0")]]) != stats:
                return None
        finally:
            os.close(fd)
    try:  # (as Store._touch_checked: when snapshots last ran, for the audit)
        fd = os.open(checked, os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
        os.close(fd)
        os.utime(checked)
    except OSError:
        pass
    return f"nothing changed since the last snapshot ({files} files on {ref})"


# -- the record, written by the full run -------------------------------------------------

def remember(path_arg: str | None, root, settings, store, seen: dict, started_ns: int) -> None:
    """Write the record for ``vaultkit snapshot PATH`` (``path_arg``) after a full run
    that took ``store``'s snapshot with ``seen`` (:func:`~vaultkit.vault.snapshots.
    memory_files`) from ``started_ns`` on (before the vault was found); or remove it when
    this run cannot vouch for its state (module docs). Never fails the run."""
    try:
        start = os.path.realpath(path_arg or ".")
        target = os.path.join(str(store.meta), record_name(start))
    except (OSError, ValueError):
        return
    try:
        record = _record(start, root, settings, store, seen, started_ns)
    except (OSError, ValueError, TypeError, KeyError):  # (a file gone meanwhile...)
        record = None
    try:
        if record is None:
            os.unlink(target)
            return
        from vaultkit.core.atomic import write_atomic

        write_atomic(target, marshal.dumps(record))
        _keep_newest(str(store.meta))
    except (OSError, ValueError):
        pass


def _keep_newest(meta: str) -> None:
    names = [n for n in os.listdir(meta) if n.startswith(PREFIX) and len(n) == len(PREFIX) + 16]
    if len(names) <= KEEP:
        return
    aged = sorted(names, key=lambda n: os.lstat(os.path.join(meta, n)).st_mtime_ns)
    for name in aged[:-KEEP]:
        os.unlink(os.path.join(meta, name))


def _record(start: str, root, settings, store, seen: dict, started_ns: int) -> tuple | None:
    from pathlib import Path

    from vaultkit.core.resources import rules_dir
    from vaultkit.vault import snapshots
    from vaultkit.vault.scan import (BOOTSTRAP_MARKERS, MEMORY_MARKER, ROOT_MARKERS,
                                     WORKSPACE_FILES, is_vault)
    from vaultkit.vault.snapshots import _same

    before = started_ns - snapshots.RACY_NS  # (the stat table's margin)

    def settled(mtime: int, ctime: int) -> bool:
        return max(mtime, ctime) < before

    root = os.path.realpath(root)
    if not seen.get("whole") or not is_vault(Path(root)):
        return None
    head = store.loose_head()
    table = store._load_table()
    if head is None or table.get("commit") != head:
        return None
    # the stat table vouches for every file as the full run would judge it: each as the
    # table holds it, out of the racy margin, and no other
    entries, files = table["entries"], seen["files"]
    if len(entries) != len(files):
        return None
    for path, numbers in files.items():
        known = entries.get(path)
        if known is None or known[3] or not known[2] or not _same(known, numbers):
            return None
    dirs = []
    for folder, ino, mtime, ctime, names, stats in seen["dirs"]:
        if not settled(mtime, ctime) or not all(settled(s[1], s[2]) for s in stats):
            return None
        dirs.append((folder, ino, mtime, ctime, "\0".join(names),
                     b"".join(STAT.pack(*numbers) for numbers in stats)))
    chain, git = _chain(start)
    folders = [c[0] for c in chain]
    if root not in folders:
        return None  # (a folder of notes named on the command line: find_root's last resort)
    witnesses = list(seen["above"])
    parent = os.path.dirname(root)
    if os.path.basename(root) == MEMORY_MARKER and parent not in folders:
        # (a `memory` folder is a workspace's by the bootstrap files beside it)
        witnesses += [(os.path.join(parent, name), _identity(os.path.join(parent, name)))
                      for name in BOOTSTRAP_MARKERS]
    looked = ROOT_MARKERS + WORKSPACE_FILES + (MEMORY_MARKER, ".git")
    for folder in folders:
        for marker in looked:  # (a symlinked marker may change with nothing here changing)
            identity = _identity(os.path.join(folder, marker))
            if identity is not None and (identity[0] & 0o170000) == 0o120000:
                return None
    for folder, _mode, _ino, mtime, ctime in chain:
        if not settled(mtime, ctime):
            return None
    for _path, identity in witnesses:
        if identity is not None and not settled(identity[2], identity[3]):
            return None
    memory = settings.profile.memory_prefix
    gits = [(os.path.join(root, memory, ".git"), _git_id(os.path.join(root, memory, ".git")))
            ] if memory else []
    if store.bare and git is not None:
        return None  # (git did not take the .git above: its ownership or a mount may change)
    if store.bare:  # (without its HEAD the folder is no store: the full run makes one)
        head_file = os.path.join(str(store.cwd), "HEAD")
        identity = _identity(head_file)
        if identity is None or not settled(identity[2], identity[3]):
            return None
        witnesses.append((head_file, identity))
    if not store.bare:
        # the repository the chain's walk found (or, with none above, the memory folder's
        # own), a folder of its user's: git trusts it whatever the config says
        # (safe.directory)
        toplevel = str(store.cwd)
        if toplevel != (folders[-1] if git is not None
                        else os.path.join(root, memory.rstrip("/")) if memory else None):
            return None
        dotgit = _git_id(os.path.join(toplevel, ".git"))
        if dotgit is None or (dotgit[0] & 0o170000) != 0o040000 \
                or dotgit[2] != os.geteuid() or os.lstat(toplevel).st_uid != os.geteuid():
            return None
        gits.append((os.path.join(toplevel, ".git"), dotgit))
        config = os.path.join(str(store.meta.parent), "config")  # (core.worktree, core.bare)
        identity = _identity(config)
        if identity is not None and not settled(identity[2], identity[3]):
            return None
        witnesses.append((config, identity))
    inputs = _settings_inputs(root, settings, rules_dir())
    if inputs is None:
        return None
    table_id = _identity(str(store.table_path))
    checked = table.get("pruneChecked", 0)
    return (FORMAT, __version__, start, chain, git, str(rules_dir()), witnesses, gits, inputs, store.ref,
            str(store.refs_dir / store.ref), head, str(store.table_path), table_id,
            str(store.checked_path), checked, len(files), dirs)


def _settings_inputs(root: str, settings, rules) -> list | None:
    """``[(path, SHA-1)]`` of the files ``settings`` were built from (vaultkit.toml, or
    None for none; the bundled pack; the bundled openclaw pack whose runtimes a pack
    without them takes), found by building their fingerprint as
    :func:`vaultkit.vault.profile.load_settings` does; None when no bundled pack gives
    it (a pack of the vault's own)."""
    config = os.path.join(root, "vaultkit.toml")
    config_bytes = None
    if settings.config_path is not None:
        with open(config, "rb") as fh:
            config_bytes = fh.read()
    bundled = os.path.join(str(rules), "openclaw.yaml")
    with open(bundled, "rb") as fh:
        bundled_bytes = fh.read()
    for name in sorted(os.listdir(str(rules))):
        if not name.endswith(".yaml"):
            continue
        path = os.path.join(str(rules), name)
        with open(path, "rb") as fh:
            data = fh.read()
        digest = sha1(__version__.encode())
        if config_bytes is not None:
            digest.update(config_bytes)
        digest.update(data)
        if path != bundled:
            digest.update(b"\0runtimes\0" + bundled_bytes)
        if digest.hexdigest()[:16] == settings.fingerprint:
            return [(config, None if config_bytes is None else sha1(config_bytes).hexdigest()),
                    (path, sha1(data).hexdigest()), (bundled, sha1(bundled_bytes).hexdigest())]
    return None

"""Find the vault root and list its files without leaving it.

The walk never follows a symlink whose target lies outside the vault or inside a
skipped folder (a journal linked to ``.git/config``), never enters the same folder
twice (symlink loops), and skips ``.git/``,
``.obsidian/``, ``.trash/``, ``.vaultkit/``, other tools' caches (a ``.*_cache/`` folder such
as ``.ruff_cache/``, or any folder holding a ``CACHEDIR.TAG``) and configured excludes. What it could
not read becomes a :class:`ScanProblem` that the ``file-unreadable`` rule reports,
and so does a Markdown file that is not a regular file (a FIFO would block every reader,
a device such as ``/dev/zero`` never ends) and a name that is not valid UTF-8 (no link,
index or search result could name it); other non-regular files are left out.
"""

from __future__ import annotations

import errno
import os
import stat
from operator import attrgetter
from pathlib import Path

from vaultkit.core.atomic import TEMP_SUFFIX
from vaultkit.core.errors import VaultkitError
from vaultkit.core.plain import Plain

TYPE_CHECKING = False  # (typing's own flag costs importing typing)
if TYPE_CHECKING:
    import subprocess

# ``.dreams/`` is OpenClaw dreaming's machine state (recall stores, the session corpus,
# locks: memory-core's short-term-promotion.ts): never a note, never searched, never
# snapshotted as memory (docs/dreaming.md).
SKIP_DIRS = frozenset({".git", ".obsidian", ".trash", ".vaultkit", "node_modules", ".venv",
                       ".dreams"})
# A folder holding a file of this name that starts with this signature is a cache
# (https://bford.info/cachedir/): rumdl, ruff, pytest, mypy, cargo and vaultkit mark theirs.
CACHEDIR_TAG = "CACHEDIR.TAG"
CACHEDIR_SIGNATURE = b"Signature: 8a477f597d28d172789f06886806bc55"
ROOT_MARKERS = ("vaultkit.toml", ".obsidian")


class FileEntry(Plain):
    """A file the scan listed: its vault path, its path on disk, and what every cache
    keyed by the listing compares: size, mtime, ctime and inode. The mtime alone can be put
    back (``cp -p``, ``rsync -t``, tar, ``os.utime``); the ctime cannot (the kernel sets it
    to the current time on any write or ``utime``), and a rename-save makes a new inode."""

    __slots__ = _fields = ("rel", "abs", "size", "mtime_ns", "ctime_ns", "ino")
    rel: str  # vault-relative, '/' separated
    abs: str
    size: int
    mtime_ns: int
    ctime_ns: int
    ino: int

    def __init__(self, rel, abs, size, mtime_ns, ctime_ns=0, ino=0):
        self.rel = rel
        self.abs = abs
        self.size = size
        self.mtime_ns = mtime_ns
        self.ctime_ns = ctime_ns
        self.ino = ino

    @property
    def changed_ns(self) -> int:
        """The later of mtime and ctime: what the racy rule compares (see store.racy)."""
        return self.ctime_ns if self.ctime_ns > self.mtime_ns else self.mtime_ns


class ScanProblem(Plain):
    """Something the scan could not read, or did not follow."""

    __slots__ = _fields = ("rel", "message")
    rel: str
    message: str

    def __init__(self, rel, message):
        self.rel = rel
        self.message = message


# What makes a folder a vault. vaultkit.toml and .obsidian/ say so outright; an OpenClaw
# workspace without either is still recognised by its bootstrap files or its memory/ folder.
BOOTSTRAP_MARKERS = ("AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "USER.md",
                     "HEARTBEAT.md", "BOOTSTRAP.md", "MEMORY.md")
MEMORY_MARKER = "memory"


class NotAVault(VaultkitError):
    """A folder (and every folder above it, up to the repository) holds no vault marker."""

    def __init__(self, start: Path):
        shown = display_path(start)
        where = start if shown == "." else shown
        # pre-commit (which sets PRE_COMMIT=1 for its hooks) runs them from the repository's
        # top: a vault in a subfolder is given to a hook that takes no file names in `args`
        fix = ("pre-commit runs hooks from the repository's top: give this hook the vault's "
               "folder (`args: [path/to/vault]`)" if shown == "." and os.environ.get("PRE_COMMIT")
               else "create one with `vaultkit init`")
        super().__init__(
            f"{where}: not a vault (no vaultkit.toml, .obsidian/, bootstrap file such as "
            "MEMORY.md, or memory/ folder here or above; name a folder of notes to check it "
            f"as a vault); {fix}")


def display_path(path: Path | str) -> str:
    """``path`` as the user would type it: relative to the current folder when inside it."""
    path = Path(path)
    try:
        here = Path.cwd()
    except OSError:
        return str(path)
    absolute = path if path.is_absolute() else here / path
    try:
        rel = os.path.relpath(absolute, here)
    except ValueError:
        return str(path)
    if rel == "." or not rel.startswith(".."):
        return rel
    return str(absolute)


# An agent workspace besides the bootstrap markers: the status board some keep.
WORKSPACE_FILES = BOOTSTRAP_MARKERS + ("NOW.md",)


def is_workspace(folder: Path) -> bool:
    """True for an agent workspace: a bootstrap file or a memory/ folder in ``folder``, or
    ``folder`` is a ``memory`` repo whose parent holds the bootstrap files."""
    if any((folder / name).is_file() for name in WORKSPACE_FILES) \
            or (folder / MEMORY_MARKER).is_dir():
        return True
    return folder.name == MEMORY_MARKER and any((folder.parent / name).is_file()
                                                for name in BOOTSTRAP_MARKERS)


def has_notes(folder: Path) -> bool:
    """True when ``folder`` holds a Markdown note, directly or one folder down (hidden
    folders aside): a plain Obsidian vault without a committed ``.obsidian/``."""
    try:
        with os.scandir(folder) as it:
            entries = list(it)
    except OSError:
        return False
    subfolders = []
    for entry in entries:
        if entry.name.lower().endswith(".md") and entry.is_file():
            return True
        if not entry.name.startswith(".") and entry.name not in SKIP_DIRS and entry.is_dir():
            subfolders.append(entry.path)
    for path in subfolders[:200]:
        try:
            with os.scandir(path) as it:
                if any(e.name.lower().endswith(".md") and e.is_file() for e in it):
                    return True
        except OSError:
            continue
    return False


def has_strong_marker(folder: Path) -> bool:
    return any((folder / marker).exists() for marker in ROOT_MARKERS)


def is_vault(folder: Path) -> bool:
    """True when ``folder`` holds a vault marker (vaultkit.toml, .obsidian/, a bootstrap
    file, or memory/)."""
    if has_strong_marker(folder):
        return True
    if any((folder / name).is_file() for name in BOOTSTRAP_MARKERS):
        return True
    return (folder / MEMORY_MARKER).is_dir()


def find_root(start: Path, named: bool = False) -> Path:
    """The vault ``start`` lies in; raises :class:`NotAVault` when it lies in none.

    The nearest folder at or above ``start`` with vaultkit.toml or .obsidian/ wins; else
    the nearest with a bootstrap file or a memory/ folder. The search stops at the git
    root: a repository is the outermost a vault can be. A folder ``named`` on the command
    line that holds notes is a vault of its own when none is found: a plain Obsidian
    vault whose ``.obsidian/`` is not committed.
    """
    start = start.resolve()
    if start.is_file():
        start = start.parent
    chain = []
    for folder in (start, *start.parents):
        chain.append(folder)
        if (folder / ".git").exists():
            break
    for folder in chain:
        if has_strong_marker(folder):
            return folder
    for folder in chain:
        if is_vault(folder):
            return folder
    if named and start.is_dir() and has_notes(start):
        return start
    raise NotAVault(start)


def require_vault(root: Path) -> Path:
    """``root`` (given with --root) when it is a vault folder, or a folder of notes (named
    on the command line, it is one); else :class:`NotAVault`."""
    if root.is_dir() and not is_vault(root) and not has_notes(root):
        raise NotAVault(root)
    return root


def skipped_folder(name: str) -> bool:
    """A folder the scan never enters, by its name alone: ``.git/``, Obsidian's settings,
    ``.trash/``, vaultkit's own cache, ``node_modules/``, ``.venv/``, OpenClaw dreaming's
    ``.dreams/``, and another tool's
    cache (``.ruff_cache/``, ``.rumdl_cache/``, ``.pytest_cache/``, ``.mypy_cache/``, ...)."""
    return name in SKIP_DIRS or _tool_cache(name)


def _tool_cache(name: str) -> bool:
    return name.startswith(".") and name.endswith("_cache")


def in_skipped_folder(rel: str) -> bool:
    """True when the vault path ``rel`` lies in a folder :func:`skipped_folder` names."""
    slash = rel.rfind("/")
    if slash < 0:
        return False
    folder = rel[:slash]
    if "." not in folder and "node_modules" not in folder:  # (every other name has a dot)
        return False
    return any(skipped_folder(part) for part in folder.split("/"))


def is_cache_tag(path: str) -> bool:
    """True when ``path`` is a cache directory tag: a file that opens with the signature."""
    try:
        with open(path, "rb") as fh:
            return fh.read(len(CACHEDIR_SIGNATURE)) == CACHEDIR_SIGNATURE
    except OSError:
        return False


def walk(root: Path, is_excluded=None, folders: list[str] | None = None, *,
         is_excluded_file=None, places: dict | None = None,
         links: list | None = None, folder_stats: dict | None = None
         ) -> tuple[list[FileEntry], list[ScanProblem]]:
    """Every file under ``root`` (real files and in-vault symlinks), sorted by path.

    ``is_excluded(rel)`` (optional) leaves out files and folders by their vault path.
    ``is_excluded_file(rel)`` (optional, with it) answers the same for a file in a folder
    the walk entered, where only the file's own path can still be excluded (see
    :meth:`vaultkit.vault.profile.Settings.is_excluded_file`).
    ``folders`` (optional) gets the real path of every folder listed: those whose changes
    change the listing (see vaultkit.vault.freshness). ``places`` (optional) gets, for each
    of them, the path it was listed by and its vault prefix (``"memory/"``; None for a
    cache folder, watched for its tag but not listed), and ``links``
    the vault path of every symlink followed: what :func:`relist` needs to list one
    folder's changed names again. ``folder_stats`` (optional) gets each folder's
    :func:`folder_stat`, taken before its names are read: a name added or removed after
    it changes the folder's mtime and ctime, event or none.
    """
    files: list[FileEntry] = []
    problems: list[ScanProblem] = []
    if is_excluded_file is None:
        is_excluded_file = is_excluded
    root_real = os.path.realpath(root)
    seen_dirs = {root_real}
    stack = [(str(root), "", root_real)]
    # each folder is opened and its files stat'ed by name in it (fstatat): the kernel resolves
    # one path component per file instead of the whole path (~20% of the listing's stat time)
    by_fd = os.scandir in os.supports_fd
    listed: dict = {} if places is None else places
    while stack:
        folder, prefix, folder_real = stack.pop()
        fd = None
        try:
            if by_fd:
                fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
            if folder_stats is not None:
                folder_stats[folder_real] = folder_stat(folder if fd is None else fd)
            with os.scandir(folder if fd is None else fd) as it:
                entries = list(it)
        except OSError as exc:
            if fd is not None:
                os.close(fd)
            problems.append(ScanProblem(prefix.rstrip("/") or ".", f"folder not readable: "
                                        f"{exc.strerror or exc}"))
            continue
        try:
            _list_folder(folder, prefix, entries, root_real, seen_dirs, stack, files, problems,
                         is_excluded, is_excluded_file, listed, folder_real, links)
        finally:
            if fd is not None:
                os.close(fd)
    if folders is not None:
        folders.extend(listed)
    files.sort(key=_rel_of)
    problems.sort(key=_problem_order)  # (in path order, as relist keeps them)
    return files, problems


def folder_stat(folder) -> tuple[int, int, int, int]:
    """A folder's ``(mtime_ns, ctime_ns, inode, when taken)``: any name created, removed or
    renamed in it moves its mtime and ctime."""
    import time

    st = os.stat(folder)
    return st.st_mtime_ns, st.st_ctime_ns, st.st_ino, time.time_ns()


def _list_folder(folder, prefix, entries, root_real, seen_dirs, stack, files, problems,
                 is_excluded, is_excluded_file, places, folder_real, links=None) -> None:
    """The files of one folder the walk listed (``entries``), into ``files``; its folders
    onto ``stack``; the folder into ``places`` (real path -> listed path and prefix)."""
    # (the names are compared in C: a generator would be a step in Python per file)
    if prefix and CACHEDIR_TAG in map(_name_of, entries) and \
            is_cache_tag(os.path.join(folder, CACHEDIR_TAG)):
        if places is not None:  # watched all the same: the tag's removal changes the listing
            places[folder_real] = None
        return  # a tool's cache: its churn is not the vault's
    if places is not None:
        places[folder_real] = (folder, prefix)
    base = folder if folder.endswith(os.sep) else folder + os.sep
    for entry in entries:
        name = entry.name
        rel = prefix + name
        path = base + name  # (what entry.path is when the folder is listed by its path)
        if not name.isascii() and not _decodable(name):  # (ASCII always encodes)
            what = "folder" if _is_dir(entry) else "file"
            problems.append(ScanProblem(printable(rel), f"{what} name is not valid UTF-8; "
                                        "not read (rename it)"))
            continue
        try:
            is_link = entry.is_symlink()
            if is_link:
                if links is not None:
                    links.append(rel)
                target = os.path.realpath(path)
                if not _inside(target, root_real):
                    problems.append(ScanProblem(rel, f"symlink points outside the vault "
                                                f"({os.readlink(path)}); not followed"))
                    continue
                hidden = _hidden(os.path.relpath(target, root_real))
                if hidden is not None:  # e.g. a journal linked to .git/config
                    problems.append(ScanProblem(rel, f"symlink into {hidden}/ "
                                                f"({os.readlink(path)}); not followed"))
                    continue
                if not os.path.exists(target):
                    what = "symlink loop" if _loops(path) else "broken symlink"
                    problems.append(ScanProblem(rel, f"{what}; not followed"))
                    continue
            is_dir = entry.is_dir()
        except OSError as exc:
            problems.append(ScanProblem(rel, f"cannot be read: {exc.strerror or exc}"))
            continue
        if is_dir:
            if skipped_folder(name) or (is_excluded is not None and is_excluded(rel)):
                continue
            real = os.path.realpath(path)
            if real in seen_dirs:
                if is_link:
                    problems.append(ScanProblem(rel, "symlink loop (folder already scanned); "
                                                "not followed"))
                continue
            seen_dirs.add(real)
            stack.append((path, rel + "/", real))
            continue
        if name.endswith(TEMP_SUFFIX):  # an interrupted atomic write is not content
            if name.startswith("."):
                from vaultkit.core.atomic import remove_stale_temp

                remove_stale_temp(path)  # (if its writer was killed)
            continue
        if is_excluded_file is not None and is_excluded_file(rel):
            continue
        try:
            st = entry.stat()
        except OSError as exc:  # deleted during the scan, or a dangling link
            problems.append(ScanProblem(rel, f"cannot be read: {exc.strerror or exc}"))
            continue
        if not stat.S_ISREG(st.st_mode):
            if name.lower().endswith(".md"):
                from vaultkit.core.bounded import not_regular

                problems.append(ScanProblem(rel, not_regular(st.st_mode)))
            continue
        files.append(FileEntry(rel, path, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino))


def relist(root: Path, files: list[FileEntry], problems: list[ScanProblem], places: dict,
           changed: dict, is_excluded=None, *, is_excluded_file=None
           ) -> tuple[list[FileEntry], list[ScanProblem], list[int] | None] | None:
    """The listing :func:`walk` made (``files``, ``problems``, ``places``) brought up to date
    after the names ``changed`` (a listed folder's real path -> names in it) were
    created, written, removed or renamed: each name is listed again through the walk's own
    per-entry code, the rest is kept. None when only a new walk gives the right answer: a
    folder that is not in ``places``, a name that is now a folder the walk did not enter,
    a cache tag. The result is what a new walk would give (``tests/test_freshness.py``
    compares them), in a fraction of its time; with it, when every listed path is still
    there and no other came (files written in place), the positions of the entries listed
    again, else None."""
    if is_excluded_file is None:
        is_excluded_file = is_excluded
    root_real = os.path.realpath(root)
    seen_dirs = set(places)
    seen_dirs.add(root_real)
    gone: set[str] = set()
    added: list[FileEntry] = []
    found: list[ScanProblem] = []
    for folder_real, names in changed.items():
        place = places.get(folder_real)
        if place is None or CACHEDIR_TAG in names:
            return None
        folder, prefix = place
        try:
            with os.scandir(folder) as it:
                entries = [e for e in it if e.name in names]
        except OSError:
            return None  # the folder itself went: its parent's listing changes too
        stack: list = []
        links: list = []
        _list_folder(folder, prefix, entries, root_real, seen_dirs, stack, added, found,
                     is_excluded, is_excluded_file, None, folder_real, links)
        if stack or links:
            # a new folder the walk enters; or a symlink, whose entry follows a file
            # elsewhere that this folder's events do not cover
            return None
        for name in names:
            gone.add(prefix + name)
            gone.add(printable(prefix + name))
    problems = [p for p in problems if p.rel not in gone] + found
    problems.sort(key=_problem_order)
    spots = _same_places(files, gone, added)
    if spots is not None:  # (each entry takes its old one's place: no filter, no sort)
        kept = list(files)
        for at, f in zip(spots, added):
            kept[at] = f
        return kept, problems, spots
    kept = [f for f in files if f.rel not in gone] if gone else list(files)
    if added:
        kept.extend(added)
        kept.sort(key=_rel_of)
    return kept, problems, None


def _same_places(files: list[FileEntry], gone: set[str], added: list[FileEntry]
                 ) -> list[int] | None:
    """The positions in ``files`` (sorted by path) of the entries ``added`` when each
    replaces one of the same path and no other listed path is ``gone``; else None."""
    from bisect import bisect_left

    def position(rel: str) -> int | None:
        at = bisect_left(files, rel, key=_rel_of)
        return at if at < len(files) and files[at].rel == rel else None

    spots = []
    for f in added:
        at = position(f.rel)
        if at is None:
            return None
        spots.append(at)
    again = {f.rel for f in added}
    if len(again) != len(added):
        return None
    for rel in gone:
        if rel not in again and position(rel) is not None:
            return None  # listed before, not now: removed or renamed
    return spots


# an entry's vault path, the listing's order: a key in C (a Python one is a call per listed file)
_rel_of = attrgetter("rel")
_name_of = attrgetter("name")  # (a DirEntry's)


def _problem_order(p: ScanProblem) -> tuple[str, str]:
    return p.rel, p.message


def _decodable(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:  # os.fsdecode kept the raw bytes as lone surrogates
        return False
    return True


def printable(text: str) -> str:
    """A path with undecodable bytes shown as ``\\xNN`` (it can be printed and stored)."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _is_dir(entry) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False
def _hidden(rel: str) -> str | None:
    """The skipped folder a vault path lies in (``.git`` at any depth), or None.

    A symlink leads into such a folder only to reach what the walk never reads, so it
    is not followed: ``.git/config``, Obsidian's settings, vaultkit's and other tools' caches.
    """
    parts = rel.replace(os.sep, "/").split("/")
    for i, part in enumerate(parts):
        low = part.casefold()
        if low == ".git" or (i == 0 and low in SKIP_DIRS) or _tool_cache(part):
            return part
    return None


def _loops(path: str) -> bool:
    try:
        os.stat(path)
    except OSError as exc:
        return exc.errno == errno.ELOOP
    return False


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def git(root: Path, *args: str, check: bool = False) -> subprocess.CompletedProcess:
    """Run git in ``root`` (command hooks off, see vaultkit.core.gitenv); bytes output."""
    import subprocess

    from vaultkit.core.gitenv import run_git

    proc = run_git(["-C", str(root), *args])
    if check and proc.returncode != 0:
        raise subprocess.CalledProcessError(proc.returncode, proc.args, proc.stdout, proc.stderr)
    return proc

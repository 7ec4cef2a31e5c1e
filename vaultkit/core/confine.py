"""Where vaultkit may write: inside the vault, never through a symlink, never into git.

Every writer (``log``, ``check --fix``, ``index``, ``archive``, ``init``,
``graph --write-colors``, the search database) asks :func:`write_target` for the path
of each file it writes and creates folders with :func:`make_folders`. Both resolve the
real path of every folder on the way, so a symlinked ``memory/`` or
``memory/archive/`` cannot lead a write elsewhere, and refuse:

- anything whose real path is outside the vault;
- a file that is itself a symlink (the write would land on another file than the one
  the command meant: a journal linked to ``NOW.md`` or to ``.git/config``);
- a FIFO, device or folder where a file is to be written (never replaced);
- anything inside ``.git/`` (at any depth), ``.obsidian/`` or ``.vaultkit/``, except
  the files the caller owns there (``owned``: Obsidian's ``graph.json`` colours, the
  starter's settings, vaultkit's own database).

Refusals are :class:`~vaultkit.core.errors.VaultkitError` with a one-line message. Opening
with ``O_NOFOLLOW`` (:data:`NOFOLLOW`) closes the gap between the check and the open
for the last component.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from vaultkit.core.errors import VaultkitError

TYPE_CHECKING = False  # (typing's own flag costs importing typing)
if TYPE_CHECKING:  # (names for annotations only)
    from typing import Iterable

PROTECTED = (".git", ".obsidian", ".vaultkit")
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _rel(real: str, root_real: str) -> str:
    return "" if real == root_real else os.path.relpath(real, root_real).replace(os.sep, "/")


def protected_part(rel: str) -> str | None:
    """The protected folder (``.git``, ``.obsidian``, ``.vaultkit``) in a vault path, if any.

    ``.git`` counts at any depth (a nested repository is as dangerous); the other two
    only at the vault root, where Obsidian and vaultkit keep them. Case-insensitive:
    on macOS and Windows ``.GIT`` is ``.git``.
    """
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    for i, part in enumerate(parts):
        low = part.casefold()
        if low == ".git" or (i == 0 and low in PROTECTED):
            return part
    return None


def _shown(path) -> str:
    return os.fspath(path)


def write_target(root: Path | str, path: Path | str, *, owned: Iterable[str] = ()) -> Path:
    """The real path at which to write ``path`` (absolute, or relative to ``root``).

    Raises VaultkitError when the write would leave the vault, go through a symlink or
    land in a protected folder (see the module docstring). The folder must exist.
    """
    root_real = os.path.realpath(root)
    given = Path(path) if os.path.isabs(path) else Path(root) / path
    shown = _shown(path)
    parent_real = os.path.realpath(given.parent)
    real = os.path.join(parent_real, given.name)
    if not _inside(real, root_real) or real == root_real:
        raise VaultkitError(f"{shown}: leads out of the vault (to {real}); not written")
    rel = _rel(real, root_real)
    owned = set(owned)
    part = protected_part(rel)
    if part is not None and rel not in owned:
        raise VaultkitError(f"{shown}: lies in {part}/ (as {rel}), where vaultkit never "
                            "writes; not written")
    if os.path.islink(real):
        target = os.path.realpath(real)
        if not _inside(target, root_real):
            where = "out of the vault"
        else:
            target_rel = _rel(target, root_real)
            hidden = protected_part(target_rel)
            where = f"into {hidden}/" if hidden else f"to {target_rel}"
        raise VaultkitError(f"{shown}: is a symlink {where} ({os.readlink(real)}); vaultkit "
                            "never writes through a symlink, not written")
    try:
        mode = os.lstat(real).st_mode
    except OSError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):  # a FIFO, a device, a folder
        from vaultkit.core.bounded import not_regular

        why = not_regular(mode).replace("; not read", "")
        raise VaultkitError(f"{shown}: {why}; nothing written")
    return Path(real)


def make_folders(root: Path | str, folder: Path | str, *, owned: Iterable[str] = ()) -> Path:
    """``mkdir -p`` that stays in the vault: every existing step is resolved and checked.

    Returns the folder's real path. A step that is a symlink out of the vault or into a
    protected folder (unless an ``owned`` file lies below it) raises VaultkitError
    before anything is created there.
    """
    root_real = os.path.realpath(root)
    folder = Path(folder)
    # lexically relative to the root (the real paths are checked step by step below)
    rel_given = Path(os.path.relpath(os.path.abspath(folder), os.path.abspath(root)))
    owned = tuple(owned)
    current = root_real
    for name in rel_given.parts:
        if name in ("", "."):
            continue
        if name == "..":
            raise VaultkitError(f"{_shown(folder)}: leads out of the vault; nothing created")
        step = os.path.join(current, name)
        if os.path.lexists(step):
            real = os.path.realpath(step)
            if not _inside(real, root_real):
                raise VaultkitError(f"{_shown(folder)}: {name}/ leads out of the vault (to "
                                    f"{real}); nothing written there")
            if not os.path.isdir(real):
                raise VaultkitError(f"{_shown(folder)}: {name} is not a folder; nothing "
                                    "written there")
        else:
            try:
                os.mkdir(step)
            except FileExistsError:
                pass  # created meanwhile: checked below like any existing step
            except OSError as exc:
                raise VaultkitError(f"{_shown(folder)}: cannot create {name}/: "
                                    f"{exc.strerror or exc}") from None
            real = os.path.realpath(step)
            if not _inside(real, root_real):
                raise VaultkitError(f"{_shown(folder)}: {name}/ leads out of the vault; "
                                    "nothing written there")
        rel = _rel(real, root_real)
        part = protected_part(rel)
        if part is not None and not any(o.startswith(rel + "/") for o in owned):
            raise VaultkitError(f"{_shown(folder)}: lies in {part}/ (as {rel}), where vaultkit "
                                "never writes; nothing written there")
        current = real
    return Path(current)


def prepare(root: Path | str, path: Path | str, *, owned: Iterable[str] = ()) -> Path:
    """Create the folders of ``path`` safely, then return its checked real path."""
    owned = tuple(owned)
    given = Path(path) if os.path.isabs(path) else Path(root) / path
    make_folders(root, given.parent, owned=owned)
    return write_target(root, given, owned=owned)


def open_append(path: Path | str, rel: str) -> int:
    """``path`` (a real path from :func:`write_target`) opened for appending, created if
    missing, and exclusively locked (``flock``): the one open of every appending writer
    (``log``, ``recover``, MCP ``memory_log``).

    Refused with VaultkitError, nothing written: a FIFO or device (checked before the open,
    which never blocks), a symlink put there since the check (``O_NOFOLLOW``), and a file
    with more than one hard link (:func:`linked_elsewhere`). Once the lock is held, the
    descriptor must still be the file at ``path``: ``archive`` moves a journal while
    holding the same lock, and a writer that opened it just before would otherwise append
    to the moved (or removed) file; then it opens the path again.
    """
    import errno
    import fcntl

    from vaultkit.core.bounded import linked_elsewhere, not_regular

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
                         | getattr(os, "O_CLOEXEC", 0) | NOFOLLOW, 0o666)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise VaultkitError(f"{rel}: is a symlink; vaultkit never writes through one, "
                                    "nothing written") from None
            raise VaultkitError(f"{rel}: cannot open for appending: {exc.strerror or exc}") \
                from None
        try:
            held = os.fstat(fd)
            if not stat.S_ISREG(held.st_mode):
                os.close(fd)
                raise VaultkitError(f"{rel}: is not a regular file; nothing written")
            linked = linked_elsewhere(held)
            if linked:
                os.close(fd)
                raise VaultkitError(f"{rel}: {linked}; nothing written")
            fcntl.flock(fd, fcntl.LOCK_EX)
            held = os.fstat(fd)
            now = os.stat(path)
            if (held.st_dev, held.st_ino) == (now.st_dev, now.st_ino):
                why = not_regular(held.st_mode) or linked_elsewhere(held)
                if why:  # swapped in, or linked, since the checks above
                    os.close(fd)
                    raise VaultkitError(f"{rel}: {why.replace('not read', 'nothing written')}"
                                        + ("" if "nothing written" in why else
                                           "; nothing written"))
                return fd
        except FileNotFoundError:
            pass
        except OSError as exc:
            os.close(fd)
            raise VaultkitError(f"{rel}: cannot lock: {exc.strerror or exc}") from None
        os.close(fd)
    raise VaultkitError(f"{rel}: the file kept moving while being opened; nothing written")

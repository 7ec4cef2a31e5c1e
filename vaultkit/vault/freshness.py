"""Has anything in the vault changed since it was listed? Answered without listing it again.

A long-running reader of the vault (``vaultkit mcp``, a watcher) keeps its last listing
(the stat table of every file: :class:`vaultkit.vault.loader.Scan`) and asks
:meth:`Freshness.unchanged` before each use. On Linux the answer comes from file events
(inotify, through the C library; no dependency): every folder the listing walked is
watched, and any event in one of them (a file created, written, removed, renamed or
touched, a folder added) means "list again". Without file events (another system, the
watch limit reached) the answer is always "list again", so the caller falls back to the
stat table of a new listing: never a stale answer, only a slower one.

The order makes it safe: the folders of the previous listing are watched *before* the
new listing is made, so a change during the listing is an event the next question sees;
folders the new listing found that were not watched yet are watched after it, and the
next question answers "list again" once, after which they are covered too.

The events also name what changed (:meth:`Freshness.changes`), so a warm listing
(vaultkit.vault.loader.WarmListing) lists only those names again instead of 10,000 files. A
kernel event is queued before the write that caused it returns, so reading the queue
empty (never waiting) is exact for what the events cover: anything written through the
vault's folders before the question is in the answer. They do not cover a write through
a hard link made outside the vault, through ``mmap``, or from the other side of a
network or VM share (inotify(7)): so "no event" is not taken for "nothing changed", and
the warm listing also stats what it listed (see WarmListing).
"""

from __future__ import annotations

import os
import struct
import sys

# inotify(7)
_IN_MODIFY, _IN_ATTRIB, _IN_CLOSE_WRITE = 0x2, 0x4, 0x8
_IN_MOVED_FROM, _IN_MOVED_TO, _IN_CREATE, _IN_DELETE = 0x40, 0x80, 0x100, 0x200
_IN_DELETE_SELF, _IN_MOVE_SELF = 0x400, 0x800
_IN_ONLYDIR, _IN_DONT_FOLLOW = 0x1000000, 0x2000000
_IN_Q_OVERFLOW, _IN_IGNORED, _IN_ISDIR = 0x4000, 0x8000, 0x40000000
# a folder added, removed or moved, a watched folder gone, events lost: list again
_RELIST = _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_Q_OVERFLOW | _IN_IGNORED | _IN_ISDIR
_EVENT = struct.Struct("iIII")  # struct inotify_event: wd, mask, cookie, len (then the name)
_MASK = (_IN_MODIFY | _IN_ATTRIB | _IN_CLOSE_WRITE | _IN_MOVED_FROM | _IN_MOVED_TO | _IN_CREATE
         | _IN_DELETE | _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_ONLYDIR | _IN_DONT_FOLLOW)


class Freshness:
    """Whether the folders of a vault's last listing saw any change since it was made.

    ``before_listing(folders)`` is called just before each new listing with the folders
    of the previous one (none the first time), ``after_listing(folders)`` just after it
    with the folders it walked. ``unchanged()`` is True only when file events are
    available and nothing happened in any of those folders since.
    """

    def __init__(self) -> None:
        self._fd: int | None = None
        self._watched: dict[int, str] = {}  # watch descriptor -> folder
        self._complete = False  # every folder of the last listing was watched before it
        self._libc = _libc()

    @property
    def events(self) -> bool:
        """True when this system gives file events (inotify)."""
        return self._libc is not None

    def before_listing(self, folders) -> None:
        self.close()
        if self._libc is None:
            return
        fd = self._libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if fd < 0:
            return
        self._fd = fd
        self._complete = self._watch(folders)

    def after_listing(self, folders) -> None:
        if self._fd is None:
            return
        known = set(self._watched.values())
        new = [f for f in folders if f not in known]
        if new:
            self._complete = False  # changed before it was watched: not seen; list again
            self._watch(new)

    def unchanged(self) -> bool:
        """True when nothing changed since the last listing; False when unsure."""
        return self.changes() == {}

    def changes(self) -> dict[str, set[str]] | None:
        """What changed since the last question (or listing): each watched folder's names
        that were created, written, removed or renamed. None when unsure (no file events,
        a folder not watched before the listing, events lost, a folder added or gone):
        then only a new listing is right."""
        if self._fd is None or not self._complete:
            return None
        out: dict[str, set[str]] = {}
        relist = False
        while True:
            try:
                data = os.read(self._fd, 65536)
            except BlockingIOError:
                break
            except OSError:
                self.close()
                return None
            if not data:
                break
            at = 0
            while at + _EVENT.size <= len(data):
                wd, mask, _cookie, size = _EVENT.unpack_from(data, at)
                name = data[at + _EVENT.size:at + _EVENT.size + size].rstrip(b"\0")
                at += _EVENT.size + size
                folder = self._watched.get(wd)
                if mask & _RELIST or folder is None or not name:
                    relist = True  # (read on: the queue is emptied either way)
                elif not relist:
                    out.setdefault(folder, set()).add(os.fsdecode(name))
        if relist:
            self._complete = False  # until the next listing watches what it found
            return None
        return out

    def close(self) -> None:
        if self._fd is not None:
            try:
                os.close(self._fd)
            except OSError:
                pass
        self._fd = None
        self._watched = {}
        self._complete = False

    def _watch(self, folders) -> bool:
        """Watch ``folders``; False when one could not be watched (then the answer is
        always "list again" until the next listing)."""
        ok = True
        for folder in folders:
            wd = self._libc.inotify_add_watch(self._fd, os.fsencode(folder), _MASK)
            if wd < 0:
                ok = False  # gone meanwhile, or the watch limit: never claim freshness
                self._complete = False
            else:
                self._watched[wd] = folder
        return ok

    def __del__(self) -> None:
        self.close()


def _libc():
    """The C library's inotify functions, or None where there are none."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.inotify_init1.argtypes = [ctypes.c_int]
        libc.inotify_init1.restype = ctypes.c_int
        libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        libc.inotify_add_watch.restype = ctypes.c_int
        return libc
    except (OSError, AttributeError, ImportError):
        return None

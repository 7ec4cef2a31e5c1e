"""Changes to a vault's files, as they happen: the one event source of ``vaultkit watch``
and ``vaultkit check --watch``.

The operating system's file events come through ``watchfiles`` (the optional ``[watch]``
extra, :func:`event_batches`); without it, or when the system's watch limit is reached, the
callers say so once (:func:`missing_message`, :func:`unavailable_message`) and poll.
:class:`Changes` is the polling-capable form for a command that re-runs on each batch: it
keeps a stat table of the files it cares about, so a batch that only holds the command's
own writes (``--fix``, caches) is not a change.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

TMP_SUFFIX = ".vaultkit-tmp"  # an atomic write's temporary file


class EventsUnavailable(Exception):
    """File events could not be set up or failed (the system's watch limit, no support)."""


def have_watchfiles() -> bool:
    try:
        import watchfiles  # noqa: F401
    except ImportError:
        return False
    return True


def missing_message(poll: float) -> str:
    return ("vaultkit: watchfiles is not installed (pip install 'vaultkit-lint[watch]'): polling "
            f"every {poll:g} s instead of file events")


def unavailable_message(exc, poll: float) -> str:
    return (f"vaultkit: file events unavailable ({exc}); polling every {poll:g} s instead (on "
            "Linux, raise the limit: sysctl fs.inotify.max_user_watches=524288)")


def skipped(root: str, path: str, *, caches: bool = False) -> bool:
    """True for a path under ``root`` no watcher looks at: an atomic write's temporary
    file, anything in ``.git/``, ``.vaultkit/`` and the scan's other skipped folders, and
    with ``caches`` other tools' caches (``.ruff_cache/``, ...) too."""
    from vaultkit.vault.scan import SKIP_DIRS, skipped_folder

    if path.endswith(TMP_SUFFIX):
        return True
    parts = os.path.relpath(path, root).split(os.sep)
    if caches:
        return any(skipped_folder(p) for p in parts[:-1]) or parts[-1] in SKIP_DIRS
    return any(p in SKIP_DIRS for p in parts)


def event_batches(paths, *, wanted: Callable[[object, str], bool], stop,
                  debounce: int = 1600, step: int = 200, timeout: int = 1000,
                  raise_interrupt: bool = False) -> Iterator[set]:
    """Batches of ``(change, path)`` from the operating system's file events under
    ``paths``, debounced (``debounce`` ms); an empty batch every ``timeout`` ms without
    any. Ends when ``stop`` (a :class:`threading.Event`) is set or on Ctrl-C (which
    raises KeyboardInterrupt with ``raise_interrupt``); raises :class:`EventsUnavailable`
    when the events fail."""
    import watchfiles

    try:
        yield from watchfiles.watch(*paths, watch_filter=wanted, stop_event=stop,
                                    debounce=debounce, step=step, rust_timeout=timeout,
                                    yield_on_timeout=True, raise_interrupt=raise_interrupt,
                                    ignore_permission_denied=True)
    except (OSError, RuntimeError) as exc:
        raise EventsUnavailable(str(exc)) from exc


# vault-relative path -> (mtime_ns, size, ctime_ns, inode), or None for a file only counted
Table = dict


class Changes:
    """Batches of changes to the files ``watched`` picks under ``root`` (and the
    ``extra`` files elsewhere).

    :meth:`begin` records the files as they are before a run, :meth:`mark` adds the paths
    the run wrote itself after it; :meth:`wait` blocks until a file differs from that record (content
    files by size and mtime; any other file by being added or removed) and returns the
    changed paths, or None once stopped (Ctrl-C raises KeyboardInterrupt). File events when ``poll`` is None and watchfiles
    is there; else a stat walk every ``poll`` seconds, a change counted once the walk is
    the same twice (the debounce)."""

    def __init__(self, root, *, watched: Callable[[str], bool], stop,
                 poll: float | None = None, fallback: float = 1.0, out=print,
                 debounce: int = 300, extra=()):
        self.root = str(root)
        # files outside the root that count too (a memory-only vault's bootstrap files
        # one folder up), known by their path from the root ("../AGENTS.md")
        self.extra = [os.path.relpath(os.path.abspath(p), self.root).replace(os.sep, "/")
                      for p in extra]
        self.watched = watched
        self.stop = stop
        self.out = out
        self.debounce = debounce
        self.fallback = fallback
        self.poll = poll
        if poll is None and not have_watchfiles():
            out(missing_message(fallback))
            self.poll = fallback
        self._events = None
        self.table: Table = {}

    # -- the record ----------------------------------------------------------------

    def _entry(self, rel: str, st) -> tuple | None:
        # (the ctime and inode too: a copy that put the size and mtime back is a change)
        return (st.st_mtime_ns, st.st_size, st.st_ctime_ns, st.st_ino) \
            if self.watched(rel) else None

    def walk(self) -> Table:
        """Every file under the root that is not :func:`skipped` (with other tools'
        caches), as its record entry."""
        from vaultkit.vault.scan import skipped_folder

        table: Table = {}
        stack = [""]
        while stack:
            rel_dir = stack.pop()
            try:
                with os.scandir(os.path.join(self.root, rel_dir)) as it:
                    entries = list(it)
            except OSError:
                continue
            for entry in entries:
                rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if not skipped_folder(entry.name):
                            stack.append(rel)
                        continue
                    if entry.name.endswith(TMP_SUFFIX):
                        continue
                    table[rel] = self._entry(rel, entry.stat(follow_symlinks=False))
                except OSError:
                    continue
        for rel in self.extra:
            self._refresh(table, rel)
        return table

    def begin(self) -> None:
        """Before a run: record the files as they are. Polling walks them all; with file
        events the record is kept up to date by the events (a walk the first time)."""
        if self.poll is not None or not self.table:
            self.table = self.walk()

    def mark(self, written=()) -> None:
        """After a run: bring the ``written`` paths (those the run wrote itself, absolute
        or relative to the root) up to date in the record, so they are no change; a file
        someone else changed during the run still differs from it."""
        for path in written:
            rel = os.path.relpath(os.path.join(self.root, path), self.root)
            self._refresh(self.table, rel.replace(os.sep, "/"))

    def _refresh(self, table: Table, rel: str) -> None:
        try:
            st = os.stat(os.path.join(self.root, rel), follow_symlinks=False)
        except OSError:
            table.pop(rel, None)
            return
        table[rel] = self._entry(rel, st)

    @staticmethod
    def _differ(old: Table, new: Table) -> list[str]:
        return sorted(p for p in old.keys() | new.keys()
                      if p not in old or p not in new or old[p] != new[p])

    # -- waiting -------------------------------------------------------------------

    def wait(self) -> list[str] | None:
        while not self.stop.is_set():
            if self.poll is None:
                changed = self._wait_events()
                if changed is not None:
                    return changed
                if self.poll is None:  # stopped (Ctrl-C ends the events too)
                    return None
                continue  # the events failed: poll from here on
            changed = self._wait_poll()
            if changed:
                return changed
        return None

    def _wait_poll(self) -> list[str] | None:
        self.stop.wait(self.poll)
        if self.stop.is_set():
            return None
        now = self.walk()
        if not self._differ(self.table, now):
            return None
        while not self.stop.is_set():  # debounce: until two walks agree
            self.stop.wait(self.poll)
            again = self.walk()
            if again == now:
                break
            now = again
        changed = self._differ(self.table, now)
        self.table = now
        return changed

    def _wait_events(self) -> list[str] | None:
        root = self.root

        def wanted(_change, path: str) -> bool:
            if not path.startswith(root + os.sep):  # an extra file (or its folder's)
                return os.path.relpath(path, root).replace(os.sep, "/") in self.extra
            return not skipped(root, path, caches=True)

        fresh = self._events is None
        if fresh:
            paths = [root] + [os.path.join(root, rel) for rel in self.extra
                              if os.path.isfile(os.path.join(root, rel))]
            self._events = event_batches(paths, wanted=wanted, stop=self.stop,
                                         debounce=self.debounce, step=50,
                                         raise_interrupt=True)
        try:
            for batch in self._events:
                missed: list[str] = []
                if fresh:  # the events are on now: what changed before they were is missed
                    fresh = False
                    now = self.walk()
                    missed = self._differ(self.table, now)
                    self.table = now
                if not batch and not missed:
                    continue
                changed = missed
                for _change, path in batch:
                    rel = os.path.relpath(path, root).replace(os.sep, "/")
                    before = self.table.get(rel, False)
                    self._refresh(self.table, rel)
                    if self.table.get(rel, False) != before:
                        changed.append(rel)
                if changed:
                    return sorted(set(changed))
        except EventsUnavailable as exc:
            self.out(unavailable_message(exc, self.fallback))
            self.poll = self.fallback
            self.table = self.walk()
            self._events = None
            return None
        return None

    def close(self) -> None:
        if self._events is not None:
            self._events.close()
            self._events = None

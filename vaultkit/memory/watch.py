"""``vaultkit watch``: snapshot each write within a second or two and undo a journal's loss.

Each round (:meth:`Watcher.step`) takes a snapshot (:mod:`vaultkit.vault.snapshots`) and
judges what changed since the previous one the way the git rules do:

``journal-restored`` / ``journal-lines-lost``
    A journal that lost lines (overwritten by a Write, edited, truncated). With restore on
    (the default) the lost lines are appended back at once, under a heading that says they
    were restored and when they were lost, through the locked ``O_APPEND`` writer of
    ``vaultkit log``; then a second snapshot records the journal whole again. With
    ``--no-restore`` the loss is only reported (``vaultkit recover`` brings it back).
``memory-cut``
    ``MEMORY.md`` lost durable lines that did not go into another memory file changed in the
    same round; a structured, knowledge or other bootstrap note lost the profile's share of
    its lines (``git: mass_deletion_ratio``). Reported; ``vaultkit recover`` puts the lines
    in the recovery note.
``note-deleted``
    A memory note removed without a move into the archive. Reported.

Every event goes to the store's event log (JSON lines, beside the snapshot ref), which
``vaultkit history`` and ``vaultkit audit`` read. The loop (:meth:`Watcher.run`) waits on
the operating system's file events through ``watchfiles`` (the ``[watch]`` extra); without
it, or when the system's watch limit is reached, it says so once and polls instead. A
full round also runs every ``interval`` seconds whatever the events, so nothing an event
missed stays unrecorded.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from vaultkit.core.errors import VaultkitError
from vaultkit.vault.fswatch import have_watchfiles, missing_message, unavailable_message

JOURNAL_HEADING = "Restored by vaultkit watch"


@dataclass
class WatchEvent:
    kind: str  # journal-restored, journal-lines-lost, memory-cut, note-deleted
    path: str
    lines: int = 0
    snapshot: str | None = None
    time: float = field(default_factory=time.time)
    detail: str = ""

    def to_dict(self) -> dict:
        return {"time": round(self.time, 3), "kind": self.kind, "path": self.path,
                "lines": self.lines, "snapshot": self.snapshot, "detail": self.detail}

    def describe(self) -> str:
        s = "s" * (self.lines != 1)
        when = dt.datetime.fromtimestamp(self.time).strftime("%H:%M:%S")
        if self.kind == "journal-restored":
            return f"{when} {self.path}: {self.lines} lost line{s} restored at the end"
        if self.kind == "journal-lines-lost":
            return (f"{when} {self.path}: {self.lines} line{s} lost (not restored: "
                    "`vaultkit recover --all` brings them back)")
        if self.kind == "memory-cut":
            return (f"{when} {self.path}: {self.lines} line{s} cut{self.detail} "
                    "(`vaultkit recover --all` keeps them in the recovery note)")
        if self.kind == "note-deleted":
            return (f"{when} {self.path}: deleted with {self.lines} line{s} "
                    "(`vaultkit recover --all` restores it)")
        return f"{when} {self.path}: {self.kind} {self.detail}"


def read_events(store, *, since: float | None = None) -> list[dict]:
    """The watcher's logged events (oldest first), from ``since`` on."""
    from vaultkit.core.bounded import read_regular

    try:
        data = read_regular(store.events_path, 64 << 20, follow_symlinks=False)
    except OSError:
        return []
    out = []
    for line in data.decode("utf-8", "replace").splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue  # a line cut by a crash
        if isinstance(item, dict) and (since is None or item.get("time", 0) >= since):
            out.append(item)
    return out


def log_event(store, item: dict) -> None:
    """Append one JSON line to the event log (one ``O_APPEND`` write)."""
    try:
        store.meta.mkdir(parents=True, exist_ok=True)
        fd = os.open(store.events_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT
                     | getattr(os, "O_NOFOLLOW", 0), 0o644)
        try:
            os.write(fd, (json.dumps(item, ensure_ascii=False) + "\n").encode("utf-8"))
        finally:
            os.close(fd)
    except OSError:
        pass  # the snapshots are the record; the log only tells


def _nonblank(lines) -> list[str]:
    return [line for line in lines if line.strip()]


class Watcher:
    """One vault watched: :meth:`step` is one round, :meth:`run` the loop."""

    def __init__(self, root: Path, settings, *, restore: bool = True, out=None):
        from vaultkit.vault.snapshots import open_store

        self.root = Path(root)
        self.settings = settings
        self.profile = settings.profile
        self.restore = restore
        self.out = out or (lambda line: print(line, flush=True))
        self.store = open_store(self.root, settings, create=True)
        self.memory_md = "MEMORY.md" if self.profile.memory_prefix else "../MEMORY.md"

    # -- one round -----------------------------------------------------------------

    def step(self) -> list[WatchEvent]:
        """Snapshot, judge what changed since the previous snapshot, restore, log."""
        from vaultkit.vault.snapshots import store_path

        store = self.store
        before = store.recorded()
        result = store.snapshot(prune=False)
        if result.commit is None:
            return []
        old_oids = {p: before.get(store_path(p)) for p in result.changed + result.removed}
        if not result.removed and not any(old_oids.values()):
            # only new files (the first snapshot records every one): nothing was lost, and
            # reading them all to judge nothing would keep the process busy for seconds
            return []
        after = store.recorded()
        new_oids = {p: after.get(store_path(p)) for p in result.changed}
        blobs = store.blobs([o for o in list(old_oids.values()) + list(new_oids.values())
                             if o])

        def text(oid):
            from vaultkit.vault.gitstate import decode

            return decode(blobs[oid]) if oid in blobs else None

        events: list[WatchEvent] = []
        restored = False
        added_names = {p.rsplit("/", 1)[-1] for p in result.changed
                       if old_oids.get(p) is None and self._layer(p) == "archive"}
        # lines written into any memory file this round: a cut that moved them is no loss
        written = Counter()
        for p in result.changed:
            new = text(new_oids.get(p))
            if new is not None:
                old = text(old_oids.get(p)) or ""
                written += Counter(new.splitlines()) - Counter(old.splitlines())
        for path in result.changed:
            old = text(old_oids.get(path))
            new = text(new_oids.get(path))
            if old is None or new is None:
                continue
            layer = self._layer(path)
            if layer == "journal":
                from vaultkit.memory.history import missing_lines

                lost = missing_lines(new, old.replace("\r\n", "\n").split("\n"))
                if not _nonblank(lost):
                    continue
                lost = self._judged(path, old, new, lost)
                if not _nonblank(lost):
                    continue  # edits, or lines `git stash` keeps: nothing to bring back
                if self.restore:
                    self._restore(path, lost, result.commit)
                    restored = True
                    events.append(WatchEvent("journal-restored", path, len(_nonblank(lost)),
                                             result.commit))
                else:
                    events.append(WatchEvent("journal-lines-lost", path, len(_nonblank(lost)),
                                             result.commit))
                continue
            event = self._cut(path, layer, old, new, written, result.commit)
            if event is not None:
                events.append(event)
        for path in result.removed:
            layer = self._layer(path)
            if layer not in ("journal", "bootstrap", "structured", "knowledge"):
                continue
            if path.rsplit("/", 1)[-1] in added_names:
                continue  # moved into the archive
            old = text(old_oids.get(path))
            if old is None or not _nonblank(old.splitlines()):
                continue
            events.append(WatchEvent("note-deleted", path, len(_nonblank(old.splitlines())),
                                     result.commit))
        if restored:
            store.snapshot(prune=False)  # the journal as it is now, whole again
        for event in events:
            log_event(store, event.to_dict())
            self.out(event.describe())
        return events

    def _judged(self, path: str, old: str, new: str, lost: list[str]) -> list[str]:
        """``lost`` (with the blank lines between them) less what the model of loss keeps
        (:func:`vaultkit.vault.loss.judge`): an edit of a line, a line a stash holds. So
        a typo fixed is not appended back, nor are lines `git stash` took (its pop would
        find them written twice)."""
        from vaultkit.vault.loss import judge

        def stashes():
            from types import SimpleNamespace

            from vaultkit.vault.gitstate import GitState

            state = GitState(SimpleNamespace(root=self.root, profile=self.profile,
                                             settings=self.settings))
            return state.stash_texts(path) if state.available else []

        judged = Counter(line for line in judge(old, new, stashes).lost if line.strip())
        out = []
        for line in lost:
            if not line.strip():
                if out:
                    out.append(line)
            elif judged[line] > 0:
                judged[line] -= 1
                out.append(line)
        while out and not out[-1].strip():
            out.pop()
        return out

    def _layer(self, path: str) -> str | None:
        if path.startswith("../"):
            return "bootstrap"
        return self.profile.layer_of(path)

    def _cut(self, path, layer, old: str, new: str, written: Counter, commit) -> WatchEvent | None:
        from vaultkit.memory.history import lost_lines, memory_md_cut

        if layer not in ("bootstrap", "structured", "knowledge") and path != self.memory_md:
            return None
        exempt = self.profile.git.mass_deletion_exempt
        import fnmatch

        if any(fnmatch.fnmatch(path.removeprefix("../"), p) for p in exempt):
            return None
        before = len(_nonblank(old.splitlines()))
        if path == self.memory_md:  # durable lines gone without a move: any count
            kept = _nonblank(memory_md_cut(old, new, written))
            if not kept:
                return None
            return WatchEvent("memory-cut", path, len(kept), commit,
                              detail=f" from {before} (not moved to another note)")
        lost = _nonblank(lost_lines(old, new))
        elsewhere = Counter(written)
        kept = []
        for line in lost:
            if elsewhere[line] > 0:
                elsewhere[line] -= 1
            else:
                kept.append(line)
        if kept and len(kept) >= self.profile.git.mass_deletion_ratio * before:
            return WatchEvent("memory-cut", path, len(kept), commit,
                              detail=f" of its {before}")
        return None

    def _restore(self, path: str, lost: list[str], commit: str) -> None:
        """Append the lost lines through ``log``'s appending writer, at the journal's entry
        level; a line holding a credential comes back as ``recover``'s placeholder."""
        from vaultkit.memory.history import MARKER, credential_lines
        from vaultkit.memory.journal import DASH
        from vaultkit.memory.memset import vault_zone
        from vaultkit.memory.recover import _append

        now = dt.datetime.now(vault_zone(self.settings))
        withheld = credential_lines(lost)
        lines = [withheld.get(line, line) for line in lost]
        n = len(_nonblank(lost))

        def block(level: int) -> str:
            return "\n".join([
                "", f"{'#' * level} {now:%H:%M} {DASH} {JOURNAL_HEADING}",
                f"<!-- {MARKER} {commit} {path} -->",
                f"- {n} line{'s' * (n != 1)} removed from this journal at {now:%H:%M:%S} "
                f"(snapshot {commit[:10]}), put back by `vaultkit watch`: journals are "
                "append-only.",
                "- They follow below as they were written.",
                "", *lines]) + "\n"

        limit = self.profile.budgets.max_file_bytes

        def too_big(data: int, size: int) -> str:
            return (f"{path}: the {data:,} bytes to put back would take it ({size:,} bytes) "
                    f"over the {limit:,}-byte limit (budgets.max_file_bytes); not restored: "
                    "`vaultkit recover --all` puts them in the recovery note")

        _append(self.root, path, block, "", limit, too_big)

    # -- the loop ------------------------------------------------------------------

    def run(self, *, interval: float = 600.0, poll: float | None = None,
            stop=None, max_seconds: float | None = None) -> int:
        """Watch until stopped (``stop``, a :class:`threading.Event`, SIGINT/SIGTERM) or the
        vault is gone. ``poll`` (seconds) forces polling; ``interval`` is the full round
        every so often whatever the events."""
        import threading

        stop = stop or threading.Event()
        self._signals(stop)
        deadline = None if max_seconds is None else time.monotonic() + max_seconds
        log_event(self.store, {"time": round(time.time(), 3), "kind": "started",
                               "path": "", "detail": f"pid {os.getpid()}"})
        self.step()
        try:
            if poll is None and not have_watchfiles():
                self.out(missing_message(2.0))
                poll = 2.0
            if poll is None:
                code = self._events(stop, interval, deadline)
                if code is not None:
                    return code
                poll = 2.0
            return self._poll(stop, poll, interval, deadline)
        finally:
            log_event(self.store, {"time": round(time.time(), 3), "kind": "stopped",
                                   "path": "", "detail": f"pid {os.getpid()}"})

    def _gone(self) -> bool:
        if self.root.is_dir():
            return False
        self.out(f"vaultkit: {self.root} is gone (moved or deleted); watch stops. Start it "
                 "again where the vault is now")
        return True

    def _events(self, stop, interval, deadline) -> int | None:
        """Wait on file events; None when they failed and polling should take over."""
        from vaultkit.vault.fswatch import EventsUnavailable, event_batches, skipped

        root = str(self.root)
        paths = [root]
        if not self.profile.memory_prefix:  # the bootstrap files one folder up
            paths += [str(self.root.parent / n) for n in self.profile.bootstrap_files
                      if (self.root.parent / n).is_file()]

        def wanted(_change, path: str) -> bool:
            return not skipped(root, path)

        last_full = time.monotonic()
        first = True  # a write between the first round and the watch being set up
        try:
            for changes in event_batches(paths, wanted=wanted, stop=stop, debounce=1600,
                                         step=200, timeout=1000):
                if self._gone():
                    return 1
                if changes or first or time.monotonic() - last_full >= interval:
                    self._safe_step()
                    last_full = time.monotonic()
                    first = False
                if deadline is not None and time.monotonic() >= deadline:
                    return 0
        except (OSError, RuntimeError, EventsUnavailable) as exc:
            if self._gone():
                return 1
            self.out(unavailable_message(exc, 2.0))
            return None
        return 0

    def _poll(self, stop, poll, interval, deadline) -> int:
        while not stop.is_set():
            if deadline is not None and time.monotonic() >= deadline:
                return 0
            stop.wait(poll)
            if stop.is_set():
                break
            if self._gone():
                return 1
            self._safe_step()
        return 0

    def _safe_step(self) -> None:
        try:
            self.step()
        except VaultkitError as exc:  # a round that failed is tried again on the next
            self.out(f"vaultkit: warning: {exc}")

    @staticmethod
    def _signals(stop) -> None:
        import signal
        import threading

        if threading.current_thread() is not threading.main_thread():
            return
        try:
            signal.signal(signal.SIGTERM, lambda *_: stop.set())
        except (ValueError, OSError):
            pass


# -- keeping it running ---------------------------------------------------------------------

def service_name(root: Path) -> str:
    import hashlib

    base = "".join(c if c.isalnum() else "-" for c in root.name.lower()).strip("-") or "vault"
    return f"vaultkit-watch-{base}-{hashlib.sha1(str(root).encode()).hexdigest()[:6]}"


def service_text(kind: str, root: Path, *, interval: int, python: str | None = None) -> tuple[str, str | None]:
    """``(text, file)``: the unit, agent or crontab line that keeps snapshots running, and
    the file it goes in (None for cron: a line of the user's crontab)."""
    import shlex
    from xml.sax.saxutils import escape

    python = python or sys.executable
    name = service_name(root)
    home = Path.home()
    if kind == "systemd":
        text = (f"[Unit]\nDescription=vaultkit watch: snapshots of the memory in {root}\n\n"
                "[Service]\n"
                f"ExecStart={_systemd_quote(python)} -m vaultkit watch {_systemd_quote(str(root))}\n"
                "Restart=on-failure\nRestartSec=10\n\n[Install]\nWantedBy=default.target\n")
        return text, str(home / ".config" / "systemd" / "user" / f"{name}.service")
    if kind == "launchd":
        label = "dev.vaultkit." + name
        args = "".join(f"    <string>{escape(a)}</string>\n"
                       for a in (python, "-m", "vaultkit", "watch", str(root)))
        text = ('<?xml version="1.0" encoding="UTF-8"?>\n'
                '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" '
                '"http://www.apple.com/DTDs/PropertyList-1.0.dtd">\n'
                '<plist version="1.0">\n<dict>\n'
                f"  <key>Label</key>\n  <string>{escape(label)}</string>\n"
                f"  <key>ProgramArguments</key>\n  <array>\n{args}  </array>\n"
                "  <key>RunAtLoad</key>\n  <true/>\n  <key>KeepAlive</key>\n  <true/>\n"
                "</dict>\n</plist>\n")
        return text, str(home / "Library" / "LaunchAgents" / f"{label}.plist")
    if kind == "cron":
        step = max(1, min(int(interval), 59))
        text = (f"*/{step} * * * * {shlex.quote(python)} -m vaultkit snapshot --quiet "
                f"{shlex.quote(str(root))}  # {name}\n")
        return text, None
    raise VaultkitError(f"--service {kind}: give systemd, launchd or cron")


def _systemd_quote(arg: str) -> str:
    if arg and all(c.isalnum() or c in "/._-+:@" for c in arg):
        return arg
    return '"' + arg.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%") + '"'


def install_service(kind: str, text: str, target: str | None) -> list[str]:
    """Install what :func:`service_text` made; returns what was done, line by line."""
    import subprocess

    from vaultkit.core.gitenv import run_program

    done = []
    if kind == "cron":
        try:
            proc = run_program(["crontab", "-l"], timeout=30)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise VaultkitError(f"crontab could not be run: {exc}") from None
        current = proc.stdout if proc.returncode == 0 else ""
        if text.strip() in current:
            return ["the crontab already holds this line; nothing changed"]
        new = current + ("" if not current or current.endswith("\n") else "\n") + text
        proc = run_program(["crontab", "-"], input=new, timeout=30)
        if proc.returncode != 0:
            raise VaultkitError(f"crontab refused the line: {proc.stderr.strip()}")
        return ["added the line to your crontab (crontab -l shows it)"]
    from vaultkit.core.atomic import write_atomic

    path = Path(str(target))
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, text.encode("utf-8"))
    done.append(f"wrote {path}")
    if kind == "systemd":
        commands = [["systemctl", "--user", "daemon-reload"],
                    ["systemctl", "--user", "enable", "--now", path.name]]
    else:
        commands = [["launchctl", "load", "-w", str(path)]]
    for cmd in commands:
        try:
            proc = run_program(cmd, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as exc:
            done.append(f"could not run {' '.join(cmd)} ({exc}); run it yourself")
            break
        if proc.returncode != 0:
            done.append(f"{' '.join(cmd)} failed: {proc.stderr.strip()}; run it yourself")
            break
        done.append(f"ran {' '.join(cmd)}")
    return done

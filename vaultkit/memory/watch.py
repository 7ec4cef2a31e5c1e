"""``vaultkit watch``: snapshot each write within a second or two and undo a journal's loss.

Each round (:meth:`Watcher.step`) takes a snapshot (:mod:`vaultkit.vault.snapshots`) and
judges what changed since the previous one the way the git rules do:

``journal-restored`` / ``journal-lines-lost``
    A journal that lost lines (overwritten by a Write, truncated, a line deleted). With
    restore on (the default) the deletion is undone in place at once: the lost lines go
    back where they stood, around what was written since
    (:func:`vaultkit.vault.loss.undo_deletions`, which `recover` uses too), so an
    overwritten journal becomes its old lines followed by the new text, as an append would
    have left it; no heading or marker is added, and each line is written once. The file is
    rewritten atomically under the journal's lock, only if it still holds what was judged;
    then a second snapshot records the journal whole again. An edit (a line that keeps most
    of its characters: a typo, a number, a reworded clause) is not a loss and is left as
    it is. When another writer removes the same lines again right after a restore, watch
    backs off: it reports ``journal-restore-undone`` once and restores that file no more
    until its loss changes. With ``--no-restore`` the loss is only reported
    (``vaultkit recover`` brings it back).
``memory-restored`` / ``memory-restore-undone`` / ``memory-pruned``
    ``MEMORY.md`` dropped durable lines that did not go into another memory file changed in
    the same round. Past its pruning allowance (``git: memory_md_prune_ratio``, a quarter
    of its durable lines; :func:`vaultkit.vault.loss.prune_allowance`, the hook's and
    history's measure too) they are put back in place as a journal's are (the same
    :func:`~vaultkit.vault.loss.undo_deletions`, the same locked atomic rewrite, the same
    back-off when another writer removes them again); within it the cut is curation and is
    only logged as ``memory-pruned``. With ``--no-restore`` a cut past the allowance is reported as
    ``memory-cut``.
``memory-cut``
    A structured, knowledge or other bootstrap note lost the profile's share of its lines
    (``git: mass_deletion_ratio``), or ``MEMORY.md`` was cut past its allowance and not
    restored. Reported; ``vaultkit recover`` puts the lines in the recovery note.
``note-deleted``
    A memory note removed without a move into the archive. Reported.

Git moves text on purpose, and watch knows it: no round runs while git is mid-operation
(its index lock, a merge, a rebase, a cherry-pick or revert in progress), and a round after
HEAD, the branch or the stash moved (a checkout, pull, reset, commit or stash) takes what
the files hold then as its new baseline without judging it.

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

# an older watch appended restored lines under this heading; kept to recognise those blocks
JOURNAL_HEADING = "Restored by vaultkit watch"
# what in the git folder says git is rewriting the work tree right now
_GIT_BUSY = ("index.lock", "MERGE_HEAD", "rebase-merge", "rebase-apply", "CHERRY_PICK_HEAD",
             "REVERT_HEAD", "sequencer")


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
            return f"{when} {self.path}: {self.lines} lost line{s} put back where they stood"
        if self.kind == "journal-restore-undone":
            return (f"{when} {self.path}: another writer removed the {self.lines} restored "
                    f"line{s} again; not restored again until that stops (`vaultkit "
                    "recover --all` brings them back)")
        if self.kind == "journal-lines-lost":
            return (f"{when} {self.path}: {self.lines} line{s} lost (not restored: "
                    "`vaultkit recover --all` brings them back)")
        if self.kind == "memory-restored":
            return (f"{when} {self.path}: {self.lines} dropped line{s} put back where they "
                    f"stood{self.detail}")
        if self.kind == "memory-restore-undone":
            return (f"{when} {self.path}: another writer removed the {self.lines} restored "
                    f"line{s} again; not restored again until that stops (`vaultkit "
                    "recover --all` keeps them in the recovery note)")
        if self.kind == "memory-pruned":
            return f"{when} {self.path}: {self.lines} line{s} pruned{self.detail}"
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


class _Held(str):
    """The old text of a restore held back (:attr:`Watcher._held`), where a blob id is
    expected."""

    @property
    def text(self) -> str:
        return str(self)


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
        self._dirs = None if self.store.bare else _dirs_of(self.store)
        self._tips = self._git_tips()
        # path -> the lines last restored there, and whether watch has backed off from it
        self._restored: dict[str, tuple[tuple[str, ...], bool]] = {}
        # path -> the text a restore judged, held back while a commit's hooks ran
        self._held: dict[str, str] = {}

    # -- one round -----------------------------------------------------------------

    def step(self) -> list[WatchEvent]:
        """Snapshot, judge what changed since the previous snapshot, restore, log."""
        from vaultkit.vault.snapshots import store_path

        from vaultkit.vault.gitstate import pre_commit_running

        store = self.store
        if self._git_busy() or pre_commit_running():
            # git is rewriting the work tree, or a commit's hooks run on the staged
            # versions (pre-commit took the unstaged lines out and puts them back when they
            # are done, rolling back any other write as a hook's fix): judged once it is done
            return []
        tips = self._git_tips()
        moved, self._tips = tips != self._tips, tips
        held, self._held = self._held, {}
        before = store.recorded()
        result = store.snapshot(prune=False)
        if result.commit is None and not held:
            self._warnings()
            return []
        if moved:
            # a checkout, pull, reset, commit or stash put in the files a version git
            # keeps: the new baseline, not a loss. No git command leaves a journal without
            # the lines of the commit it now holds, so one that lost them was written over
            # beside the git command (a summary a second after a commit): judged as usual
            # against the commit's text, which may hold lines no snapshot saw
            lost_head = self._lost_from_head(result.changed)
            if not lost_head:
                self._restored.clear()
                return []
            result.changed, result.removed = list(lost_head), []
        else:
            lost_head = {}
        if result.commit is None:  # (nothing new since a restore held back: judged again)
            result.commit = store.head()
        # a restore held back while a commit's hooks ran is judged again from the text it
        # judged then, whether or not the file changed since
        result.changed = result.changed + [p for p in held if p not in result.changed
                                           and p not in result.removed]
        old_oids = {p: before.get(store_path(p)) for p in result.changed + result.removed}
        old_oids.update((p, _Held(t)) for p, t in lost_head.items())
        if not result.removed and not any(old_oids.values()) and not held:
            # only new files (the first snapshot records every one): nothing was lost, and
            # reading them all to judge nothing would keep the process busy for seconds
            self._warnings()
            return []
        after = store.recorded()
        new_oids = {p: after.get(store_path(p)) for p in result.changed}
        names = {o: f"{p} in the snapshot before {result.commit[:10]}"
                 for p, o in old_oids.items() if o}
        names.update((o, f"{p} in snapshot {result.commit[:10]}")
                     for p, o in new_oids.items() if o)
        blobs = store.blobs([o for o in list(old_oids.values()) + list(new_oids.values())
                             if o and not isinstance(o, _Held)], names)
        self._warnings()

        def text(oid):
            from vaultkit.vault.gitstate import decode

            if isinstance(oid, _Held):
                return oid.text
            return decode(blobs[oid]) if oid in blobs else None

        old_oids.update((p, _Held(t)) for p, t in held.items() if p in old_oids)

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
                lost = self._judged(path, old, new)  # (edits and stashed lines kept)
                if not _nonblank(lost):
                    self._restored.pop(path, None)
                    continue
                if self.restore:
                    event = self._restore(path, old, new, lost, result.commit)
                    if event is not None:
                        restored = restored or event.kind == "journal-restored"
                        events.append(event)
                else:
                    events.append(WatchEvent("journal-lines-lost", path, len(_nonblank(lost)),
                                             result.commit))
                continue
            event = self._cut(path, layer, old, new, written, result.commit)
            if event is None and path == self.memory_md:
                self._restored.pop(path, None)
            if event is not None:
                restored = restored or event.kind == "memory-restored"
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
            store.snapshot(prune=False)  # the journal (or MEMORY.md) as it is now, whole again
        for event in events:
            log_event(store, event.to_dict())
            self.out(event.describe())
        return events

    def _warnings(self) -> None:
        """Say what the bounded reads of the snapshot chain left out, each once."""
        said = self.__dict__.setdefault("_said", 0)
        for warning in self.store.warnings[said:]:
            self.out(f"vaultkit: warning: {warning}")
        self._said = len(self.store.warnings)

    def _judged(self, path: str, old: str, new: str) -> list[str]:
        """What of ``old`` the journal lost, as the model of loss judges it
        (:func:`vaultkit.vault.loss.judge`, the hook's and history's judgement): not an
        edit of a line, not a line a stash holds (its pop would find it written twice) nor
        one a running pre-commit took out of the work tree for its hooks;
        blank lines between lost ones kept, none at either end."""
        from vaultkit.vault.loss import judge

        out = list(judge(old, new, lambda: self._holders(path, new),
                         self._accepted(path, old, new)).lost)
        while out and not out[0].strip():
            out.pop(0)
        while out and not out[-1].strip():
            out.pop()
        return out

    def _lost_from_head(self, paths: list[str]) -> dict[str, str]:
        """The journals among ``paths`` whose text in the newest snapshot lost lines of
        their HEAD version, as :meth:`_judged` judges a loss, with that version."""
        from types import SimpleNamespace

        from vaultkit.vault.gitstate import GitState, decode
        from vaultkit.vault.snapshots import store_path

        journals = [p for p in paths if self._layer(p) == "journal"]
        if not journals:
            return {}
        state = GitState(SimpleNamespace(root=self.root, profile=self.profile,
                                         settings=self.settings))
        if not state.available:
            return {}
        after = self.store.recorded()
        oids = {p: after.get(store_path(p)) for p in journals}
        blobs = self.store.blobs([o for o in oids.values() if o],
                                 {o: f"{p} in the newest snapshot" for p, o in oids.items() if o})
        out = {}
        for path in journals:
            head = state.committed_text(path)
            new = blobs.get(oids[path])
            if head is not None and new is not None and \
                    _nonblank(self._judged(path, head, decode(new))):
                out[path] = head
        return out

    def _accepted(self, path: str, old: str, new: str):
        """The lines of ``path`` a commit accepted as removed (``VAULTKIT_ACCEPT_DELETION``,
        :class:`vaultkit.vault.loss.AcceptedRemovals`): not restored. Read only when the
        file lost a line."""
        from vaultkit.vault.loss import AcceptedRemovals, lost_lines

        if not _nonblank(lost_lines(old, new)):
            return None
        return AcceptedRemovals(self.root).of(path)

    def _holders(self, path: str, new: str) -> list[str]:
        """The other texts that hold ``path`` now: its stashes, and the file as a running
        pre-commit will put it back (a partly staged file under a pre-commit run lacks its
        unstaged lines until the hooks are done: not a loss, and putting them back would
        fail the hook). The file pre-commit puts back is what it holds now and the patch's
        added lines (those alone would leave a line held twice before lost once)."""
        from types import SimpleNamespace

        from vaultkit.vault.gitstate import GitState

        state = GitState(SimpleNamespace(root=self.root, profile=self.profile,
                                         settings=self.settings))
        if not state.available:
            return []
        return state.stash_texts(path) + [
            new + "\n" + added for added in state.unstaged_by_running_pre_commit(path)]

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
        if path == self.memory_md:  # durable lines gone without a move: the allowance
            from vaultkit.vault.loss import prune_allowance, prune_setting

            cut = memory_md_cut(old, new, written)
            if _nonblank(cut):  # (what a stash or a running pre-commit holds is not cut)
                held = Counter()
                for text in self._holders(path, new):
                    held |= Counter(text.splitlines())
                still = []
                for line in cut:
                    if line.strip() and held[line] > 0:
                        held[line] -= 1  # (held there: not cut)
                    else:
                        still.append(line)
                cut = still
            accepted = self._accepted(path, old, new) if _nonblank(cut) else None
            if accepted:
                cut = [line for line in cut if line not in accepted]
            kept = _nonblank(cut)
            if not kept:
                return None
            ratio, source = prune_setting(self.settings, self.root)
            allowed = prune_allowance(before, ratio)
            within = (f" of its {before} (the pruning allowance is {allowed}: {ratio * 100:g}%, "
                      f"{source})")
            if len(kept) <= allowed:
                self._restored.pop(path, None)
                return WatchEvent("memory-pruned", path, len(kept), commit, detail=within)
            if self.restore:
                return self._restore(path, old, new, cut, commit, kind="memory")
            return WatchEvent("memory-cut", path, len(kept), commit,
                              detail=f" from {before} (not moved to another note; past the "
                                     f"pruning allowance of {allowed})")
        lost = _nonblank(lost_lines(old, new))
        accepted = self._accepted(path, old, new) if lost else None
        if accepted:
            lost = [line for line in lost if line not in accepted]
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

    def _restore(self, path: str, old: str, new: str, lost: list[str],
                 commit: str, kind: str = "journal") -> WatchEvent | None:
        """Undo the deletion in place (:func:`~vaultkit.vault.loss.undo_deletions`); a line
        holding a credential comes back as ``recover``'s placeholder. Backs off when the
        lines it put back last time were removed again. ``kind``: ``journal``, or ``memory`` for MEMORY.md cut
        past its pruning allowance (its events are ``memory-…``)."""
        from vaultkit.memory.history import credential_lines
        from vaultkit.vault.loss import undo_deletions

        key = tuple(line for line in lost if line.strip())
        n = len(key)
        last = self._restored.get(path)
        if last is not None and last[0] == key:
            if last[1]:
                return None  # backed off: reported once already
            self._restored[path] = (key, True)
            return WatchEvent(f"{kind}-restore-undone", path, n, commit)
        withheld = credential_lines(lost)
        merged = undo_deletions(old, new, lost, withheld)
        limit = self.profile.budgets.max_file_bytes
        if len(merged.encode("utf-8")) > limit:
            self.out(f"vaultkit: warning: {path}: putting back {n} lost line{'s' * (n != 1)} "
                     f"would take it over the {limit:,}-byte limit (budgets.max_file_bytes); "
                     "not restored: `vaultkit recover --all` puts them in the recovery note")
            return WatchEvent("journal-lines-lost" if kind == "journal" else "memory-cut",
                              path, n, commit)
        # MEMORY.md one folder up (a memory-only vault) is written within the workspace
        root, rel = (self.root.parent, path[3:]) if path.startswith("../") else (self.root, path)
        from vaultkit.vault.gitstate import pre_commit_running

        if pre_commit_running():
            # a commit's hooks started since this round began: a write now would be rolled
            # back with pre-commit's patch (and the lines lost with it); held back, judged
            # again from ``old`` by the first round after the hooks
            self._held[path] = old
            return None
        if not _rewrite_if_unchanged(root, rel, new, merged):
            return None  # written again meanwhile: the next round judges what is there now
        self._restored[path] = (key, False)
        return WatchEvent(f"{kind}-restored", path, n, commit)

    # -- git -----------------------------------------------------------------------

    def _git_busy(self) -> bool:
        if self._dirs is None:
            return False
        git_dir, _common = self._dirs
        return any(os.path.lexists(git_dir / name) for name in _GIT_BUSY)

    def _git_tips(self) -> tuple:
        """What says HEAD, its branch or the stash moved: HEAD's text, the branch's loose
        ref, and the packed refs and the stash's log by size and time (files git rewrites
        whenever they move; no git process per round)."""
        if self._dirs is None:
            return ()
        git_dir, common = self._dirs
        head = _small(git_dir / "HEAD")
        branch = b""
        if head.startswith(b"ref: "):
            name = head[5:].strip().decode("utf-8", "replace")
            if ".." not in name:
                branch = _small(common / name)
        return (head, branch, _stamp(common / "packed-refs"),
                _stamp(common / "logs" / "refs" / "stash"), _stamp(common / "refs" / "stash"))

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
                # git's own writes are not watched (.git/ is skipped): a commit, checkout or
                # stash since the last round is seen by its tips on a quiet tick, so that the
                # write after it is judged against the new baseline, not taken as one
                moved = not changes and self._git_tips() != self._tips
                if changes or first or moved or time.monotonic() - last_full >= interval:
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


def service_text(kind: str, root: Path, *, interval: int, python: str | None = None,
                 profile: str | None = None) -> tuple[str, str | None]:
    """``(text, file)``: the unit, agent or crontab line that keeps snapshots running, and
    the file it goes in (None for cron: a line of the user's crontab). ``profile``: the
    ``--profile`` the command was given, passed on so the service judges with the same
    rule pack (a pack file as an absolute path: the service runs from elsewhere).

    Each value put in is refused when it could change the file's lines (a control
    character) and is then escaped for that format alone (docs/security.md)."""
    from xml.sax.saxutils import escape

    if kind not in ("systemd", "launchd", "cron"):
        raise VaultkitError(f"--service {kind}: give systemd, launchd or cron")
    python = python if python is not None else sys.executable
    _fit_for_service(kind, "the vault path", str(root))
    _fit_for_service(kind, "the Python running vaultkit", python)
    extra: list[str] = []
    if profile is not None:
        from vaultkit.vault.profile import find_profile

        if profile.endswith((".yaml", ".yml")) or "/" in profile:
            profile = str(find_profile(profile, root).absolute())  # (relative to the vault)
        _fit_for_service(kind, "the profile", profile)
        extra = ["--profile", profile]
    if not os.path.isabs(python):  # (the manager runs it from elsewhere, with its own PATH)
        raise VaultkitError(f"--service {kind}: the Python running vaultkit has no absolute "
                            f"path ({_shown(python) or 'none'}); run vaultkit with a Python "
                            "named by its full path")
    name = service_name(root)
    home = Path.home()
    if kind == "systemd":
        if any(c in python for c in "\\\"'"):  # (systemd refuses the unit: "Executable name
            # contains special characters", systemd-analyze verify, systemd 252)
            raise VaultkitError(f"--service systemd: the Python running vaultkit "
                                f"{_shown(python)} holds a quote or a backslash, which "
                                "systemd does not take in a program's path; nothing written")
        text = ("[Unit]\nDescription=vaultkit watch: snapshots of the memory in "
                f"{_systemd_description(str(root))}\n\n"
                "[Service]\n"
                f"ExecStart={_systemd_word(python, program=True)} -m vaultkit watch "
                + "".join(f"{_systemd_word(a)} " for a in extra)
                + f"{_systemd_word(str(root))}\n"
                "Restart=on-failure\nRestartSec=10\n\n[Install]\nWantedBy=default.target\n")
        return text, str(home / ".config" / "systemd" / "user" / f"{name}.service")
    if kind == "launchd":
        label = "dev.vaultkit." + name
        args = "".join(f"    <string>{escape(a)}</string>\n"
                       for a in (python, "-m", "vaultkit", "watch", *extra, str(root)))
        text = ('<?xml version="1.0" encoding="UTF-8"?>\n'
                '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" '
                '"http://www.apple.com/DTDs/PropertyList-1.0.dtd">\n'
                '<plist version="1.0">\n<dict>\n'
                f"  <key>Label</key>\n  <string>{escape(label)}</string>\n"
                f"  <key>ProgramArguments</key>\n  <array>\n{args}  </array>\n"
                "  <key>RunAtLoad</key>\n  <true/>\n  <key>KeepAlive</key>\n  <true/>\n"
                "</dict>\n</plist>\n")
        return text, str(home / "Library" / "LaunchAgents" / f"{label}.plist")
    step = max(1, min(int(interval), 59))
    text = (f"*/{step} * * * * {_cron_word(python)} -m vaultkit snapshot --quiet "
            + "".join(f"{_cron_word(a)} " for a in extra)
            + f"{_cron_word(str(root))}  # {name}\n")
    return text, None


def _fit_for_service(kind: str, what: str, value: str) -> None:
    """Refuse a value that a service file could not hold as written: a control character
    (a line break starts a crontab job or a unit directive of its own; the others are
    refused with it, as the output boundary shows them) or a name that is not UTF-8."""
    from vaultkit.vault.outbound import has_control

    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise VaultkitError(f"--service {kind}: {what} {_shown(value)} is not valid UTF-8; "
                            "nothing written (rename it)") from None
    if has_control(value):
        raise VaultkitError(f"--service {kind}: {what} {_shown(value)} holds a control "
                            "character (a line break would add lines of its own to the "
                            "file); nothing written (rename it)")


def _shown(value: str) -> str:
    from vaultkit.vault.outbound import clean_line

    return clean_line(value.encode("utf-8", "backslashreplace").decode("utf-8"))


def _systemd_word(arg: str, *, program: bool = False) -> str:
    """One word of an ``ExecStart=`` line, read back as ``arg``: systemd.service(5) expands
    ``%`` specifiers on the whole line first (``%%`` is a ``%``), then splits it into words
    by systemd.syntax(7)'s quoting (C escapes: ``\\``, ``\"``), then expands ``$VAR`` in the
    arguments (``$$`` is a ``$``) but never in the program's path."""
    if arg and all(c.isalnum() or c in "/._-+:@" for c in arg):
        return arg
    arg = arg.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%")
    return '"' + (arg if program else arg.replace("$", "$$")) + '"'


def _systemd_description(value: str) -> str:
    """A value inside ``Description=``: specifiers are expanded there (``%%``), nothing is
    unquoted or unescaped, and a trailing backslash would join the next line, so the value
    is written between double quotes (shown as they are)."""
    return '"' + value.replace("%", "%%") + '"'


def _cron_word(arg: str) -> str:
    """One shell word of a crontab command, read back as ``arg``. crontab(5): a ``%`` not
    escaped with a backslash ends the command (the rest becomes its standard input), and
    ``\\%`` is a ``%``. Each ``%`` is therefore put outside the shell's quotes as ``\\%``:
    cron takes the backslash away and the shell reads a bare ``%``, and a backslash of the
    name just before it (inside the quotes) cannot combine with the escape."""
    import shlex

    quoted = shlex.quote(arg)
    if "%" not in arg:
        return quoted
    if not quoted.startswith("'"):  # (shlex left it bare: no backslash, no quote in it)
        return quoted.replace("%", "\\%")
    return quoted.replace("%", "'\\%'")


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


def _rewrite_if_unchanged(root: Path, rel: str, judged: str, text: str) -> bool:
    """Replace the file (a journal, MEMORY.md) with ``text``, atomically and under the lock
    ``log`` takes, only while it still holds ``judged`` (what this round read): a write
    since is never lost."""
    import fcntl

    from vaultkit.core.atomic import write_atomic
    from vaultkit.core.confine import write_target

    path = write_target(root, rel)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        held = os.fstat(fd)
        try:
            now = os.stat(path, follow_symlinks=False)
        except FileNotFoundError:
            return False
        if (held.st_dev, held.st_ino) != (now.st_dev, now.st_ino) or held.st_nlink > 1:
            return False
        data = b""
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            data += chunk
        from vaultkit.vault.gitstate import decode

        if decode(data) != judged:
            return False
        bom = b"\xef\xbb\xbf" if data.startswith(b"\xef\xbb\xbf") else b""
        write_atomic(path, bom + text.encode("utf-8"), root=root)
        return True
    finally:
        os.close(fd)


def _dirs_of(store):
    from vaultkit.vault.snapshots import _git_dirs

    try:
        return _git_dirs(Path(store.cwd))
    except Exception:  # noqa: BLE001 (no repository found: git-aware rounds are off)
        return None


def _small(path: Path) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read(4096)
    except OSError:
        return b""


def _stamp(path: Path) -> tuple:
    try:
        st = os.stat(path)
    except OSError:
        return ()
    return (st.st_size, st.st_mtime_ns, st.st_ino)

"""``vaultkit check --watch``: check, then check again after each batch of changes.

The changes come from :class:`vaultkit.vault.fswatch.Changes`, the event source ``vaultkit
watch`` uses (file events through watchfiles, else polling). Each run's report is the
plain ``check``'s on stdout; a header with the time and the reason before it, and the
result after it, go to stderr. The files ``--fix`` writes are recorded as they are after
the run, so they do not start another one.
"""

from __future__ import annotations

import os
import sys
import time

# what --watch cannot sensibly repeat: (option, reason)
_REFUSED = (
    ("hook", "--hook", "a hook runs once per commit"),
    ("write_baseline", "--write-baseline", "the baseline is written once"),
    ("shrink_baseline", "--shrink-baseline", "the baseline is shrunk once"),
    ("output", "-o/--output", "the report file would be rewritten on every change"),
    ("diff", "--diff", "a diff is shown once; --fix applies fixes as you go"),
    ("staged", "--staged", "staging is not a change the watch sees (it ignores .git/)"),
)
CONTENT_SUFFIXES = (".md", ".toml", ".json")


def watched(rel: str) -> bool:
    """Files whose content a check depends on: notes, vaultkit.toml, the baseline. Any
    other file counts when it appears or goes (a link's attachment)."""
    return rel.lower().endswith(CONTENT_SUFFIXES)


def refuse(args) -> None:
    from vaultkit.core.errors import VaultkitError

    for attr, option, why in _REFUSED:
        if getattr(args, attr, None):
            raise VaultkitError(f"--watch and {option} do not go together: {why}")
    if args.poll is not None and not args.poll > 0:
        raise VaultkitError("--poll: give a number of seconds above 0")


def _root(args):
    """The one vault the watch looks at: that of --root, or of the given paths."""
    from pathlib import Path

    from vaultkit.core.errors import VaultkitError
    from vaultkit.vault.scan import find_root

    if args.root:
        return Path(args.root).resolve()
    roots = {find_root(Path(p)).resolve() for p in (args.paths or ["."]) if Path(p).exists()}
    if not roots:
        named = args.paths or ["."]
        raise VaultkitError(f"{named[0]}: no such file or folder" if len(named) == 1
                            else "none of the given paths exists")
    if len(roots) > 1:
        raise VaultkitError(f"--watch watches one vault; the paths are in {len(roots)}: "
                            "watch each in its own terminal")
    return roots.pop()


def _outside(root, args) -> list:
    """The files a check reads outside the vault: a memory-only vault's bootstrap files,
    one folder up (none when the settings cannot be read; the first run says why)."""
    from vaultkit.core.errors import VaultkitError
    from vaultkit.vault.profile import ConfigError, load_settings

    try:
        profile = load_settings(root, args.profile).profile
    except (ConfigError, VaultkitError, OSError, ValueError):
        return []
    if profile.memory_prefix:
        return []
    return [root.parent / name for name in profile.bootstrap_files]


def _say(line: str = "") -> None:
    print(line, file=sys.stderr, flush=True)


def _reason(changed: list[str]) -> str:
    more = f" and {len(changed) - 1} more" if len(changed) > 1 else ""
    return f"{changed[0]} changed{more}"


def watch(args, check_once) -> int:
    """Run ``check_once(args)`` now and after each batch of changes, until Ctrl-C
    (exit 0) or SIGTERM."""
    import signal
    import threading

    from vaultkit.cli.commands import _common
    from vaultkit.core.errors import VaultkitError
    from vaultkit.vault.fswatch import Changes
    from vaultkit.vault.profile import ConfigError

    refuse(args)
    root = _root(args)
    stop = threading.Event()

    def interrupted(*_):
        stop.set()
        raise KeyboardInterrupt

    try:
        signal.signal(signal.SIGTERM, interrupted)
    except (ValueError, OSError):  # not the main thread
        pass
    clear = sys.stdout.isatty() and args.format == "text"
    from vaultkit.vault.snapshots import BlobMemo

    args.blobs = BlobMemo()  # the snapshot objects read: from git once, not every run
    changes = None
    try:
        changes = Changes(root, watched=watched, stop=stop, poll=args.poll, out=_say,
                          extra=_outside(root, args))
        reason = "first run"
        while True:
            changes.begin()
            if clear:  # (past the output boundary, which shows an ESC as text)
                sys.stdout.flush()
                os.write(sys.stdout.fileno(), b"\x1b[2J\x1b[H")
            _say(f"[{time.strftime('%H:%M:%S')}] vaultkit check: {reason}")
            args.written = []
            try:
                code = check_once(args)
                _common.save_opened_vaults()  # the caches: the next run starts warm
            except (VaultkitError, ConfigError, FileNotFoundError) as exc:
                _common.forget_opened_vaults()
                print(f"vaultkit: error: {exc}", file=sys.stderr)
                code = 2
            sys.stdout.flush()
            changes.mark(args.written)
            verdict = {0: "nothing fails the check", 1: "findings fail the check"}.get(
                code, "could not check")
            _say(f"[{time.strftime('%H:%M:%S')}] exit {code}: {verdict}; watching {root} "
                 "for changes (Ctrl-C stops)")
            changed = changes.wait()
            if changed is None:
                return 0
            reason = _reason(changed)
    except KeyboardInterrupt:
        return 0
    finally:
        stop.set()
        if changes is not None:
            changes.close()

"""``vaultkit history``: the memory-loss events in the vault's git history."""

from __future__ import annotations

import sys

HELP = ("list the memory lost in the vault's git history and between commits (journal "
        "rewrites, cuts, deletions)")
DESCRIPTION = (
    "Read the vault's git history in one pass and list the memory-loss events, newest first: "
    "journal lines removed or rewritten, mass deletions in a memory file, MEMORY.md cut past "
    "its pruning allowance, notes deleted without an archive move, and periods when a "
    "bootstrap file was over the runtime's truncation limit. Losses between commits are "
    "listed too: it first records a snapshot of the files as they are (what `vaultkit "
    "snapshot` records, on its private ref) and reads the snapshot chain, and it compares "
    "each committed journal with the work tree. Renames, archive moves and branch switches "
    "are not losses; a journal line edited and MEMORY.md pruned within its allowance are "
    "listed as such, not as losses. Each event names the commit or snapshot, date, author, "
    "file, what was lost and whether it was recovered since; `vaultkit recover ID` brings "
    "the lines back.")


def add_arguments(p) -> None:
    from vaultkit.cli import add_format_arguments, add_output_argument, add_vault_arguments

    p.add_argument("path", nargs="?", default=".", metavar="PATH",
                   help="the vault (default: here)")
    p.add_argument("--since", metavar="DATE",
                   help="only commits and snapshots from DATE on (YYYY-MM-DD or an ISO 8601 "
                        "date and time)")
    add_format_arguments(p, ('text', 'json'))
    add_output_argument(p)
    add_vault_arguments(p, cache=False)


def open_history_settings(args):
    """``(root, settings)`` of the vault ``args.path`` names, without parsing its notes."""
    from pathlib import Path

    from vaultkit.core.errors import VaultkitError
    from vaultkit.vault.profile import load_settings
    from vaultkit.vault.scan import find_root

    path = Path(args.path)
    if not path.exists():
        raise VaultkitError(f"{path}: no such file or folder")
    root = Path(args.root).resolve() if getattr(args, "root", None) else find_root(path)
    if not root.is_dir():
        raise VaultkitError(f"{root}: not a folder")
    return root, load_settings(root, getattr(args, "profile", None))


def check_since(since: str | None) -> str | None:
    """``--since`` as git reads it: a date (``YYYY-MM-DD``) or an ISO 8601 date and time."""
    import datetime as dt

    from vaultkit.core.errors import VaultkitError

    if since is None:
        return None
    text = since.strip()
    try:
        dt.datetime.fromisoformat(text)
    except ValueError:
        raise VaultkitError(f"--since {since!r}: give a date written YYYY-MM-DD (or an ISO "
                            "8601 date and time)") from None
    return text


def scan_all(root, settings, since=None, *, record: bool = True, work_tree: bool = False):
    """The git history's losses and, when the vault has snapshots, those between commits
    (with ``record``, a snapshot of the files as they are now is recorded first), newest
    first. With ``work_tree``, committed journal lines the work tree lost since HEAD that
    no snapshot saw too (:func:`vaultkit.memory.history.scan_work_tree_losses`)."""
    from vaultkit.core.errors import VaultkitError
    from vaultkit.memory.history import (History, listed_by_commits, scan_history,
                                         scan_snapshot_losses, scan_work_tree_losses)

    warnings: list[str] = []  # what the bounded reads of the snapshot chain left out
    between = scan_snapshot_losses(root, settings, since=since, record=record,
                                   warnings=warnings)
    if work_tree:
        between += scan_work_tree_losses(root, settings, between)
    try:
        history = scan_history(root, settings, since=since)
    except VaultkitError as exc:
        if not str(exc).startswith("history needs git"):
            raise
        # a folder without git: the same answer whether or not its snapshots hold a loss
        history = History([], 0, None, outside_git=str(exc).split(": ", 1)[-1])
    history.warnings += warnings
    between = listed_by_commits(between, history.events)
    if between:
        history.events = sorted(history.events + between, key=lambda e: e.timestamp,
                                reverse=True)
    return history


def run(args) -> int:
    since = check_since(args.since)
    root, settings = open_history_settings(args)
    history = scan_all(root, settings, since=since, work_tree=True)
    watched = watch_events(root, settings, since)
    if args.format == "json":
        from vaultkit.vault.outbound import dumps

        print(dumps({"commits": history.commits, "head": history.head,
                     "outsideGit": history.outside_git or None,
                     "events": [e.to_dict() for e in history.events],
                     "warnings": history.warnings, "watch": watched}, indent=2))
        return 0
    sys.stdout.write(render_text(history))
    for warning in history.warnings:  # versions over the read bound, or missing
        print(f"vaultkit: warning: {warning}", file=sys.stderr)
    restored = sum(1 for e in watched if e.get("kind") == "journal-restored")
    if restored:
        print(f"vaultkit watch restored {restored} journal loss{'es' * (restored != 1)} as they "
              "happened (the snapshot events above say recovered)")
    memory = sum(1 for e in watched if e.get("kind") == "memory-restored")
    if memory:
        print(f"vaultkit watch put back {memory} MEMORY.md cut{'s' * (memory != 1)} past the "
              "pruning allowance as they happened")
    return 0


def watch_events(root, settings, since: str | None) -> list[dict]:
    """What `vaultkit watch` logged (losses restored or reported), from ``since`` on."""
    import datetime as dt

    from vaultkit.memory.watch import read_events
    from vaultkit.vault.snapshots import open_store

    store = open_store(root, settings)
    if store is None:
        return []
    start = None
    if since:
        when = dt.datetime.fromisoformat(since)
        start = (when if when.tzinfo else when.astimezone()).timestamp()
    return [e for e in read_events(store, since=start) if e.get("kind") not in ("started",
                                                                                "stopped")]


def render_text(history) -> str:
    """The events as text; what the history quotes (paths, authors, subjects) passes the
    output boundary: an ESC in a commit's author never reaches the terminal."""
    from vaultkit.vault.outbound import clean_line

    events = history.events
    out = []
    for e in events:
        state = "recovered" if e.recovered else (
            f"accepted as removed on purpose (VAULTKIT_ACCEPT_DELETION), not a loss "
            f"(vaultkit recover {e.id} brings them back)" if e.accepted else
            "an edit, not a loss" if e.kind == "journal-edit" else
            f"pruned on purpose, not a loss (vaultkit recover {e.id} brings them back)"
            if not e.is_loss else
            f"not recovered: vaultkit recover {e.id}" if e.recoverable else "still over the limit")
        where = e.path if e.current in (None, e.path) else f"{e.path} (now {e.current})"
        where = clean_line(where)
        commit = e.commit[:10] if e.source == "commit" else "work tree" \
            if e.source == "work-tree" else f"snapshot {e.commit[:10]}"
        out.append(f"{e.date[:16].replace('T', ' ')}  {commit}  {e.kind}  {where}")
        out.append(f"    {clean_line(e.describe())}")
        if e.source == "commit":
            out.append(f"    by {clean_line(e.author)}: {clean_line(e.subject)!r}")
        elif e.source == "work-tree":
            out.append(f"    committed in HEAD ({e.commit[:10]}), gone from the work tree "
                       "since; no snapshot saw it")
        else:
            out.append("    between commits, found in vaultkit's snapshots")
        out.append(f"    {state}  [id {e.id}]")
    accepted = sum(1 for e in events if e.accepted)
    edited = sum(1 for e in events if e.kind == "journal-edit")
    pruned = sum(1 for e in events if not e.is_loss) - accepted - edited
    open_count = sum(1 for e in events if not e.recovered and e.is_loss)
    if out:
        out.append("")
    where = (f"in {history.commits} commit{'s' * (history.commits != 1)}"
             if not history.outside_git else
             f"between commits ({history.outside_git}: only vaultkit's snapshots were read)")
    losses = len(events) - pruned - accepted - edited
    kept = (f"; {pruned} MEMORY.md prune{'s' * (pruned != 1)} within the allowance"
            if pruned else "")
    kept += (f"; {accepted} removal{'s' * (accepted != 1)} accepted on purpose"
             if accepted else "")
    kept += f"; {edited} journal edit{'s' * (edited != 1)}" if edited else ""
    out.append(f"{losses} loss event{'s' * (losses != 1)} {where}, "
               f"{open_count} not recovered{kept}.")
    return "\n".join(out) + "\n"

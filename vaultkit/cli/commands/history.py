"""``vaultkit history``: the memory-loss events in the vault's git history."""

from __future__ import annotations

import sys

HELP = "list the memory lost in the vault's git history (journal rewrites, cuts, deletions)"
DESCRIPTION = (
    "Read the vault's git history in one pass and list the memory-loss events, newest first: "
    "journal lines removed or rewritten, mass deletions in a memory file, MEMORY.md cut past "
    "the profile's limit, notes deleted without an archive move, and periods when a bootstrap "
    "file was over the runtime's truncation limit. Renames and archive moves are not losses. "
    "Each event names the commit, date, author, file, what was lost and whether it was "
    "recovered since; `vaultkit recover ID` brings the lines back.")


def add_arguments(p) -> None:
    from vaultkit.cli import add_format_arguments, add_output_argument, add_vault_arguments

    p.add_argument("path", nargs="?", default=".", metavar="PATH",
                   help="the vault (default: here)")
    p.add_argument("--since", metavar="DATE",
                   help="only commits from DATE on (YYYY-MM-DD or an ISO 8601 date and time)")
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


def run(args) -> int:
    from vaultkit.memory.history import scan_history

    since = check_since(args.since)
    root, settings = open_history_settings(args)
    history = scan_history(root, settings, since=since)
    if args.format == "json":
        import json

        print(json.dumps({"commits": history.commits, "head": history.head,
                          "events": [e.to_dict() for e in history.events],
                          "warnings": history.warnings},
                         indent=2, ensure_ascii=False))
        return 0
    sys.stdout.write(render_text(history))
    for warning in history.warnings:  # versions over the read bound, or missing
        print(f"vaultkit: warning: {warning}", file=sys.stderr)
    return 0


def render_text(history) -> str:
    events = history.events
    out = []
    for e in events:
        state = "recovered" if e.recovered else (
            f"not recovered: vaultkit recover {e.id}" if e.recoverable else "still over the limit")
        where = e.path if e.current in (None, e.path) else f"{e.path} (now {e.current})"
        out.append(f"{e.date[:16].replace('T', ' ')}  {e.commit[:10]}  {e.kind}  {where}")
        out.append(f"    {e.describe()}")
        out.append(f"    by {e.author}: {e.subject!r}")
        out.append(f"    {state}  [id {e.id}]")
    open_count = sum(1 for e in events if not e.recovered)
    if out:
        out.append("")
    out.append(f"{len(events)} loss event{'s' * (len(events) != 1)} in {history.commits} "
               f"commit{'s' * (history.commits != 1)}, {open_count} not recovered.")
    return "\n".join(out) + "\n"

"""``vaultkit distill``: the weekly distillation as a report (changes nothing)."""

from __future__ import annotations

HELP = "report what the last N days of journals hold worth promoting, and what to prune"
DESCRIPTION = (
    "The weekly distillation for the heartbeat, as a report that changes nothing: decision, "
    "lesson and preference candidates from the last N days of journals (by tag, heading or "
    "phrase), MEMORY.md entries that look stale or are duplicated in topic notes, journal days "
    "with nothing but filler, and a checklist."
)


def add_arguments(p) -> None:
    from vaultkit.cli import add_format_arguments, add_output_argument, add_vault_arguments

    p.add_argument("path", nargs="?", default=".", metavar="PATH",
                   help="the vault or a folder inside it (default: here)")
    p.add_argument("--days", type=int, default=7, metavar="N",
                   help="journals of the last N days, today included (default 7)")
    p.add_argument("--stale-days", type=int, default=90, metavar="N",
                   help="a MEMORY.md entry dated more than N days ago is flagged (default 90)")
    add_format_arguments(p, ('markdown', 'json'), help="markdown (default; `md` also works) or json")
    add_output_argument(p)
    add_vault_arguments(p)


def run(args) -> int:
    import json
    import sys

    from vaultkit.cli.commands._common import open_vault
    from vaultkit.core.errors import VaultkitError
    from vaultkit.memory.distill import distill
    from vaultkit.memory.memset import today

    if args.days < 1:
        raise VaultkitError("--days must be at least 1")
    if args.days > 100_000 or abs(args.stale_days) > 100_000:  # dates before year 1 overflow
        raise VaultkitError("--days and --stale-days must be at most 100,000")
    vault = open_vault(args, args.path)
    report = distill(vault, args.days, today(vault.settings), args.stale_days)
    if args.format == "json":
        sys.stdout.write(json.dumps(report.to_dict(), ensure_ascii=False, indent=2) + "\n")
    else:
        sys.stdout.write(report.to_markdown())
    return 0

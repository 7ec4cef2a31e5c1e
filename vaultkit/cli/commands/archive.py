"""``vaultkit archive``: move old journals into memory/archive/, links kept resolving."""

from __future__ import annotations

import sys

HELP = "move journals older than --keep-days into memory/archive/ (links kept working)"
DESCRIPTION = (
    "Move daily journals older than the window into memory/archive/: with git mv inside a git "
    "work tree, else a copy that is read back and compared before the original is removed. "
    "Links that would break (path-qualified wikilinks, relative Markdown links) are rewritten "
    "with minimal edits; links Obsidian resolves by name are left alone. INDEX.md is "
    "regenerated when the vault has one. --dry-run prints the plan and changes nothing."
)


def add_arguments(p) -> None:
    from vaultkit.cli import add_format_arguments, add_output_argument, add_vault_arguments

    p.add_argument("path", nargs="?", default=".", metavar="PATH",
                   help="the vault or a folder inside it (default: here)")
    p.add_argument("--keep-days", type=int, metavar="N",
                   help="keep journals of the last N days in memory/ (default: the profile's "
                        "budgets.journal-keep-days, 30)")
    p.add_argument("--dry-run", action="store_true", help="show what would happen; change nothing")
    add_format_arguments(p, ('text', 'json'))
    add_output_argument(p)
    add_vault_arguments(p)


def run(args) -> int:
    import json

    from vaultkit.cli.commands._common import open_vault
    from vaultkit.memory.archive import execute, plan
    from vaultkit.memory.memset import today

    if args.keep_days is not None and args.keep_days > 100_000:  # dates before year 1 overflow
        from vaultkit.core.errors import VaultkitError

        raise VaultkitError("--keep-days must be at most 100,000")
    if args.dry_run:
        args.no_cache = True  # a dry run writes nothing, not even the parse cache
    vault = open_vault(args, args.path)
    keep_days = vault.profile.budgets.journal_keep_days if args.keep_days is None \
        else args.keep_days
    p = plan(vault, keep_days, today(vault.settings))
    if not args.dry_run and (p.moves or p.edits):
        p = execute(vault, p)
    if args.format == "json":
        print(json.dumps(p.to_dict(args.dry_run), ensure_ascii=False, indent=2))
        return 0
    from vaultkit.vault.scan import display_path

    def shown(path: str) -> str:  # as ruff prints paths: from the current folder
        return display_path(vault.root / path)

    verb = "would move" if args.dry_run else "moved"
    for old, new in p.moves:
        print(f"{verb}  {shown(old)} -> {shown(new)}")
    for e in p.edits:
        print(f"{'would rewrite' if args.dry_run else 'rewrote'}  {shown(e.path)}:{e.line}: "
              f"{e.old} -> {e.new}")
    for path, reason in p.skipped:
        print(f"skipped  {shown(path)}: {reason}", file=sys.stderr)
    if p.index_updated:
        print("updated  INDEX.md")
    n = len(p.moves)
    if n:
        print(f"{'Would archive' if args.dry_run else 'Archived'} {n} journal{'s' * (n != 1)} "
              f"older than {p.cutoff}.", file=sys.stderr)
    else:
        print(f"Nothing to archive: no journal older than {p.cutoff}.", file=sys.stderr)
    return 0

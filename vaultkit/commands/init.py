"""``vaultkit init``: write the starter vault."""

from __future__ import annotations

import sys

HELP = "create a starter vault (never overwrites an existing file)"


def add_arguments(p) -> None:
    p.add_argument("dir", nargs="?", default=".", metavar="DIR", help="where (default: here)")
    p.add_argument("--git", action="store_true", help="initialise a git repo and commit")


def run(args) -> int:
    from pathlib import Path

    from vaultkit.starter import init_vault

    result = init_vault(Path(args.dir), git=args.git)
    for rel in result.created:
        print(f"created  {rel}")
    for rel in result.skipped:
        print(f"skipped  {rel} (exists; left unchanged)")
    print(f"\nStarter vault ready in {args.dir}: {len(result.created)} files written, "
          f"{len(result.skipped)} kept.", file=sys.stderr)
    return 0

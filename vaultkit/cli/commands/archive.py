"""``vaultkit archive``: move old journals into memory/archive/, links kept resolving; with
``MEMORY.md:LINES``, move those MEMORY.md lines into memory/archive/MEMORY-archive.md."""

from __future__ import annotations

import sys

HELP = ("move journals older than --keep-days into memory/archive/ (links kept working), or "
        "MEMORY.md:LINES into memory/archive/MEMORY-archive.md")
DESCRIPTION = (
    "Move daily journals older than the window into memory/archive/: with git mv inside a git "
    "work tree, else a copy that is read back and compared before the original is removed. "
    "Links that would break (path-qualified wikilinks, relative Markdown links) are rewritten "
    "with minimal edits; links Obsidian resolves by name are left alone. INDEX.md is "
    "regenerated when the vault has one. --dry-run prints the plan and changes nothing. "
    "Named MEMORY.md lines (vaultkit archive MEMORY.md:12,15-16) are moved instead: appended "
    "as written to memory/archive/MEMORY-archive.md under a dated '## Archived from MEMORY.md "
    "(YYYY-MM-DD)' heading, each after a '<!-- vaultkit-archived:MEMORY.md:N left:D -->' "
    "marker (D: a digest of MEMORY.md as the run left it), then removed from MEMORY.md "
    "(every other byte kept), under the lock `vaultkit log` takes. A line the archive note "
    "holds already is not appended again, and the same lines named again on the MEMORY.md a "
    "run left are skipped. Refuses (exit 1, nothing written) a line past the end or a blank "
    "line."
)


def add_arguments(p) -> None:
    from vaultkit.cli import add_format_arguments, add_output_argument, add_vault_arguments

    p.add_argument("items", nargs="*", metavar="PATH | MEMORY.md:LINES",
                   help="the vault or a folder inside it (default: here); or the MEMORY.md "
                        "lines to move into the archive note: MEMORY.md:N, MEMORY.md:N-M or "
                        "MEMORY.md:N,M-K (a first PATH before them is the vault)")
    p.add_argument("--keep-days", type=int, metavar="N",
                   help="keep journals of the last N days in memory/ (default: the profile's "
                        "budgets.journal-keep-days, 30)")
    p.add_argument("--dry-run", action="store_true", help="show what would happen; change nothing")
    add_format_arguments(p, ('text', 'json'))
    add_output_argument(p)
    add_vault_arguments(p)


def run(args) -> int:
    import json
    import os

    from vaultkit.cli.commands._common import open_vault
    from vaultkit.core.errors import VaultkitError
    from vaultkit.memory.archive import execute, plan
    from vaultkit.memory.memset import today
    from vaultkit.memory.promote import _SPEC

    items = list(args.items)
    if any(_SPEC.match(item) and not os.path.isdir(item) for item in items):
        return _archive_memory_lines(args, items)
    if len(items) > 1:
        raise VaultkitError(f"{items[1]}: name one vault, or MEMORY.md lines as "
                            "MEMORY.md:LINES (vaultkit archive [PATH] [MEMORY.md:LINES ...])")
    args.path = items[0] if items else "."
    if args.keep_days is not None and args.keep_days > 100_000:  # dates before year 1 overflow
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


def _archive_memory_lines(args, items: list[str]) -> int:
    """``vaultkit archive [PATH] MEMORY.md:LINES ...``: move MEMORY.md lines into the
    archive note (vaultkit.memory.memarchive)."""
    import json
    import os

    from vaultkit.core.errors import VaultkitError
    from vaultkit.memory.memarchive import ArchiveRefused, archive_lines
    from vaultkit.memory.memset import open_settings
    from vaultkit.memory.promote import _SPEC, parse_lines, parse_source, snapshot_after
    from vaultkit.vault.outbound import mask_credentials

    if args.keep_days is not None:
        raise VaultkitError("--keep-days archives journals; it does not go with MEMORY.md:LINES")
    args.vault_path = None
    if not _SPEC.match(items[0]):
        if not os.path.isdir(items[0]):
            raise VaultkitError(f"{items[0]}: no such folder (vaultkit archive [PATH] "
                                "MEMORY.md:LINES ...)")
        args.vault_path = items.pop(0)
    sources = []
    for item in items:
        if not _SPEC.match(item):
            raise VaultkitError(f"{item!r}: name the lines as MEMORY.md:LINES, e.g. "
                                "MEMORY.md:12 or MEMORY.md:12,15-16")
        sources.append(parse_source(item))
    if len({s.path for s in sources}) > 1:
        raise VaultkitError("name the lines of one file: MEMORY.md:12,15-16")
    # every line once, in order, within promote's bound on lines at once
    numbers = parse_lines(",".join(str(n) for s in sources for n in s.lines), items[0])
    # a dry run writes nothing, not even the settings cache
    root, settings = open_settings(args, use_cache=not (args.dry_run or args.no_cache))
    try:
        result = archive_lines(root, settings, sources[0].path, numbers, dry_run=args.dry_run)
    except ArchiveRefused as exc:
        if args.format == "json":
            print(json.dumps({"refused": True, "error": mask_credentials(str(exc))},
                             ensure_ascii=False))
        print(f"vaultkit: {mask_credentials(str(exc))}", file=sys.stderr)
        return 1
    if result.moved and not args.dry_run:
        result.snapshot, warning = snapshot_after(root, settings)
        if warning:
            print(f"vaultkit: warning: {warning}", file=sys.stderr)
    if args.format == "json":
        print(json.dumps(result.to_dict(), ensure_ascii=False))
        return 0
    from pathlib import Path

    from vaultkit.vault.outbound import clean_line
    from vaultkit.vault.scan import display_path

    source = display_path(Path(os.path.normpath(root / result.source)))  # (../MEMORY.md)
    archive = display_path(root / result.archive)
    verb = "would move" if args.dry_run else "moved"
    for m in result.moved:
        text = clean_line(mask_credentials(m.text))
        where = f"{archive}:{m.archive_line}" if m.archive_line else archive
        held = "" if m.appended else f" (already in {archive}: removed from {source} only)"
        print(f"{source}:{m.line}: {verb} to {where}{held}: {text}")
    for m in result.skipped:
        print(f"{source}:{m.line}: skipped: {clean_line(mask_credentials(m.reason))}",
              file=sys.stderr)
    if result.index_updated:
        print("updated  INDEX.md")
    if not result.moved:
        print(f"Nothing moved: no named line of {source} is left to archive.", file=sys.stderr)
    return 0

"""``vaultkit promote``: copy journal lines into MEMORY.md or a topic note, once."""

from __future__ import annotations

HELP = "copy journal lines into MEMORY.md or a topic note, with their source (once, locked)"
DESCRIPTION = (
    "Copy the named journal lines (FILE:LINES, e.g. memory/2026-12-06.md:12-14) into "
    "MEMORY.md or the topic note --to names, under a dated '## Promoted from the journal "
    "(YYYY-MM-DD)' heading, each after a '<!-- vaultkit-promoted:FILE:LINE -->' marker. The "
    "journal keeps its lines (it is append-only). One O_APPEND write under the lock `vaultkit "
    "log` takes: a line already in the target (or promoted from the same source line before) "
    "is skipped, so concurrent or repeated runs write each line once. Refuses (exit 1, "
    "nothing written) a line that holds a credential, unless --allow-secret, and a result a "
    "detected runtime would cut or that takes MEMORY.md over its size budget. A snapshot is "
    "taken after the write."
)


def add_arguments(p) -> None:
    from vaultkit.cli import add_format_arguments, add_output_argument, add_vault_arguments

    p.add_argument("items", nargs="+", metavar="FILE:LINES",
                   help="the journal lines: FILE:N, FILE:N-M or FILE:N,M-K, FILE relative to "
                        "the vault; a first argument that names a folder is the vault "
                        "(default: here)")
    p.add_argument("-C", "--vault", dest="vault_dir", metavar="PATH",
                   help="the vault or a folder inside it, instead of a first PATH")
    p.add_argument("--to", default="MEMORY.md", metavar="NOTE",
                   help="MEMORY.md (default) or an existing topic note, e.g. "
                        "memory/semantic/db.md")
    p.add_argument("--dry-run", action="store_true",
                   help="write nothing; print what would be appended (refusals still apply)")
    p.add_argument("--allow-secret", action="store_true",
                   help="promote a line even when it holds a credential (a reviewed false "
                        "positive); without it such a line is refused with exit code 1")
    add_format_arguments(p, ('text', 'json'))
    add_output_argument(p)
    add_vault_arguments(p, cache=False)


def run(args) -> int:
    import json
    import os
    import sys

    from vaultkit.core.errors import VaultkitError
    from vaultkit.memory.memset import open_settings
    from vaultkit.memory.promote import _SPEC, PromoteRefused, parse_source, promote, \
        snapshot_after

    items = list(args.items)
    args.vault_path = None
    if args.vault_dir is not None:
        if not os.path.isdir(args.vault_dir):
            raise VaultkitError(f"--vault {args.vault_dir}: no such folder")
        args.vault_path = args.vault_dir
    elif not _SPEC.match(items[0]) and (len(items) > 1 or os.path.isdir(items[0])):
        if not os.path.isdir(items[0]):
            raise VaultkitError(f"{items[0]}: no such folder (vaultkit promote [PATH] "
                                "FILE:LINES ...)")
        args.vault_path = items.pop(0)
    if not items:
        raise VaultkitError("name the journal lines to promote: FILE:LINES, e.g. "
                            "memory/2026-12-06.md:12-14")
    sources = [parse_source(item) for item in items]
    root, settings = open_settings(args)
    from vaultkit.cli.commands._common import as_vault_path

    for source in sources:
        source.path = as_vault_path(root, source.path)
    try:
        result = promote(root, settings, sources, args.to, dry_run=args.dry_run,
                         allow_secret=args.allow_secret)
    except PromoteRefused as exc:
        if args.format == "json":
            print(json.dumps({"refused": True, "kind": exc.kind, **exc.details,
                              "error": str(exc)}, ensure_ascii=False))
        print(f"vaultkit: {exc}", file=sys.stderr)
        return 1
    if result.promoted and not args.dry_run:
        result.snapshot, warning = snapshot_after(root, settings)
        if warning:
            print(f"vaultkit: warning: {warning}", file=sys.stderr)
    if args.format == "json":
        print(json.dumps(result.to_dict(), ensure_ascii=False))
        return 0
    from vaultkit.vault.scan import display_path

    target = display_path(root / result.target)
    verb = "would promote" if args.dry_run else "promoted"
    for p in result.promoted:
        print(f"{target}:{p.line}: {verb} {p.source}")
    for p in result.skipped:
        print(f"{p.source}: skipped: {p.reason}")
    if args.dry_run and result.written:
        print(f"--- would append to {target}:")
        sys.stdout.write(result.written)
    elif not result.promoted:
        print(f"nothing new: every named line is in {target} already")
    return 0

"""``vaultkit get``: a bounded excerpt of one memory file (the runtime's memory_get)."""

from __future__ import annotations

import sys

HELP = "print lines of a memory file (memory_get: 120 lines, 12,000 characters at most)"
DESCRIPTION = (
    "Print a bounded excerpt of one file of the memory set (MEMORY.md and memory/**/*.md): "
    "--lines lines from line --from, at most 12,000 characters of whole lines. Paths with '..', "
    "absolute paths, backslashes, URL-encoding and symlinks leading out are refused (exit 2). "
    "A missing file gives empty text with --json, as the runtime does, and an error with "
    "exit 1 in text mode."
)


def add_arguments(p) -> None:
    from vaultkit.cli import add_format_arguments, add_output_argument, add_vault_arguments

    p.add_argument("vault_path", nargs="?", metavar="PATH",
                   help="the vault or a folder inside it (default: here)")
    p.add_argument("path", metavar="FILE",
                   help="the file's vault-relative path, e.g. memory/2026-02-15.md")
    p.add_argument("-C", "--vault", dest="vault_dir", metavar="PATH",
                   help="the vault or a folder inside it, instead of the first PATH "
                        "(never taken for anything else)")
    p.add_argument("--from", dest="start", type=int, default=1, metavar="N",
                   help="first line, 1-based (default 1)")
    p.add_argument("--lines", type=int, default=120, metavar="M",
                   help="how many lines (default 120)")
    add_format_arguments(p, ('text', 'json'), help="text (default) or json: {path, text, from, lines, truncated, nextFrom} like memory_get")
    add_output_argument(p)
    add_vault_arguments(p, cache=False)


def run(args) -> int:
    import json

    from vaultkit.memory.get import PathRefused, read_excerpt
    from vaultkit.memory.memset import open_settings

    if args.vault_dir is not None:
        if args.vault_path is not None:
            from vaultkit.core.errors import VaultkitError

            raise VaultkitError("-C names the vault: give only FILE after it")
        args.vault_path = args.vault_dir
    if args.vault_path is not None and not __import__("os").path.isdir(args.vault_path):
        from vaultkit.core.errors import VaultkitError

        raise VaultkitError(f"{args.vault_path}: no such folder (vaultkit get [PATH] FILE)")
    root, settings = open_settings(args)
    from vaultkit.cli.commands._common import as_vault_path

    args.path = as_vault_path(root, args.path)
    try:
        excerpt = read_excerpt(root, settings, args.path, args.start, args.lines)
    except PathRefused as exc:
        if args.format == "json":
            print(json.dumps({"path": args.path, "text": "", "error": str(exc)},
                             ensure_ascii=False))
        raise
    if args.format == "json":
        from vaultkit.vault.outbound import dumps

        print(dumps(excerpt.to_dict()))
        return 0
    if excerpt.missing:
        print(f"vaultkit: error: {excerpt.path}: no such file", file=sys.stderr)
        return 1
    from vaultkit.vault.outbound import clean

    sys.stdout.write(clean(excerpt.text))
    if excerpt.text and not excerpt.text.endswith("\n"):
        sys.stdout.write("\n")
    if excerpt.truncated:
        print(f"vaultkit: {excerpt.path}: more follows; continue with --from {excerpt.next_from}",
              file=sys.stderr)
    for c in excerpt.credentials:
        print(f"vaultkit: warning: {excerpt.path}:{c['line']} holds a credential: {c['kind']} "
              f"({c['masked']}); redact it before use", file=sys.stderr)
    return 0

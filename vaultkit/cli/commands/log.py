"""``vaultkit log``: append an entry to today's journal."""

from __future__ import annotations

import sys

HELP = "append an 'HH:MM — Title' entry to memory/<date>.md (append-only, locked)"
DESCRIPTION = (
    "Append an entry to the daily journal memory/YYYY-MM-DD.md, creating it with its "
    "'# YYYY-MM-DD' heading. One O_APPEND write under an exclusive lock per entry: concurrent "
    "writers never interleave and nothing in the file is rewritten. Without --title the first "
    "line of the text is the title. Date and time come from vaultkit.toml's timezone, else the "
    "local zone. Writes only entries `check` accepts: a text that says too little as a title "
    "and a body is written as one line ('HH:MM — Title: text'); an entry over the entry "
    "length limit or holding only filler is refused (exit 1, nothing written). Refuses "
    "(exit 1, nothing written) an entry that holds a credential, unless --allow-secret."
)


def add_arguments(p) -> None:
    from vaultkit.cli import add_format_arguments, add_output_argument, add_vault_arguments

    p.add_argument("vault_path", nargs="?", metavar="PATH",
                   help="the vault or a folder inside it (default: here); comes before TEXT, "
                        "or alone when the entry comes on standard input")
    p.add_argument("text", nargs="?", metavar="TEXT | -",
                   help="the entry; '-' (or nothing, with a pipe) reads standard input")
    # (words past TEXT: the shell split an unquoted entry; run says to quote it, so the
    # usage, written here, leaves them out)
    p.add_argument("more", nargs="*", metavar="WORD",
                   help="a word past TEXT (an unquoted entry): refused, with the entry "
                        "quoted as one argument to type instead")
    p.usage = ("vaultkit log [-C PATH | PATH] [TEXT | -] [--title T] [--time HH:MM] "
               "[--date YYYY-MM-DD] [--format {text,json}] [-o FILE] [--allow-secret] "
               "[--root DIR] [--profile NAME|FILE]")
    p.add_argument("-C", "--vault", dest="vault_dir", metavar="PATH",
                   help="the vault or a folder inside it, instead of the first PATH "
                        "(never taken for anything else)")
    p.add_argument("--title", "-t", metavar="T", help="the entry's title")
    p.add_argument("--time", metavar="HH:MM", help="the entry's time (default: now)")
    p.add_argument("--date", metavar="YYYY-MM-DD", help="the journal's day (default: today)")
    add_format_arguments(p, ('text', 'json'))
    add_output_argument(p)
    p.add_argument("--allow-secret", action="store_true",
                   help="write the entry even when it holds a credential (a reviewed false "
                        "positive); without it such an entry is refused with exit code 1")
    add_vault_arguments(p, cache=False)


def run(args) -> int:
    from vaultkit.core.errors import VaultkitError
    from vaultkit.memory.journal import EntryRefused, SecretRefused, append_entry
    from vaultkit.memory.memset import open_settings

    # `vaultkit log Deployed the fix` (`-C DIR Deployed fix`): the shell split the entry
    if args.more or (args.vault_dir is not None and args.text is not None):
        import os
        import shlex

        words = [w for w in (args.vault_path, args.text, *args.more) if w is not None]
        if args.vault_dir is None and os.path.isdir(words[0]):
            words.pop(0)  # (the vault)
        raise VaultkitError("the entry is one argument: quote its words "
                            f"({shlex.quote(' '.join(words))}); nothing written")
    if args.vault_dir is not None:  # -C: the one positional is the text
        args.text, args.vault_path = args.vault_path, args.vault_dir
        if not __import__("os").path.isdir(args.vault_path):
            raise VaultkitError(f"--vault {args.vault_path}: no such folder")
    elif args.text is None and args.vault_path is not None:
        import os

        # one argument is the text, unless the entry comes on a pipe and it names a folder:
        # `... | vaultkit log ~/vault`
        if sys.stdin.isatty() or not os.path.isdir(args.vault_path):
            args.text, args.vault_path = args.vault_path, None
    _check_vault_path(args.vault_path, args.text)
    text = args.text
    if text == "-" or (text is None and not sys.stdin.isatty()):
        try:
            text = sys.stdin.read()
        except (OSError, UnicodeDecodeError) as exc:
            raise VaultkitError(f"cannot read standard input: {exc}") from None
    if text is None:
        text = ""
    if not text.strip() and not args.title:
        raise VaultkitError("nothing to log: give a text, '-' to read standard input, or --title")
    root, settings = open_settings(args)
    try:
        result = append_entry(root, settings, text=text, title=args.title, date=args.date,
                              time=args.time, allow_secret=args.allow_secret)
    except SecretRefused as exc:
        if args.format == "json":
            import json

            print(json.dumps({"refused": True, "kind": exc.finding.kind,
                              "masked": exc.finding.masked, "error": str(exc)},
                             ensure_ascii=False))
        print(f"vaultkit: {exc}", file=sys.stderr)
        return 1
    except EntryRefused as exc:
        if args.format == "json":
            import json

            print(json.dumps({"refused": True, "rule": exc.rule, "error": str(exc)},
                             ensure_ascii=False))
        print(f"vaultkit: {exc}", file=sys.stderr)
        return 1
    from vaultkit.vault.scan import display_path

    shown = display_path(root / result.path)  # as ruff prints paths: from the current folder
    for warning in result.warnings:
        print(f"vaultkit: warning: {shown}:{result.line}: {warning}", file=sys.stderr)
    if args.format == "json":
        import json

        print(json.dumps(result.to_dict(), ensure_ascii=False))
    else:
        print(f"{shown}:{result.line}: {result.heading}")
    return 0


def _check_vault_path(path, text=None) -> None:
    from pathlib import Path

    from vaultkit.core.errors import VaultkitError

    if path is not None and not Path(path).is_dir():
        if text is not None and "/" not in path and path not in (".", ".."):
            import shlex

            # `vaultkit log Deployed fix`: two words of an unquoted entry, most likely
            raise VaultkitError(f"{path}: no such folder (PATH comes before the text); an "
                                f"entry of several words is one argument: quote them "
                                f"({shlex.quote(path + ' ' + text)})")
        raise VaultkitError(f"{path}: no such folder (PATH comes before the text: "
                            "vaultkit log PATH TEXT)")

"""``vaultkit index``: generate memory/INDEX.md."""

from __future__ import annotations

import sys

from vaultkit.cli import add_vault_arguments

HELP = "generate memory/INDEX.md (the agent's entry point)"
DESCRIPTION = (
    "Write memory/INDEX.md between <!-- vaultkit:index:start --> and "
    "<!-- vaultkit:index:end -->; text outside the markers is kept byte for byte. "
    "With --check, write nothing, print the diff and exit 1 when the index is stale."
)


def add_arguments(p) -> None:
    p.add_argument("path", nargs="?", default=".", metavar="PATH",
                   help="the vault or a folder inside it (default: here)")
    add_vault_arguments(p)
    p.add_argument("--check", action="store_true",
                   help="write nothing; print the diff and exit 1 when INDEX.md is stale")


def run(args) -> int:
    import difflib

    from vaultkit.cli.commands._common import open_vault
    from vaultkit.links.indexgen import index_path, render_index, write_index

    from vaultkit.vault.scan import display_path

    from vaultkit.core import progress

    progress.allow(True)  # (stderr on a terminal only; the diff of --check is on stdout)
    vault = open_vault(args, args.path)
    path = index_path(vault)
    shown = display_path(vault.root / path)  # as ruff prints paths: from the current folder
    if args.check:
        new = render_index(vault)
        _report_left_out(vault)
        note = vault.notes.get(path)
        old = note.text if note is not None else None
        if old == new:
            print(f"{shown} is up to date.", file=sys.stderr)
            return 0
        diff = difflib.unified_diff(
            [] if old is None else old.splitlines(keepends=True), new.splitlines(keepends=True),
            fromfile="/dev/null" if old is None else f"a/{path}", tofile=f"b/{path}")
        sys.stdout.write("".join(diff))
        print(f"{shown} is stale; run `vaultkit index`.", file=sys.stderr)
        return 1
    changed = write_index(vault)
    _report_left_out(vault)
    print(f"{'Wrote' if changed else 'Unchanged:'} {shown}", file=sys.stderr)
    return 0


def _report_left_out(vault) -> None:
    """Notes the index leaves out because no link to their file name would resolve."""
    for path in getattr(vault, "index_left_out", ()):
        print(f"vaultkit: warning: {path!r}: left out of the index: no link to this file "
              "name resolves in Obsidian's syntax (it holds '#', '|', '[[' or a line break, "
              "or starts with a space); rename the file", file=sys.stderr)

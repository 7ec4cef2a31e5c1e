"""``vaultkit report``: the vault's health as one self-contained HTML page."""

from __future__ import annotations

HELP = "write a self-contained HTML health report (charts over the git history, audit, findings)"
DESCRIPTION = (
    "Write one HTML page that works offline and prints: MEMORY.md and the bootstrap set over "
    "the git history against their budgets, notes per layer, journal activity per day, "
    "findings per rule, the memory-loss events on the timeline, then the audit, the top "
    "findings with their context and the head of MEMORY.md. Needs the report extra: "
    "pip install 'vaultkit-lint[report]' (matplotlib, mistune).")


def add_arguments(p) -> None:
    from vaultkit.cli import add_output_argument, add_vault_arguments

    p.add_argument("path", nargs="?", default=".", metavar="PATH",
                   help="the vault (default: here)")
    add_output_argument(p, default="report.html",
                        help="the page to write (default: report.html)")
    p.set_defaults(writes_output=True)
    add_vault_arguments(p)


def run(args) -> int:
    import sys

    from vaultkit.cli.commands._common import open_vault
    from vaultkit.cli.htmlreport import _need_extra, check_output, write_report

    _need_extra()  # before the vault is read: a missing extra is said at once
    check_output(args.output)
    vault = open_vault(args, args.path)
    size = write_report(vault, args.output)
    print(f"wrote {args.output} ({size / 1024:,.0f} KB)", file=sys.stderr)
    return 0

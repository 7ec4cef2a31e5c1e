"""``vaultkit server``: a Language Server over stdio for editors."""

from __future__ import annotations

import sys

HELP = "serve the linter to editors: a Language Server (LSP) over stdio"
DESCRIPTION = (
    "Run a Language Server over standard input and output: each open note's findings as "
    "you type (the unsaved text checked as `vaultkit check` would check it saved), with "
    "the notes that depend on it; code actions that apply `check --fix`'s fix or accept a "
    "finding into the baseline; hover on a link (where it resolves, or why not) and on a "
    "bootstrap file's first line (what each runtime loads of it). Each document's vault "
    "is found as `vaultkit check` finds it for a path; several vaults may be open. "
    "Set-up for VS Code, Neovim, Helix and Zed: docs/editors.md. Needs the server extra: "
    "pip install 'vaultkit-lint[server]'."
)
INSTALL_HINT = ("vaultkit: error: `vaultkit server` needs pygls 2.x: "
                "pip install 'vaultkit-lint[server]'")


def add_arguments(p) -> None:
    from vaultkit.cli import add_vault_arguments

    p.add_argument("--stdio", action="store_true",
                   help="talk over standard input and output (the only transport; accepted "
                        "because editors' LSP clients often pass it)")
    add_vault_arguments(p)


def pygls_available() -> bool:
    """True when pygls 2.x imports (1.x has no ``pygls.lsp.server``)."""
    try:
        import pygls.lsp.server  # noqa: F401
    except ImportError:
        return False
    return True


def run(args) -> int:
    import gc
    from pathlib import Path

    from vaultkit.core.errors import VaultkitError
    from vaultkit.vault.scan import require_vault

    if not pygls_available():
        print(INSTALL_HINT, file=sys.stderr)
        return 2
    root = None
    if args.root:
        root = Path(args.root).resolve()
        if not root.is_dir():
            raise VaultkitError(f"{args.root}: not a folder")
        require_vault(root)
    gc.enable()  # a long-lived process: the CLI switches the collector off for short runs
    from vaultkit.cli.lsp_server import serve

    return serve(root=root, profile=args.profile, use_cache=not args.no_cache)

"""``vaultkit mcp``: serve the vault to agents over the Model Context Protocol (stdio)."""

from __future__ import annotations

import sys

HELP = "serve memory_search/get/log and the linter to agents over MCP (stdio)"
DESCRIPTION = (
    "Run a Model Context Protocol server over standard input and output for the vault at "
    "PATH: memory_search, memory_get and memory_log with the runtime's parameters and "
    "shapes, vault_check, vault_audit and vault_index, and the bootstrap files and "
    "memory/INDEX.md as resources. Register it in Claude Code, Codex, Cursor or OpenClaw "
    "(docs/mcp.md). Needs the mcp extra: pip install 'vaultkit-lint[mcp]'."
)
INSTALL_HINT = ("vaultkit: error: `vaultkit mcp` needs the MCP SDK 2.x: "
                "pip install 'vaultkit-lint[mcp]'")


def add_arguments(p) -> None:
    from vaultkit.cli import add_vault_arguments

    p.add_argument("path", nargs="?", default=".", metavar="PATH",
                   help="the vault or a folder inside it (default: here)")
    p.add_argument("--read-only", action="store_true",
                   help="serve only the reading tools (no memory_log, no vault_index)")
    p.add_argument("--openclaw-config", metavar="PATH",
                   help="openclaw.json for vault_audit (default: as `vaultkit audit` finds it)")
    add_vault_arguments(p)


def sdk_available() -> bool:
    """True when the 2.x SDK imports (1.x lacks the low-level ``on_*`` server API)."""
    try:
        import mcp.server.lowlevel  # noqa: F401
        import mcp_types  # noqa: F401  (2.x only)
    except ImportError:
        return False
    return True


def run(args) -> int:
    import gc
    from pathlib import Path

    from vaultkit.core.errors import VaultkitError
    from vaultkit.vault.scan import find_root

    if not sdk_available():
        print(INSTALL_HINT, file=sys.stderr)
        return 2
    path = Path(args.path)
    if not path.exists():
        raise VaultkitError(f"{path}: no such file or folder")
    root = Path(args.root).resolve() if args.root else find_root(path)
    if not root.is_dir():
        raise VaultkitError(f"{root}: not a folder")
    gc.enable()  # a long-lived process: the CLI switches the collector off for short runs
    from vaultkit.cli.mcp_server import serve

    return serve(root, profile=args.profile, use_cache=not args.no_cache,
                 read_only=args.read_only, openclaw_config=args.openclaw_config)

"""Helpers the subcommands share: opening the vault the arguments name."""

from __future__ import annotations

from pathlib import Path

from vaultkit.errors import VaultkitError


def open_vault(args, path: str | Path = "."):
    from vaultkit.vault import load_vault

    path = Path(path)
    if not path.exists():
        raise VaultkitError(f"{path}: no such file or folder")
    return load_vault(path, root=getattr(args, "root", None),
                      profile=getattr(args, "profile", None),
                      use_cache=not getattr(args, "no_cache", False))


def vault_relative(vault, path: str | Path) -> str | None:
    """``path`` (relative to the current folder) as a vault path, or None if outside."""
    p = Path(path).resolve()
    try:
        rel = p.relative_to(vault.root)
    except ValueError:
        return None
    return rel.as_posix() if str(rel) != "." else ""

"""Helpers the subcommands share: opening the vault the arguments name."""

from __future__ import annotations

from pathlib import Path

from vaultkit.core.errors import VaultkitError


def open_vault(args, path: str | Path = ".", *, named: bool | None = None):
    """The vault ``path`` lies in. ``named``: the path was given on the command line, so a
    folder of notes is a vault without a marker (default: any path but ".")."""
    from vaultkit.vault.loader import load_vault

    path = Path(path)
    if not path.exists():
        raise VaultkitError(f"{path}: no such file or folder")
    # a folder named on the command line (not the default ".") is a vault when it holds notes
    vault = load_vault(path, root=getattr(args, "root", None),
                       profile=getattr(args, "profile", None),
                       use_cache=not getattr(args, "no_cache", False), save=False,
                       named=(str(path) != "." if named is None else named) and path.is_dir())
    _OPENED.append(vault)
    return vault


_OPENED: list = []


def save_opened_vaults() -> None:
    """Write the caches of the vaults this command opened: once, after its work is done."""
    while _OPENED:
        _OPENED.pop().save_cache()


def forget_opened_vaults() -> None:
    _OPENED.clear()


def vault_relative(vault, path: str | Path) -> str | None:
    """``path`` (relative to the current folder) as a vault path, or None if outside."""
    p = Path(path).resolve()
    try:
        rel = p.relative_to(vault.root)
    except ValueError:
        return None
    from vaultkit.vault.scan import printable

    # (a name that is not UTF-8 is known by its \xNN form, as the scan reports it)
    return printable(rel.as_posix()) if str(rel) != "." else ""


def check_output_folder(name: str | None) -> None:
    """``-o FILE`` into a folder that does not exist: one clear line before any work."""
    if not name:
        return
    folder = Path(name).parent
    if not folder.is_dir():
        raise VaultkitError(f"{name}: cannot write: the folder {folder} does not exist; "
                            "create it first")

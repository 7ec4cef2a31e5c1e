"""Helpers the subcommands share: opening the vault the arguments name."""

from __future__ import annotations

from pathlib import Path

from vaultkit.core.errors import VaultkitError


def open_vault(args, path: str | Path = ".", *, named: bool | None = None,
               deferred: bool = False):
    """The vault ``path`` lies in. ``named``: the path was given on the command line, so a
    folder of notes is a vault without a marker (default: any path but "."). ``deferred``:
    list the files now, read the notes (from the parse cache) only when first asked for
    (vaultkit.vault.deferred): a warm check of an unchanged vault needs none of them."""
    path = Path(path)
    if not path.exists():
        raise VaultkitError(f"{path}: no such file or folder")
    # a folder named on the command line (not the default ".") is a vault when it holds notes
    options = dict(root=getattr(args, "root", None), profile=getattr(args, "profile", None),
                   use_cache=not getattr(args, "no_cache", False),
                   named=(str(path) != "." if named is None else named) and path.is_dir())
    # a process that keeps the vault warm (the answering process of `vaultkit watch`) hands
    # its workspace to the command it runs: the vault is listed from the workspace's listing
    warm = getattr(args, "workspace", None)
    if deferred:
        from vaultkit.vault.deferred import DeferredVault
        from vaultkit.vault.loader import scan_vault

        vault = DeferredVault(scan_vault(path, warm=warm, **options),
                              use_cache=options["use_cache"])
    elif warm is not None:
        from vaultkit.vault.loader import Lent, load_vault, scan_vault

        vault = load_vault(use_cache=options["use_cache"], save=False,
                           lent=Lent(scan=scan_vault(path, warm=warm, **options)))
    else:
        from vaultkit.vault.loader import load_vault

        vault = load_vault(path, save=False, **options)
    _OPENED.append(vault)
    return vault


_OPENED: list = []


def save_opened_vaults() -> None:
    """Write the caches of the vaults this command opened: once, after its work is done
    (answering a request, once the answer is sent: each vault's ``store.later``)."""
    opened = _OPENED[::-1]  # (the last opened first)
    _OPENED.clear()
    for vault in opened:
        vault.store.later(vault.save_cache)


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


def as_vault_path(root: Path, requested: str) -> str:
    """A FILE argument of ``get``/``promote`` as the vault path it names: as written when
    the vault has it (the documented form, as ``memory_get`` takes it); else the file it
    names from the current folder, when that lies in the vault: the path ``search`` and
    ``check`` print, or the shell's completion, from a subfolder or beside the vault.
    ``..`` and absolute paths stay as written, refused as before."""
    import os

    here = Path(requested)
    if (here.is_absolute() or ".." in here.parts or os.path.lexists(root / requested)
            or not here.is_file()):
        return requested
    full = here.parent.resolve() / here.name  # (the file itself is not followed)
    try:
        return full.relative_to(root).as_posix()
    except ValueError:
        return requested


def check_output_folder(name: str | None) -> None:
    """``-o FILE`` into a folder that does not exist: one clear line before any work."""
    if not name:
        return
    folder = Path(name).parent
    if not folder.is_dir():
        raise VaultkitError(f"{name}: cannot write: the folder {folder} does not exist; "
                            "create it first")

"""The vault's *memory set*: the files ``search`` indexes and ``get`` may read.

It is what the runtime's ``memory_search`` / ``memory_get`` cover: ``MEMORY.md``
and ``memory/**/*.md``. Paths are vault-relative with ``/``. In the memory-only
layout (``memory-dir = "."``) every Markdown file of the vault belongs to it, and
``MEMORY.md`` is the workspace's, one folder up (read when the vault has none).
Folders vaultkit never scans (``.git``, ``.obsidian``, ``.trash``, ``.vaultkit``)
and configured excludes are never part of it.
"""

from __future__ import annotations

import datetime as _dt
from pathlib import Path

from vaultkit.core.errors import VaultkitError
from vaultkit.vault.scan import in_skipped_folder

MEMORY_MD = "MEMORY.md"


def in_memory_set(settings, rel: str) -> bool:
    """True when the vault-relative path ``rel`` is one the memory tools may touch."""
    if not rel or not rel.lower().endswith(".md"):
        return False
    parts = rel.split("/")
    if any(p in ("", ".", "..") for p in parts) or in_skipped_folder(rel):
        return False
    if settings.is_excluded(rel):
        return False
    prefix = settings.profile.memory_prefix
    if rel == MEMORY_MD:
        return True
    if not prefix:
        return True
    return rel.startswith(prefix)


def file_of(root: Path, settings, rel: str) -> Path:
    """The file on disk for a memory-set path (``MEMORY.md`` of the workspace when memory-only)."""
    path = root / rel
    if rel == MEMORY_MD and not settings.profile.memory_prefix and not path.exists():
        return root.parent / MEMORY_MD
    return path


def memory_notes(vault) -> dict:
    """``{path: Note}`` of the loaded vault's memory set (external MEMORY.md included)."""
    out = {p: vault.notes[p] for p in vault.notes if in_memory_set(vault.settings, p)}
    if not vault.profile.memory_prefix and MEMORY_MD not in out:
        ext = vault.external.get("../" + MEMORY_MD)
        if ext is not None:
            out[MEMORY_MD] = ext
    return out


def open_settings(args, *, use_cache: bool = True):
    """``(root, settings)`` from the usual ``--root/--profile`` arguments without parsing notes
    (``use_cache=False``: the settings cache is neither read nor written, for a dry run)."""
    from vaultkit.vault.profile import load_settings
    from vaultkit.vault.scan import find_root, require_vault

    where = getattr(args, "vault_path", None) or "."
    if not getattr(args, "root", None) and not Path(where).exists():  # (not "not a vault")
        raise VaultkitError(f"{where}: no such file or folder")
    root = Path(args.root).resolve() if getattr(args, "root", None) else find_root(Path(where))
    if not root.is_dir():
        raise VaultkitError(f"{root}: not a folder")
    require_vault(root)
    return root, load_settings(root, getattr(args, "profile", None), use_cache=use_cache)


def vault_zone(settings):
    """The vault's time zone: ``timezone`` in vaultkit.toml, else the local zone."""
    name = settings.config.timezone
    if not name:
        return _dt.datetime.now().astimezone().tzinfo
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise VaultkitError(f"vaultkit.toml: timezone: unknown time zone {name!r} "
                            "(use an IANA name such as 'Asia/Shanghai')") from None


def today(settings) -> _dt.date:
    return _dt.datetime.now(vault_zone(settings)).date()

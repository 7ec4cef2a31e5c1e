"""Where the bundled rule packs and the starter vault live.

In a wheel they sit inside the package (``vaultkit/_data/``); in a source checkout
they are the top-level ``rules/`` and ``vault-template/`` folders.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent  # vaultkit/, above core/


def data_dir(name: str) -> Path:
    for candidate in (_PACKAGE / "_data" / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"vaultkit is missing its bundled '{name}' folder; reinstall it")


def rules_dir() -> Path:
    return data_dir("rules")


def template_dir() -> Path:
    return data_dir("vault-template")

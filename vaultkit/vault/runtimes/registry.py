"""Loader name (``loader:`` of a runtime in the profile) -> the module that simulates it.

A new runtime that loads like one of these is YAML only; one that loads differently is a
module of this package exposing ``load(request)`` and a line here (and the name in
:data:`vaultkit.vault.profile.RUNTIME_LOADERS`, which the profile validates against).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from vaultkit.core.plain import Frozen, Plain
from vaultkit.vault.runtimes import (
    claude_memory, context_md, entry_store, memory_summary, project_docs, workspace_set)
from vaultkit.vault.runtimes.base import Loader


class Registered(Frozen, Plain):
    """A runtime's loader and what it reads beside the vault's listing."""

    _fields = ("load", "outside")
    __hash__ = Plain.field_hash  # (frozen: a value, usable as a key)
    load: Loader
    # files the loader reads that the vault's listing does not hold (a cached result of
    # the rules that read contexts depends on them): (vault, spec) -> paths
    outside: Callable[..., list[Path]] | None

    def __init__(self, load, outside=None):
        _set = object.__setattr__
        _set(self, "load", load)
        _set(self, "outside", outside)


REGISTRY: dict[str, Registered] = {
    "workspace-set": Registered(workspace_set.load),
    "claude-memory": Registered(claude_memory.load, claude_memory.outside_paths),
    "project-docs": Registered(project_docs.load),
    "entry-store": Registered(entry_store.load),
    "memory-summary": Registered(memory_summary.load),
    "context-md": Registered(context_md.load, context_md.outside_paths),
}

"""The session floor: what outlives one call, one object per vault root.

:class:`~vaultkit.session.workspace.Workspace` owns a vault's settings, its warm listing
and its warm vault, and answers ``check(paths, selection, overlay)`` with the findings
``vaultkit check`` would print if the overlay's texts were saved. ``vaultkit server`` (the
editor's language server) and ``vaultkit mcp`` (its ``VaultSession``) are thin adapters on
it; it also keeps the search index and the deferred cache writes for them. It sits between ``vaultkit.cli`` and
``vaultkit.audit`` (docs/architecture.md).
"""

"""The session floor: what outlives one call, one object per vault root.

:class:`~vaultkit.session.workspace.Workspace` owns a vault's settings, its warm listing
and its warm vault, and answers ``check(paths, selection, overlay)`` with the findings
``vaultkit check`` would print if the overlay's texts were saved. ``vaultkit server`` (the
editor's language server), ``vaultkit mcp`` (its ``VaultSession``), the answering process of
``vaultkit watch`` and ``check --fix``/``--diff``'s plan are thin adapters on it; it also
keeps the search index, the snapshot objects read and the deferred cache writes for them.
It sits between ``vaultkit.cli`` and ``vaultkit.audit`` (docs/architecture.md); nothing
below it keeps state between calls (tests/test_process_state.py).
"""

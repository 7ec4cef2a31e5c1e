"""Shared low-level helpers: errors, atomic writes, path confinement, bounded reads, git's
environment, progress and the bundled data folders.

Nothing here imports from another vaultkit subpackage.
"""

"""Which vault a pre-commit hook acts on when the hook's folder is not in it.

pre-commit reads ``.pre-commit-config.yaml`` at the repository's top and runs every hook
from there, passing the names of the files a commit adds or changes, never of one it
deletes (pre-commit 4, ``git.get_staged_files``: ``--diff-filter=ACMRTUXB``). A vault in a
subfolder of a bigger repository (``monorepo/memory-vault/``) is below that folder, so a
hook finds it from the files it is given, from the files the commit deletes, or from the
folder its ``args`` name; a commit that changes nothing in the vault is none of its
business (the vault's committed text stays as it was: nothing in it can be lost).
"""

from __future__ import annotations

import os
from pathlib import Path


def holds(root, folder) -> bool:
    """True when ``folder`` is ``root`` or lies below it (both resolved)."""
    root, folder = str(Path(root).resolve()), str(Path(folder).resolve())
    return folder == root or folder.startswith(root.rstrip(os.sep) + os.sep)


def _staged_names(*options: str) -> list[str] | None:
    """Names the index being committed changes against HEAD (``git diff --cached``), or None
    when git cannot say (no git, not a repository)."""
    from vaultkit.core.gitenv import run_git

    try:
        proc = run_git(["diff", "--cached", "--name-only", "-z", "--no-renames", *options],
                       timeout=120)
    except (FileNotFoundError, OSError):
        return None
    if proc.returncode not in (0, 1):
        return None
    return [os.fsdecode(n) for n in proc.stdout.split(b"\0") if n]


def deleted_vaults() -> list[Path]:
    """The vaults of the files the commit being made deletes, in order of the names: those
    with ``vaultkit.toml`` or ``.obsidian/`` (what ``vaultkit init`` writes). A folder that is
    a vault only by a bootstrap file or a ``memory/`` folder is not one here: a package of a
    monorepo with its own ``AGENTS.md`` is no vault because a file in it was deleted (no
    ``files:`` pattern narrows these names, as it narrows the ones pre-commit passes)."""
    from vaultkit.vault.scan import NotAVault, find_root, has_strong_marker

    found: list[Path] = []
    # (--relative: the names from the current folder, which pre-commit's is the top)
    for name in _staged_names("--diff-filter=D", "--relative") or ():
        folder = Path(name).parent
        while not folder.is_dir() and folder != folder.parent:  # (its folder may be gone too)
            folder = folder.parent
        try:
            root = find_root(folder)
        except NotAVault:
            continue
        if root not in found and has_strong_marker(root):
            found.append(root)
    return found


def commit_leaves_alone(root) -> bool:
    """True when a ``git commit`` runs this hook (git sets ``GIT_INDEX_FILE`` for it) from a
    folder outside the vault at ``root``, and the commit changes nothing below ``root``:
    the hook then does nothing and says nothing."""
    if not os.environ.get("GIT_INDEX_FILE") or holds(root, Path.cwd()):
        return False
    names = _staged_names("--", str(Path(root).resolve()))
    return names is not None and not names


def leaves_named_vault_alone(path, root=None) -> bool:
    """A hook given its vault in ``args`` (``PATH``, or ``--root``): True when a ``git
    commit`` runs it and the commit changes nothing in that vault (:func:`commit_leaves_alone`);
    then nothing is written into that commit, nothing said."""
    if not os.environ.get("GIT_INDEX_FILE") or (not root and str(path) == "."):
        return False  # (no commit is being made; the current folder's vault holds the hook)
    from vaultkit.vault.scan import NotAVault, find_root

    try:
        vault = Path(root) if root else find_root(Path(path))
    except (NotAVault, OSError):
        return False  # (opening the vault says what is wrong)
    return vault.is_dir() and commit_leaves_alone(vault)

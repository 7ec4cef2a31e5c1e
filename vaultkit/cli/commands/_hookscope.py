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


def deleted_names() -> list[str]:
    """The names the commit being made deletes, from the current folder (pre-commit's is
    the repository's top); renames count as deletions (``--no-renames``)."""
    return _staged_names("--diff-filter=D", "--relative") or []


def deleted_vaults(names: list[str]) -> list[Path]:
    """The vaults of the files the commit being made deletes (``names``, from
    :func:`deleted_names`), in order of the names: those
    with ``vaultkit.toml`` or ``.obsidian/`` (what ``vaultkit init`` writes). A folder that is
    a vault only by a bootstrap file or a ``memory/`` folder is not one here: a package of a
    monorepo with its own ``AGENTS.md`` is no vault because a file in it was deleted (no
    ``files:`` pattern narrows these names, as it narrows the ones pre-commit passes)."""
    from vaultkit.vault.scan import NotAVault, find_root, has_strong_marker

    found: list[Path] = []
    for name in names:
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
    commit`` runs it and the commit changes nothing in that vault (:func:`commit_leaves_alone`),
    or deletes that vault whole (:func:`gone_vaults`: the check hook refuses or, accepted,
    lets that commit through; no index or colours are left to write); then nothing is
    written into that commit, nothing said."""
    if not os.environ.get("GIT_INDEX_FILE") or (not root and str(path) == "."):
        return False  # (no commit is being made; the current folder's vault holds the hook)
    from vaultkit.vault.scan import NotAVault, find_root, has_notes, is_vault

    try:
        vault = Path(root) if root else find_root(Path(path))
    except (NotAVault, OSError):
        vault = None
    if vault is None or not vault.is_dir() or not (is_vault(vault) or has_notes(vault)):
        named = os.path.relpath(Path(root or path).resolve())
        return any(g.folder == named for g in gone_vaults(deleted_names()))
    return vault.is_dir() and commit_leaves_alone(vault)


class GoneVault:
    """A vault the commit being made deletes whole: its folder is gone from the work tree and
    the commit deletes the marker ``vaultkit init`` wrote there."""

    def __init__(self, folder: str, marker: str, files: int, notes: int) -> None:
        self.folder = folder  # from the current folder, as git names it ("agent/vault")
        self.marker = marker  # "vaultkit.toml", or ".obsidian" (its settings folder)
        self.files = files  # files the commit deletes below the folder
        self.notes = notes  # of them, Markdown notes


def gone_vaults(names: list[str]) -> list[GoneVault]:
    """The vaults ``names`` (:func:`deleted_names`) delete whole (``git rm -r agent/vault``,
    or the folder removed and ``git add -A``): a folder that is no vault in the work tree any
    more (gone, or left with untracked files only) whose ``vaultkit.toml`` or ``.obsidian/``
    the commit deletes, not moved elsewhere (asked of git with rename detection only when
    there is such a folder, which is rare)."""
    from vaultkit.vault.scan import is_vault

    candidates: dict[str, str] = {}
    for name in names:
        parts = name.split("/")
        if parts[-1] == "vaultkit.toml":
            folder, marker = "/".join(parts[:-1]), "vaultkit.toml"
        elif ".obsidian" in parts[:-1]:
            folder, marker = "/".join(parts[:parts.index(".obsidian")]), ".obsidian"
        else:
            continue
        if folder and candidates.get(folder) != "vaultkit.toml":
            candidates[folder] = marker
    # (a folder still a vault in the work tree is checked as one; what git does not track,
    # such as vaultkit's own cache folder, can keep a deleted vault's folder in place)
    candidates = {f: m for f, m in candidates.items() if not is_vault(Path(f))}
    if not candidates:
        return []
    moved = _renamed_from()
    gone = []
    for folder, marker in candidates.items():
        below = [n for n in names if n.startswith(folder + "/")]
        if any(n in moved for n in below if n.endswith("vaultkit.toml") or "/.obsidian/" in n):
            continue  # the vault moved (its marker is in the commit elsewhere)
        gone.append(GoneVault(folder, marker, len(below),
                              sum(n.lower().endswith(".md") for n in below)))
    return gone


def _renamed_from() -> set[str]:
    """The old names of the renames the commit being made stages (git's rename detection)."""
    from vaultkit.core.gitenv import run_git

    try:
        proc = run_git(["diff", "--cached", "--name-status", "-z", "-M", "--diff-filter=R",
                        "--relative"], timeout=120)
    except OSError:
        return set()
    if proc.returncode not in (0, 1):
        return set()
    fields = [os.fsdecode(f) for f in proc.stdout.split(b"\0")]
    # (each rename: its status "R<score>", the old name, the new name)
    return {fields[i + 1] for i in range(0, len(fields) - 2, 3) if fields[i].startswith("R")}

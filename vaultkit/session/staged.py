"""What a commit hook checks: the staged files as the index holds them (``check --hook``).

Apart from :mod:`vaultkit.session.workspace` so that a hook whose staged files are the work
tree's (the common case: pre-commit stashes unstaged changes first) imports none of it.
"""

from __future__ import annotations

import os


def staged_view(vault, targets: set[str]):
    """``(vault, targets)`` as a commit hook checks them (``check --hook``): what the commit
    will hold, which is the index, not the work tree. Each target the index holds with
    other bytes than the file's (a credential staged, then deleted from the file but not
    from the index; ``git add -p``) is the staged blob, parsed as a file is (byte-order
    mark, CRLF, not UTF-8: the same finding), so line numbers are the staged text's; a
    target the index does not hold (a staged deletion, an untracked file) is left out: the
    commit holds no such file. The git rules still find the work tree's text (the lines
    partial staging leaves there are not lost) with :meth:`Vault.work_tree_note`.

    One ``git ls-files`` (of the targets, or of the vault's whole index when they are many);
    blobs are read only for the targets that differ
    (``git cat-file``, none over ``budgets.max_file_bytes``). Left as they are: a vault
    git cannot read (no repository, no git), a conflicted or intent-to-add entry (no
    staged content yet), a symlink or submodule entry."""
    from vaultkit.core import gitenv
    from vaultkit.core.bounded import ReadRefused, read_regular
    from vaultkit.core.digests import blob_id

    wanted = sorted(p for p in targets if "\n" not in p)
    if not wanted:
        return vault, targets
    # (git matches each pathspec against each entry: past a few dozen paths, listing the
    # vault's whole index is faster; 3,000 paths of a 10,000-file index took a second)
    specs = ["--", *(f":(literal){p}" for p in wanted)] if len(wanted) <= 64 else []
    try:
        proc = gitenv.run_git(["ls-files", "-s", "-z", *specs], cwd=vault.root)
    except OSError:  # (git not installed, or not runnable: as before)
        return vault, targets
    if proc.returncode != 0:
        return vault, targets  # not in a repository: nothing is staged
    staged: dict[str, tuple[str, str]] = {}  # path -> (mode, blob) at stage 0
    conflicted: set[str] = set()
    for entry in proc.stdout.split(b"\0"):
        meta, tab, name = entry.partition(b"\t")
        parts = meta.split()
        if not tab or len(parts) != 3:
            continue
        path = os.path.normpath(os.fsdecode(name)).replace(os.sep, "/")
        if parts[2] != b"0":
            conflicted.add(path)
        else:
            staged[path] = (parts[0].decode("ascii"), parts[1].decode("ascii"))
    empty = blob_id(b"")  # an intent-to-add entry's (`git add -N`), or an empty file's
    intended = _intent_to_add(vault.root, [p for p in wanted if p not in conflicted
                                           and staged.get(p, ("", ""))[1] == empty])
    limit = vault.profile.budgets.max_file_bytes
    differ: dict[str, str] = {}
    present: list[str] = []  # of differ's paths, those whose blob is their text in LF
    kept = set(targets)
    for path in wanted:
        if path in conflicted or path in intended:
            continue
        if path not in staged:
            kept.discard(path)  # not in the commit (deleted from the index, or untracked)
            continue
        mode, oid = staged[path]
        if mode not in ("100644", "100755"):
            continue
        try:  # (the file's bytes, not its parse record: a copy can put its stat back)
            data = read_regular(os.path.join(vault.root, path), limit + 1)
        except (ReadRefused, OSError):
            data = None  # gone from the work tree (or no regular file): the commit has it
        if data is None or blob_id(data) != oid:
            differ[path] = oid
            # only a file whose staged blob is its text with LF for CRLF can be git's
            # end-of-line conversion; hash-object alone would also take an `ident` or
            # `working-tree-encoding` file as the blob, whose text is not the commit's
            if data is not None and b"\r\n" in data \
                    and blob_id(data.replace(b"\r\n", b"\n")) == oid:
                present.append(path)
    # bytes that differ only by git's end-of-line conversion (core.autocrlf, a `text`/`eol`
    # attribute: CRLF in the work tree, LF staged) are the commit's text: the work tree's
    for path in _same_as_staged(vault.root, differ, present) if present else ():
        del differ[path]
    if not differ:
        return vault, kept
    return _with_staged(vault, differ, limit), kept


def _same_as_staged(root, differ: dict[str, str], paths: list[str]) -> set[str]:
    """Which of ``paths`` (work-tree files whose staged blob ``differ[path]`` is their
    bytes with LF for each CRLF, nothing else) ``git add`` would stage as that blob: git's
    end-of-line conversion (``core.autocrlf``, the ``text``/``eol`` attributes;
    git-config(1), gitattributes(5)) turns the work tree's CRLF into the staged LF. Asked of ``git hash-object``, which
    converts a file by its path's attributes as ``git add`` does, from its bytes: not
    ``git diff``, which trusts the index's stat data and an assume-unchanged bit and would
    call a file unchanged that the commit holds otherwise. Filter drivers stay off
    (:mod:`vaultkit.core.gitenv`); end-of-line conversion is git's built-in. None when git
    cannot tell: each is then checked as staged."""
    from vaultkit.core import gitenv

    same: set[str] = set()
    for at in range(0, len(paths), _HASHED_AT_ONCE):
        part = paths[at:at + _HASHED_AT_ONCE]
        try:
            proc = gitenv.run_git(["hash-object", "--", *part], cwd=root)
        except OSError:
            return same
        oids = proc.stdout.decode("ascii", "replace").split()
        if proc.returncode != 0 or len(oids) != len(part):
            return same
        same.update(p for p, oid in zip(part, oids) if oid == differ[p])
    return same


_HASHED_AT_ONCE = 1000  # paths on one hash-object command line (well inside ARG_MAX)


def _intent_to_add(root, paths: list[str]) -> set[str]:
    """Which of ``paths`` (each staged with the empty blob's id) are intent-to-add entries
    (no staged content yet: the commit leaves them out) rather than an empty file staged
    (the commit holds it empty, whatever the work tree holds since). Only an intent-to-add
    entry is a file added between the index and the work tree (``git diff
    --diff-filter=A``); all of them when git cannot tell (as before)."""
    if not paths:
        return set()
    from vaultkit.core import gitenv

    try:
        proc = gitenv.run_git(["diff", "--name-only", "-z", "--relative", "--no-renames",
                               "--diff-filter=A", "--", *(f":(literal){p}" for p in paths)],
                              cwd=root)
    except OSError:
        return set(paths)
    if proc.returncode != 0:
        return set(paths)
    return {os.path.normpath(os.fsdecode(name)).replace(os.sep, "/")
            for name in proc.stdout.split(b"\0") if name}


def _with_staged(vault, differ: dict[str, str], limit: int):
    """``vault`` with the notes at ``differ``'s paths parsed from their staged blobs."""
    from vaultkit.core import gitenv
    from vaultkit.core.digests import blob_id
    from vaultkit.session.workspace import _with_changed
    from vaultkit.vault.gitstate import _parse_batch
    from vaultkit.vault.loader import oversize_error
    from vaultkit.vault.model import Note
    from vaultkit.vault.parse import parse_note

    sizes: dict[str, int] = {}
    check = gitenv.run_git(["cat-file", "--batch-check"],
                           input="".join(o + "\n" for o in set(differ.values())).encode(),
                           cwd=vault.root)
    for line in check.stdout.decode("ascii", "replace").splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] == "blob" and parts[2].isdigit():
            sizes[parts[0]] = int(parts[2])
    readable = sorted({o for o in differ.values() if sizes.get(o, limit + 1) <= limit})
    blobs = {blob_id(b""): b""}  # (known without the object store)
    blobs.update(_parse_batch(gitenv.run_git(
        ["cat-file", "--batch"], input="".join(o + "\n" for o in readable).encode(),
        cwd=vault.root).stdout) if readable else {})
    changed = {}
    for path, oid in differ.items():
        old = vault.note(path)
        mtime = old.mtime_ns if old is not None else 0
        data = blobs.get(oid)
        if data is None:  # over the size limit (or gone from the store): as a file over it
            size = sizes.get(oid, 0)
            changed[path] = Note(path=path, size=size, mtime_ns=mtime, error=oversize_error(
                size, limit) if size > limit else "its staged blob cannot be read")
        else:
            changed[path] = parse_note(path, data, size=len(data), mtime_ns=mtime)
    copy = _with_changed(vault, changed)
    copy.__dict__["_work_tree"] = {p: vault.note(p) for p in changed}
    return copy

"""``vaultkit index``: generate memory/INDEX.md."""

from __future__ import annotations

import sys

from vaultkit.cli import add_vault_arguments

HELP = "generate memory/INDEX.md (the agent's entry point)"
DESCRIPTION = (
    "Write memory/INDEX.md between <!-- vaultkit:index:start --> and "
    "<!-- vaultkit:index:end -->; text outside the markers is kept byte for byte. "
    "With --check, write nothing, print the diff and exit 1 when the index is stale. With "
    "--stage (the pre-commit hook), also `git add` the file when it was rewritten during a "
    "`git commit`, so the commit that made it stale carries the fresh index and goes through "
    "in one run; outside a commit (`pre-commit run --all-files`, pre-commit.ci) it is only "
    "written."
)


def add_arguments(p) -> None:
    p.add_argument("path", nargs="?", default=".", metavar="PATH",
                   help="the vault or a folder inside it (default: here)")
    add_vault_arguments(p)
    p.add_argument("--check", action="store_true",
                   help="write nothing; print the diff and exit 1 when INDEX.md is stale")
    p.add_argument("--stage", action="store_true",
                   help="when INDEX.md was rewritten during a `git commit` (git's pre-commit "
                        "hook), also stage it (git add) for that commit: the hook's mode")


def run(args) -> int:
    import difflib

    from vaultkit.cli.commands._common import open_vault
    from vaultkit.links.indexgen import index_path, render_index, write_index

    from vaultkit.vault.scan import display_path

    from vaultkit.core import progress

    if args.stage and args.check:
        from vaultkit.core.errors import VaultkitError

        raise VaultkitError("--stage and --check contradict each other (--check writes nothing)")
    progress.allow(True)  # (stderr on a terminal only; the diff of --check is on stdout)
    if args.stage and (args.root or args.path != "."):  # (the vault named in `args`)
        from vaultkit.cli.commands._hookscope import leaves_named_vault_alone

        if leaves_named_vault_alone(args.path, args.root):  # (a vault in a subfolder)
            return 0
    vault = open_vault(args, args.path)
    path = index_path(vault)
    shown = display_path(vault.root / path)  # as ruff prints paths: from the current folder
    if args.check:
        new = render_index(vault)
        _report_left_out(vault)
        note = vault.notes.get(path)
        old = note.text if note is not None else None
        if old == new:
            print(f"{shown} is up to date.", file=sys.stderr)
            return 0
        diff = difflib.unified_diff(
            [] if old is None else old.splitlines(keepends=True), new.splitlines(keepends=True),
            fromfile="/dev/null" if old is None else f"a/{path}", tofile=f"b/{path}")
        sys.stdout.write("".join(diff))
        print(f"{shown} is stale; run `vaultkit index`.", file=sys.stderr)
        return 1
    if args.stage and _stashed_by_pre_commit(vault.root / path):
        # pre-commit put the user's own unstaged INDEX.md aside and restores it after the
        # hooks; a staged rewrite would make that restore fail: say what to do instead
        print(f"vaultkit: {shown} has changes that are not staged; stage them "
              f"(`git add {shown}`, or `vaultkit index && git add {shown}`) and commit again",
              file=sys.stderr)
        return 1
    changed = write_index(vault)
    _report_left_out(vault)
    print(f"{'Wrote' if changed else 'Unchanged:'} {shown}", file=sys.stderr)
    if args.stage and changed:
        import os

        if not os.environ.get("GIT_INDEX_FILE"):
            # no commit is being made (`pre-commit run --all-files`, pre-commit.ci, by hand):
            # leave the rewrite unstaged, so pre-commit reports the file as changed and
            # pre-commit.ci commits it as its autofix
            print(f"vaultkit: {shown} rewritten, not staged: no commit is being made",
                  file=sys.stderr)
            return 0
        return _stage(vault.root / path, shown)
    return 0


def _stage(file, shown: str) -> int:
    """``git add`` the rewritten index into the commit being made.

    pre-commit judges a hook by the unstaged diff (``git diff``) before and after it: a
    file the hook writes and stages leaves that diff as it was, so the commit goes on, and
    git reads the index again after its pre-commit hook, so the fresh INDEX.md is in the
    commit. git runs from the current folder (pre-commit's is the repository's top), so a
    relative ``GIT_INDEX_FILE`` that ``git commit`` sets (a partial commit's temporary
    index) is the one written.
    """
    from vaultkit.core.gitenv import run_git

    try:
        proc = run_git(["add", "--", str(file)], text=True, timeout=120)
    except FileNotFoundError:
        print(f"vaultkit: warning: {shown}: written, not staged: git is not installed",
              file=sys.stderr)
        return 1
    if proc.returncode != 0:
        reason = (proc.stderr.strip().splitlines() or ["git add failed"])[-1]
        print(f"vaultkit: warning: {shown}: written, not staged ({reason}); "
              f"`git add {shown}` and commit again", file=sys.stderr)
        return 1
    print(f"Staged {shown}", file=sys.stderr)
    return 0


def _report_left_out(vault) -> None:
    """Notes the index leaves out because no link to their file name would resolve."""
    for path in getattr(vault, "index_left_out", ()):
        print(f"vaultkit: warning: {path!r}: left out of the index: no link to this file "
              "name resolves in Obsidian's syntax (it holds '#', '|', '[[' or a line break, "
              "or starts with a space); rename the file", file=sys.stderr)


def _stashed_by_pre_commit(file) -> bool:
    """True when pre-commit, which runs this hook, set aside unstaged changes of ``file``.

    With unstaged changes, pre-commit writes them to ``patch<time>-<its pid>`` in its
    home folder, checks out the staged content, runs the hooks and applies the patch
    again (pre-commit 3 and 4, staged_files_only.py). A hook that stages its own version
    of a file in that patch makes the patch fail to apply, so this hook must not.
    """
    import os
    from pathlib import Path

    if not os.environ.get("PRE_COMMIT"):  # pre-commit sets it for every hook it runs
        return False
    home = os.environ.get("PRE_COMMIT_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "pre-commit")
    try:
        patches = [p for p in Path(home).glob(f"patch*-{os.getppid()}") if p.is_file()]
    except OSError:
        return False
    target = os.path.realpath(file)
    for patch in patches:
        try:
            with open(patch, "rb") as fh:
                headers = [line for line in fh if line.startswith(b"diff --git ")]
        except OSError:
            continue
        for header in headers:  # diff --git a/PATH b/PATH, from the repository's top (cwd)
            name = header.rstrip(b"\n").rsplit(b" b/", 1)[-1].decode("utf-8", "replace")
            if os.path.realpath(name) == target:
                return True
    return False

import fnmatch
import os
import re

from vaultkit.vault.gitstate import content_lines
from vaultkit.lint.rule import Rule
from vaultkit.vault.scan import SKIP_DIRS

# the memory tree's topic notes (memory/homelab.md, memory/research/*.md) and dated topic
# notes hold memory as much as a decision does
_LAYERS = ("bootstrap", "structured", "knowledge", "topics", "dated")


class MassDeletion(Rule):
    """
    ## What it does
    Reports a memory file — a bootstrap file (`MEMORY.md`, `AGENTS.md`, …), a structured
    note (decisions, lessons, people, projects, preferences), a knowledge note, or a
    topic note of the memory tree (`memory/homelab.md`, `memory/research/…`, the agent's
    dated `memory/2026-03-22-weekly-review.md`) — that
    lost the profile's share of its non-blank lines or more against HEAD (`git:
    mass_deletion_ratio`, 0.5: half), or was emptied, or was deleted. The new version is
    the staged one with `--staged` and in the pre-commit hook, otherwise the working
    tree's. `memory/INDEX.md` is excepted (it is generated), and so are the files the
    profile lists as rewritten or deleted by design (`git: mass_deletion_exempt`:
    `NOW.md`, the status board refreshed every heartbeat, and `BOOTSTRAP.md`, the
    runtime's one-time first-run ritual). A renamed file is compared with its old
    version; a file moved out of the vault or into an excluded folder (`.trash/`)
    counts as deleted. Journals have their own, stricter rule (`journal-append-only`).

    An intended cut or deletion is accepted for one commit by naming the file in the
    environment variable `VAULTKIT_ACCEPT_DELETION` (comma-separated paths, as the finding
    shows them): `VAULTKIT_ACCEPT_DELETION=MEMORY.md git commit -m "distill"`. Every other
    hook and rule still runs, and the next commit is guarded again; `git commit
    --no-verify` would skip them all.

    ## Why is this bad?
    Agents write memory files with tools that replace the whole file. When a run
    writes back only part of what it read, the rest is gone, and nobody notices until
    the agent has forgotten it. Curated files shrink slowly and on purpose; a file
    that halves in one commit almost always lost something.

    ## Example
    ```
    MEMORY.md:1:1: VK602 mass-deletion error: lost 12 of its 20 non-blank lines against HEAD (60%; the profile allows less than 50%); restore them from HEAD (git show HEAD:MEMORY.md), or accept this cut for one commit: VAULTKIT_ACCEPT_DELETION=MEMORY.md git commit …
    memory/decisions/pricing.md:1:1: VK602 mass-deletion error: deleted (it had 14 non-blank lines); restore it with `git checkout HEAD -- memory/decisions/pricing.md`, or accept this deletion for one commit: VAULTKIT_ACCEPT_DELETION=memory/decisions/pricing.md git commit …
    ```
    """

    name = "mass-deletion"
    code = "VK602"
    severity = "error"
    scope = "vault"
    cacheable = False  # depends on git history, not only on the files

    def check_vault(self, ctx):
        git = ctx.git
        changes = git.changes  # a failing `git diff` makes git unavailable too
        if not git.available:
            git.notice()
            return
        settings = ctx.profile.git
        ratio = settings.mass_deletion_ratio
        exempt = [re.compile(fnmatch.translate(p)) for p in settings.mass_deletion_exempt]
        vault = ctx.vault
        accepted = _accepted()
        for change in changes:
            old = change.old
            if old is None or change.status not in ("M", "T", "R", "D"):
                continue
            if git.layer_of(old) not in _LAYERS or not old.lower().endswith(".md"):
                continue
            if any(p.match(old.removeprefix("../")) for p in exempt):
                continue
            if accepted & {old, change.old_repo, change.new, change.new_repo}:
                continue  # VAULTKIT_ACCEPT_DELETION: an intended cut, for this commit
            gone = _gone(vault, change.new)
            if change.old_oid == change.new_oid and not gone:
                continue
            head = git.head_text(change)
            if head is None:
                continue
            before = content_lines(head)
            if before == 0:
                continue
            if gone:
                where = (f"moved to {change.new_repo}, where vaultkit does not look"
                         if change.new_repo is not None else "deleted")
                yield self.diag(old, None, None,
                                f"{where} (it had {before} non-blank line"
                                f"{'s' * (before != 1)}); restore it with `git checkout HEAD -- "
                                f"{change.old_repo}`, or accept this deletion for one "
                                f"commit: {_accept(old)} git commit …")
                continue
            new = git.new_text(change)
            if new is None:
                continue
            after = content_lines(new)
            path = change.new
            moved = f" (moved from {old})" if path != old else ""
            hint = (f"restore them from HEAD (git show HEAD:{change.old_repo}), or accept "
                    f"this cut for one commit: {_accept(path)} git commit …")
            if after == 0:
                yield self.diag(path, 1, 1, f"emptied{moved}: all {before} non-blank line"
                                f"{'s' * (before != 1)} of HEAD are gone; {hint}")
                continue
            lost = before - after
            if lost > 0 and lost >= ratio * before:
                yield self.diag(path, 1, 1,
                                f"lost {lost} of its {before} non-blank lines against HEAD"
                                f"{moved} ({lost * 100 // before}%; the profile allows less "
                                f"than {ratio * 100:g}%); {hint}")


ACCEPT_VARIABLE = "VAULTKIT_ACCEPT_DELETION"


def _accepted() -> set[str]:
    """The paths ``VAULTKIT_ACCEPT_DELETION`` names (comma-separated): cuts accepted for the
    commit being made."""
    value = os.environ.get(ACCEPT_VARIABLE, "")
    return {p.strip().removeprefix("./") for p in value.split(",") if p.strip()}


def _accept(path: str) -> str:
    import shlex

    return f"{ACCEPT_VARIABLE}={shlex.quote(path)}"


def _gone(vault, path: str | None) -> bool:
    """No longer a vault note: deleted, moved out of the vault, to .trash/ or an excluded path."""
    if path is None:
        return True
    if path.startswith("../"):
        return False
    if any(part in SKIP_DIRS for part in path.split("/")[:-1]):
        return True
    return vault.settings.is_excluded(path)


RULE = MassDeletion

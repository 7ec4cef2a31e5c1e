import fnmatch
import re
from collections import Counter

from vaultkit.core.plain import replace
from vaultkit.vault.gitstate import content_lines
from vaultkit.vault.loss import prune_allowance, prune_setting
from vaultkit.lint.rule import Rule
from vaultkit.lint.shared import accept_deletion as _accept
from vaultkit.lint.shared import accepted_deletions as _accepted
from vaultkit.lint.shared import untracked_kept as _kept
from vaultkit.lint.shared import accepted_removals, accepting
from vaultkit.vault.scan import in_skipped_folder

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
    counts as deleted; one taken out of git with its file kept (`git rm --cached`) is
    told to be tracked again with `git add` (the file keeps every line, and `git checkout
    HEAD --` would overwrite those written since). A vault in a subfolder of the
    repository deleted whole (`git rm -r agent/vault`: no vault is left to open) is
    reported by the hook on its `vaultkit.toml`, accepted by naming the folder in
    `VAULTKIT_ACCEPT_DELETION`. Journals have their own, stricter rule (`journal-append-only`).
    Lines that went into another Markdown file of the same change are moved, not lost
    (the model of loss, docs/snapshots.md): a distillation of `MEMORY.md` into a topic
    note passes however much of it moved, and so does an edit of a line (a typo fixed).

    `MEMORY.md` is curated, and pruning stale lines is part of distillation, so it has its
    own measure, the pruning allowance (`git: memory_md_prune_ratio`, 0.25: a quarter of
    its durable non-blank lines, rounded down; OpenClaw's own guard on a dreaming rewrite,
    `plugins.entries.memory-core.config.dreaming.phases.deep.maxPriorEntryLossFraction` in
    `openclaw.json`, is read when it is set and `vaultkit.toml` does not set the ratio):
    a cut that drops at most that many durable lines not moved into another note passes
    (`vaultkit history` lists it as pruned); one that drops more is reported, naming the
    first lines dropped. Emptying or deleting it is reported as for any memory file.

    Between commits it compares with vaultkit's snapshots too (`vaultkit snapshot`,
    `vaultkit watch`; docs/snapshots.md): a file that lost the same share against any
    snapshot the chain keeps is reported, naming the snapshot, even when it was never
    committed (a topic note written in the morning and cut in the evening). Which lines
    count is decided by content and ancestry, as for `journal-append-only`, never by when
    HEAD was committed: a line a commit reachable from HEAD or a local ref holds in that
    file is not cut. A commit that does not stage that file seals nothing: it passes, with
    a warning.

    An intended cut or deletion is accepted by naming the file in the environment
    variable `VAULTKIT_ACCEPT_DELETION` (comma-separated paths, as the finding shows
    them): `VAULTKIT_ACCEPT_DELETION=MEMORY.md git commit -m "distill"`. Every other hook
    and rule still runs; `git commit --no-verify` would skip them all. A cut against HEAD
    is in git's history once committed; a cut of lines only snapshots held is recorded
    when the commit's check passes (the lines' digests, `.vaultkit/accepted-removals.json`),
    so the next commit of that file is not refused for the same lines again, while lines
    lost after it still are.

    ## Why is this bad?
    Agents write memory files with tools that replace the whole file. When a run
    writes back only part of what it read, the rest is gone, and nobody notices until
    the agent has forgotten it. Curated files shrink slowly and on purpose; a file
    that halves in one commit almost always lost something, and a `MEMORY.md` that loses
    more than a quarter of its durable lines in one consolidation rewrite lost more than
    stale lines.

    ## Example
    ```
    MEMORY.md:1:1: VK602 mass-deletion error: dropped 8 of its 20 durable lines against HEAD, not moved into another note ("- Ana owns billing", "- Staging deploys need a ticket", "- Backups run at 02:00" and 5 more); the pruning allowance is 5 lines (25% of them, the openclaw profile's git: memory_md_prune_ratio; no openclaw.json sets OpenClaw's maxPriorEntryLossFraction); restore them from HEAD (git show HEAD:MEMORY.md), or accept this cut for one commit: VAULTKIT_ACCEPT_DELETION=MEMORY.md git commit …
    memory/semantic/pricing.md:1:1: VK602 mass-deletion error: lost 12 of its 20 non-blank lines against HEAD (60%; the profile allows less than 50%); restore them from HEAD (git show HEAD:memory/semantic/pricing.md), or accept this cut for one commit: VAULTKIT_ACCEPT_DELETION=memory/semantic/pricing.md git commit …
    memory/decisions/pricing.md:1:1: VK602 mass-deletion error: deleted (it had 14 non-blank lines); restore it with `git checkout HEAD -- memory/decisions/pricing.md`, or accept this deletion for one commit: VAULTKIT_ACCEPT_DELETION=memory/decisions/pricing.md git commit …
    memory/semantic/deploys.md:1:1: VK602 mass-deletion error: lost 9 of its 12 non-blank lines since the snapshot at 18:00 (snapshot 3f9c2a7b1e; 75%; the profile allows less than 50%); bring them back with `vaultkit recover --all` (`vaultkit history` lists the cut), or accept this removal: VAULTKIT_ACCEPT_DELETION=memory/semantic/deploys.md git commit …
    ```
    """

    name = "mass-deletion"
    code = "VK602"
    severity = "error"
    scope = "vault"

    def asks_git(self, ctx):
        yield ctx.git.prefetch_diff

    def check_vault(self, ctx):
        git = ctx.git
        changes = git.changes  # a failing `git diff` makes git unavailable too
        reported: set[str] = set()
        if not git.available:
            git.notice()
        else:
            for diag in self._against_head(ctx, git, changes):
                reported.add(diag.path)
                yield diag
        yield from self._against_snapshots(ctx, git, reported)

    def _against_snapshots(self, ctx, git, reported):
        """Files cut past the share since a snapshot taken after the last commit."""
        import sys

        from vaultkit.core.errors import VaultkitError
        snaps = ctx.snapshots  # (the snapshot store: no key lists it)
        clock, current_blobs, open_store, recorded_texts = (
            snaps.clock, snaps.current_blobs, snaps.open_store, snaps.recorded_texts)

        vault = ctx.vault
        settings = ctx.profile.git
        ratio = settings.mass_deletion_ratio
        prune = prune_setting(vault.settings, vault)
        exempt = [re.compile(fnmatch.translate(p)) for p in settings.mass_deletion_exempt]
        memory_md = "MEMORY.md" if ctx.profile.memory_prefix else "../MEMORY.md"
        accepted = _accepted()

        def wanted(path: str) -> bool:
            return (path not in reported
                    and path.lower().endswith(".md")
                    and git.layer_of(path) in _LAYERS
                    and not any(p.match(path.removeprefix("../")) for p in exempt))

        try:
            store = open_store(vault.root, vault.settings, git_state=git, blobs=ctx.blobs)
            if store is None:
                return
            # every snapshot the chain keeps, whenever HEAD was made: which lines count is
            # decided by content and ancestry (lines no commit holds: below), as the journal
            # rule decides, never by HEAD's committer time, which a pulled commit or a
            # clock ahead puts after the cut
            versions = recorded_texts(store, since=None, wanted=wanted,
                                      current=current_blobs(store, git, vault))
        except VaultkitError as exc:
            print(f"vaultkit: warning: snapshots not compared: {exc}", file=sys.stderr)
            return
        staged = git.available and git.staged
        # lines `vaultkit recover` put in the recovery note are no longer lost (the name is
        # vaultkit.memory.history's RECOVERY_NOTE, which this layer cannot import)
        kept = vault.note(vault.profile.memory_prefix + "semantic/recovered.md")
        recovered = Counter(kept.text.splitlines()) if kept is not None and not kept.error \
            else Counter()
        record = accepted_removals(vault)
        for path, texts in sorted(versions.items()):
            if staged:
                new = git.index_texts(path)
            else:
                note = vault.note(path) if not path.startswith("../") \
                    else vault.external.get(path)
                new = None if note is None or note.error else note.text
            if new is None:
                continue  # deleted or not staged: the HEAD comparison and history cover it
            if path in accepted:
                # VAULTKIT_ACCEPT_DELETION: a cut on purpose, recorded when the run passes
                # so that the next commit does not refuse it again
                if not staged or path in git.by_new_path:
                    accepting(ctx, path, _cut_lines(path, texts, new, git))
                continue
            mine = record.of(path)  # lines a cut accepted earlier: not lost
            if path == memory_md:
                # the curated layer: judged against its pruning allowance, not the ratio
                spare = recovered + (moved_into(git, path) if git.available else Counter())
                cut = _memory_md_cut(texts, new, spare, prune, clock, mine)
                if cut is not None and git.available and git.has_head:
                    cut = _memory_md_cut(texts, new, spare + _committed(git, path), prune,
                                         clock, mine)  # (git keeps what a commit holds)
            else:
                held = Counter(new.replace("\r\n", "\n").split("\n")) + recovered
                if git.available:  # lines moved into another note of this change: not lost
                    held += moved_into(git, path)
                cut = _cut_since(texts, content_lines(new), held, ratio, clock, mine)
                if cut is not None and git.available and git.has_head:
                    cut = _cut_since(texts, content_lines(new), held + _committed(git, path),
                                     ratio, clock, mine)
            if cut is None:
                continue
            if staged and path not in git.by_new_path:
                # this commit does not stage the file: it seals nothing, so it passes; the
                # cut stays listed (`vaultkit history`, the audit) until recovered
                yield replace(self.diag(path, 1, 1,
                                        f"{cut}; this commit does not stage it, so it passes: "
                                        "bring them back with `vaultkit recover --all` before "
                                        "it is committed"), severity="warning")
                continue
            yield self.diag(path, 1, 1,
                            f"{cut}; bring them back with `vaultkit recover --all` (`vaultkit "
                            "history` lists the cut), or accept this removal: "
                            f"{_accept(path)} git commit …")

    def _against_head(self, ctx, git, changes):
        settings = ctx.profile.git
        ratio = settings.mass_deletion_ratio
        exempt = [re.compile(fnmatch.translate(p)) for p in settings.mass_deletion_exempt]
        vault = ctx.vault
        accepted = _accepted()
        memory_md = "MEMORY.md" if ctx.profile.memory_prefix else "../MEMORY.md"
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
                lines = f"{before} non-blank line{'s' * (before != 1)}"
                if change.new_repo is None and _kept(ctx.vault, git, change):
                    yield self.diag(old, None, None,
                                    f"taken out of git with the file kept (`git rm --cached`; "
                                    f"it has {lines} in HEAD): the commit drops it from the "
                                    "repository, which then no longer keeps it; track it again "
                                    f"with `git add {change.old_repo}` (the file stays as it "
                                    f"is), or accept this deletion for one commit: "
                                    f"{_accept(old)} git commit …")
                    continue
                where = (f"moved to {change.new_repo}, where vaultkit does not look"
                         if change.new_repo is not None else "deleted")
                yield self.diag(old, None, None,
                                f"{where} (it had {lines}); restore it with `git checkout HEAD -- "
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
                if not _mostly_moved(head, new, moved_into(git, path), 1):
                    yield self.diag(path, 1, 1, f"emptied{moved}: all {before} non-blank "
                                    f"line{'s' * (before != 1)} of HEAD are gone; {hint}")
                continue
            if old == memory_md and path == old:
                # MEMORY.md is curated: a cut within the pruning allowance is distillation
                prune = prune_setting(vault.settings, vault)
                dropped = _dropped(head, new, moved_into(git, path))
                if len(dropped) > prune_allowance(before, prune[0]):
                    yield self.diag(path, 1, 1, _pruned_past(dropped, before, prune,
                                                             "against HEAD") + "; " + hint)
                continue
            lost = before - after
            if lost > 0 and lost >= ratio * before and \
                    not _mostly_moved(head, new, moved_into(git, path), ratio * before):
                yield self.diag(path, 1, 1,
                                f"lost {lost} of its {before} non-blank lines against HEAD"
                                f"{moved} ({lost * 100 // before}%; the profile allows less "
                                f"than {ratio * 100:g}%); {hint}")


def _committed(git, path: str) -> Counter:
    """The lines a commit reachable from HEAD or a local ref holds in ``path``
    (:meth:`GitState.lines_committed`), as counts no cut can exhaust: git keeps them, so
    a snapshot is not their only copy. Asked only when a cut is about to be reported."""
    return Counter(dict.fromkeys(git.lines_committed(path), 1 << 30))


def _cut_lines(path: str, texts, new: str, git) -> list[str]:
    """The lines a cut accepted on purpose took out of ``path``: those of its snapshot
    versions that ``new`` lost and no commit holds (git keeps those)."""
    from vaultkit.vault.loss import judge

    out: list[str] = []
    seen: set = set()
    for _commit, _when, text in texts:
        for line in judge(text, new).lost:
            if line.strip() and line not in seen:
                seen.add(line)
                out.append(line)
    if out and git.available and git.has_head:
        committed = git.lines_committed(path)
        out = [line for line in out if line not in committed]
    return out


def _memory_md_cut(texts, new: str, spare: Counter, prune, clock,
                   accepted=None) -> str | None:
    """What MEMORY.md dropped past its pruning allowance since a snapshot, in a phrase (the
    snapshot that shows the largest cut); None when none does. ``accepted``: lines a cut
    accepted earlier (:class:`~vaultkit.vault.loss.Accepted`), not dropped."""
    worst = None
    for commit, when, text in texts:
        before = content_lines(text)
        dropped = _dropped(text, new, spare, accepted)
        if before and len(dropped) > prune_allowance(before, prune[0]) and \
                (worst is None or len(dropped) >= len(worst[0])):
            worst = (dropped, before, commit, when)
    if worst is None:
        return None
    dropped, before, commit, when = worst
    return _pruned_past(dropped, before, prune,
                        f"since the snapshot at {clock(when)} (snapshot {commit[:10]})")


def _cut_since(texts, after: int, held: Counter, ratio: float, clock,
               accepted=None) -> str | None:
    """What a file other than MEMORY.md lost past ``ratio`` since a snapshot, in a
    phrase; None when no snapshot shows such a cut. ``accepted``: lines a cut accepted
    earlier (:class:`~vaultkit.vault.loss.Accepted`), not lost."""
    worst = None
    for commit, when, text in texts:
        lines = [line for line in text.replace("\r\n", "\n").split("\n") if line.strip()]
        before = len(lines)
        gone = Counter(lines) - held  # not here, not recovered
        if accepted:
            gone = Counter({line: n for line, n in gone.items() if line not in accepted})
        gone = sum(gone.values())
        lost = before - after
        if before and lost > 0 and gone >= ratio * before and \
                (after == 0 or lost >= ratio * before) and \
                (worst is None or lost >= worst[0]):
            worst = (lost, before, commit, when)
    if worst is None:
        return None
    lost, before, commit, when = worst
    return (f"lost {lost} of its {before} non-blank lines since the snapshot at "
            f"{clock(when)} (snapshot {commit[:10]}; {lost * 100 // before}%; the "
            f"profile allows less than {ratio * 100:g}%)")


def _dropped(old: str, new: str, elsewhere: Counter, accepted=None) -> list[str]:
    """The durable lines a cut of MEMORY.md from ``old`` to ``new`` dropped
    (:func:`vaultkit.vault.loss.judge`: an edit is kept, an accepted removal too), less
    those ``elsewhere`` holds (another note of the change, the recovery note)."""
    from vaultkit.vault.loss import judge

    spare = Counter(elsewhere)
    out = []
    for line in judge(old, new, accepted=accepted).lost:
        if not line.strip():
            continue
        if spare[line] > 0:
            spare[line] -= 1
        else:
            out.append(line)
    return out


def _pruned_past(dropped: list[str], before: int, prune: tuple[float, str],
                 since: str) -> str:
    """A MEMORY.md cut past its pruning allowance, in a phrase naming the first lines,
    the allowance and where its ratio comes from (:func:`vaultkit.vault.loss.prune_setting`)."""
    from vaultkit.vault.loss import quoted_lines

    ratio, source = prune
    allowed = prune_allowance(before, ratio)
    return (f"dropped {len(dropped)} of its {before} durable lines {since}, not moved into "
            f"another note ({quoted_lines(dropped)}); the pruning allowance is {allowed} "
            f"line{'s' * (allowed != 1)} ({ratio * 100:g}% of them, {source})")


def _gone(vault, path: str | None) -> bool:
    """No longer a vault note: deleted, moved out of the vault, to .trash/ or an excluded path."""
    if path is None:
        return True
    if path.startswith("../"):
        return False
    if in_skipped_folder(path):
        return True
    return vault.settings.is_excluded(path)


RULE = MassDeletion


def moved_into(git, path: str) -> Counter:
    """The lines the other Markdown files of this change hold (staged, in the hook; in the
    work tree, notes git does not track yet too): a cut whose lines went there was moved,
    not lost (docs/snapshots.md, the model of
    loss). Read once per run, and only when a cut is about to be reported."""
    every = git.__dict__.get("_moved_lines")
    if every is None:
        every = {}
        for change in git.changes:
            if change.new is None or not change.new.lower().endswith(".md") \
                    or change.old_oid == change.new_oid:
                continue
            text = git.new_text(change)
            if text is not None:
                every[change.new] = Counter(text.replace("\r\n", "\n").split("\n"))
        if not git.staged:
            # a note not yet added to git (`vaultkit archive MEMORY.md:N` writes one) is
            # not in the work tree's diff, but it is where the lines went; the hook sees
            # it once it is staged with the cut
            tracked = git.index_oids
            notes = git.vault.notes
            for path in notes:
                if path not in tracked and path not in every and path.lower().endswith(".md") \
                        and not (note := notes[path]).error:
                    every[path] = Counter(note.text.replace("\r\n", "\n").split("\n"))
        git.__dict__["_moved_lines"] = every
    out: Counter = Counter()
    for other, lines in every.items():
        if other != path:
            out += lines
    return out


def _mostly_moved(old: str, new: str, elsewhere: Counter, limit: float) -> bool:
    """True when fewer than ``limit`` of the lines ``old`` lost in ``new`` (as
    :func:`vaultkit.vault.loss.judge` judges them) are missing from ``elsewhere`` too."""
    from vaultkit.vault.loss import judge

    gone = Counter(line for line in judge(old, new).lost if line.strip()) - elsewhere
    return sum(gone.values()) < limit


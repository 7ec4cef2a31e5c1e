import sys

from vaultkit.core.errors import VaultkitError
from vaultkit.core.plain import replace
from vaultkit.vault.gitstate import first_change, split_lines
from vaultkit.lint.rule import Rule
from vaultkit.lint.shared import (accept_deletion, accepted_deletions, accepted_removals,
                                  accepting, untracked_kept)

_KEEP_LAYERS = ("journal", "archive")


def _quote(line: str, width: int = 60) -> str:
    line = line.strip()
    return repr(line if len(line) <= width else line[:width - 1] + "…")


class JournalAppendOnly(Rule):
    """
    ## What it does
    Reports a journal (`memory/YYYY-MM-DD.md`) that lost committed lines: a line of
    HEAD's version whose content is gone from the new version (cut, or written over by
    other text), or the journal deleted or moved anywhere but `memory/archive/`. It
    points at where the first lost line stood. The new version is the staged one with
    `--staged` and in the pre-commit hook, otherwise the working tree's.

    The lines are judged by the model of loss (docs/snapshots.md), the one judgement the
    hook, `watch`, `recover` and `history` share. An **edit** of a committed line is not
    a loss and passes: the new line keeps at least 0.6 of the old one's characters (a
    typo fixed, a wrong number or time corrected, a clause added or reworded, a link's
    target rewritten when Obsidian renames a note); `vaultkit history` lists it as an
    edit. Nor is a line lost that moved within the journal, or that the work tree or a
    stash still holds (partial staging, `git stash`). A line cut down to a word or two,
    a block written over by fewer lines, or an entry written over by one of another time
    is a loss. Line endings do not count, and a missing final newline in HEAD is
    tolerated (text appended onto the last line is still an append). A journal moved
    into the archive (`vaultkit archive`, `git mv`) is not a deletion, as long as its
    lines are kept. A removal or deletion on purpose passes with
    `VAULTKIT_ACCEPT_DELETION=<journal> git commit …`. Outside a git repository, or
    before the first commit, there is no HEAD to compare with and the rule says once
    that it skipped. A committed line lost from the work tree too comes back with
    `vaultkit recover --all` (HEAD is the last known good version of each journal), and
    the finding names it; a journal moved, or gone from the work tree, is named with `git
    show HEAD:<journal>`. With `--hook` the staged text is what the commit holds and what
    the line numbers refer to.

    Between commits it compares with vaultkit's snapshots too (`vaultkit snapshot`,
    `vaultkit watch`; see docs/snapshots.md): a journal whose new text lacks lines that a
    snapshot held and that no commit holds in that file (HEAD's version, or any commit
    reachable from HEAD, a branch, a tag or a remote-tracking branch) is reported once,
    naming how many lines and the snapshot, whether or not the journal was ever
    committed. Which lines count is decided by content and ancestry, never by when HEAD
    was committed: a commit pulled from another machine or dated ahead of this clock
    leaves the lines only a snapshot holds guarded. The lines are judged by the
    model of loss (docs/snapshots.md): a line the work tree or a stash still holds is not
    lost (partial staging, `git stash`), nor is an edit of it (a typo fixed). A commit
    that does not stage the journal seals nothing: it passes, and the loss is a warning
    until `vaultkit recover --all` brings the lines back. A removal on purpose is accepted
    with `VAULTKIT_ACCEPT_DELETION`: a commit's check that passes with it records the
    lines accepted (their digests, in `.vaultkit/accepted-removals.json`), so later
    commits do not refuse the same removal again. A journal such a snapshot holds (with
    lines no commit holds) that is gone (not staged and not on disk: deleted, or moved
    out of the journal layer but not into the archive) is reported too, naming the
    snapshot that holds its only copy and `vaultkit recover`: before its first commit the
    snapshots are all there is. A journal deleted on purpose is accepted by naming it in
    `VAULTKIT_ACCEPT_DELETION`, as `mass-deletion` accepts a cut (recorded the same way),
    and `vaultkit snapshot --forget PATH` takes its versions out of the snapshots. A journal on disk but left out of a partial commit is not a deletion, nor
    is one moved into the archive with its lines. A journal taken out of git with its file
    kept (`git rm --cached`) is refused as a deletion (the repository would no longer keep
    it), told to be tracked again with `git add`: never `git checkout HEAD --`, which
    would overwrite the lines written since. This works before the first commit and
    in a folder without git.
    Without snapshots nothing changes.

    ## Why is this bad?
    The journal is the most complete record the agent has, and it is only ever
    appended to (`printf >> memory/YYYY-MM-DD.md`). A rewrite is how memory gets lost:
    one cron run that used Write instead of appending wiped twelve hours of entries.
    Catching it before the commit keeps the lost lines one `git show HEAD:...` away. A
    journal never committed is lost for good by the commit that stores its overwritten
    version, unless a snapshot kept the lines.

    ## Example
    ```
    memory/2026-02-13.md:4:1: VK601 journal-append-only error: line 4 differs from the committed journal (HEAD: '- Deployed v1.2 to production', staged: '- Deployed v1.3'): its content is gone, not edited; journals are append-only: bring the committed lines back with `vaultkit recover --all` (what was written since stays, after them; by hand: git show HEAD:memory/2026-02-13.md), then stage the journal again, or accept this removal: VAULTKIT_ACCEPT_DELETION=memory/2026-02-13.md git commit …
    memory/2026-02-14.md:1:1: VK601 journal-append-only error: journal deleted; journals are append-only: restore it with `git checkout HEAD -- memory/2026-02-14.md`, or accept this deletion: VAULTKIT_ACCEPT_DELETION=memory/2026-02-14.md git commit …
    memory/2026-02-15.md:1:1: VK601 journal-append-only error: 18 lines lost since the snapshot at 18:00 (snapshot 3f9c2a7b1e; first: '### 10:00 — Checkpoint 1') are only in that snapshot: not in the staged journal, the work tree or a stash; committing it would seal the loss: bring them back with `vaultkit recover --all` (once; `vaultkit history` lists them), then stage the journal again, or accept this removal: VAULTKIT_ACCEPT_DELETION=memory/2026-02-15.md git commit …
    memory/2026-02-16.md:1:1: VK601 journal-append-only error: journal deleted since the snapshot at 18:00 (snapshot 8d01c4e2aa), which holds its 12 lines (first: '### 10:00 — Checkpoint 1') and no commit does; committing now would seal the loss: bring it back with `vaultkit recover --all` (`vaultkit history` lists it), or accept this deletion: VAULTKIT_ACCEPT_DELETION=memory/2026-02-16.md git commit …, or take it out of the snapshots: `vaultkit snapshot --forget memory/2026-02-16.md`
    ```
    """

    name = "journal-append-only"
    code = "VK601"
    severity = "error"
    scope = "vault"

    def asks_git(self, ctx):
        from functools import partial

        yield ctx.git.prefetch_diff
        yield partial(ctx.snapshots.index_against_newest, ctx.vault, ctx.git)

    def check_vault(self, ctx):
        git = ctx.git
        changes = git.changes  # a failing `git diff` makes git unavailable too
        if not git.available:
            git.notice()
        else:
            yield from self._against_head(ctx, git, changes)
        yield from self._against_snapshots(ctx, git)

    def _against_snapshots(self, ctx, git):
        """Journals whose new text lacks lines a snapshot held and no commit holds, and
        journals such a snapshot held that are deleted."""
        import os
        from functools import partial

        snaps = ctx.snapshots  # (the snapshot store: no key lists it)
        clock, current_blobs, file_of, journal_losses, open_store = (
            snaps.clock, snaps.current_blobs, snaps.file_of, snaps.journal_losses,
            snaps.open_store)

        vault = ctx.vault
        staged = git.available and git.staged

        def text_of(path):
            if staged:
                text = git.index_texts(path)
                if text is not None:
                    return text
            note = vault.note(path) if not path.startswith("../") \
                else vault.external.get(path)
            return None if note is None or note.error else note.text

        def texts(path):
            text = git.index_texts(path) if staged else text_of(path)
            if text is None:  # moved into the archive (`vaultkit archive`): judge that copy
                name = path.rsplit("/", 1)[-1]
                for other, layer in vault.layers.items():
                    if layer == "archive" and other.rsplit("/", 1)[-1] == name:
                        return text_of(other)
            return text

        def present(path):  # not on the new side, but on disk: not staged, not deleted
            return os.path.lexists(file_of(vault.root, path))

        try:
            store = open_store(vault.root, vault.settings, git_state=git, blobs=ctx.blobs)
            if store is None:
                return
            # every snapshot the chain keeps, whenever HEAD was made: which lost lines
            # count is decided by content (below), not by HEAD's committer time, which a
            # pulled commit or a clock ahead puts after the loss. A journal the commit
            # leaves as HEAD has it seals nothing, yet a loss it holds is still told, as a
            # warning (the model of loss: listed until recovered)
            current = current_blobs(store, git, vault)
            losses = journal_losses(store, texts, since=None, present=present,
                                    is_journal=lambda p: git.layer_of(p) == "journal",
                                    current=current,
                                    prefetch=git.read_index_texts if staged else None,
                                    holders=partial(_holders, vault, git),
                                    accepted=accepted_removals(vault))
            if losses and git.available and git.has_head:
                losses = _not_committed(losses, git)
        except VaultkitError as exc:
            print(f"vaultkit: warning: snapshots not compared: {exc}", file=sys.stderr)
            return
        side = "staged" if staged else "current"
        accepted = accepted_deletions()
        for loss in losses:
            n = len(loss.lines)
            first = next((line for line in loss.lines if line.strip()), loss.lines[0])
            if loss.deleted:
                repo_path = git.repo_path(loss.path) if git.available else None
                if accepted & {loss.path, repo_path}:
                    accepting(ctx, loss.path, loss.lines)  # an intended deletion: kept
                    continue
                if git.available and git.committed_text(loss.path) is not None:
                    continue  # in HEAD: the HEAD comparison reports the deletion
                yield self.diag(loss.path, None, None,
                                f"journal deleted since the snapshot at {clock(loss.since)} "
                                f"({snapshot_short(loss.commit)}), which holds its {n} "
                                f"line{'s' * (n != 1)} (first: {_quote(first)}) and no commit "
                                "does; committing now would seal the loss: bring it back with "
                                "`vaultkit recover --all` (`vaultkit history` lists it), or "
                                "accept this deletion: "
                                f"{accept_deletion(loss.path)} git commit …, or take it out "
                                f"of the snapshots: `vaultkit snapshot --forget {loss.path}`")
                continue
            repo_path = git.repo_path(loss.path) if git.available else None
            if accepted & {loss.path, repo_path}:
                # VAULTKIT_ACCEPT_DELETION: a removal on purpose, recorded when the run
                # passes so that the next commit does not refuse it again
                if not staged or loss.path in git.by_new_path:
                    accepting(ctx, loss.path, loss.lines)
                continue
            where = (f"{n} line{'s' * (n != 1)} lost since the snapshot at {clock(loss.since)}"
                     f" ({snapshot_short(loss.commit)}; first: {_quote(first)}) "
                     f"{'is' if n == 1 else 'are'} only in that snapshot: not in the {side} "
                     "journal, the work tree or a stash")
            them = "it" if n == 1 else "them"
            if staged and loss.path not in git.by_new_path:
                # this commit does not stage the journal: it seals nothing, so it passes;
                # the loss stays listed (`vaultkit history`, the audit) until recovered
                yield replace(self.diag(loss.path, None, None,
                                        f"{where}; this commit does not stage it, so it "
                                        f"passes: bring {them} back with `vaultkit recover "
                                        "--all` before the journal is committed"),
                              severity="warning")
                continue
            yield self.diag(loss.path, None, None,
                            f"{where}; committing it would seal the loss: bring {them} back "
                            "with `vaultkit recover --all` (once; `vaultkit history` lists "
                            f"{them}), then stage the journal again, or accept this removal: "
                            f"{accept_deletion(loss.path)} git commit …")

    def _against_head(self, ctx, git, changes):
        side = "staged" if git.staged else "now"
        for change in changes:
            if change.old is None or git.layer_of(change.old) != "journal":
                continue
            if change.status not in ("M", "T", "R", "D"):
                continue
            head_ref = f"HEAD:{change.old_repo}"
            if change.status == "D" or change.new is None:
                old = git.head_text(change)
                if old is not None and any(first_change(old, text) is None
                                           for _, text in git.archived_copies(change)):
                    continue  # moved into the archive with its lines kept
                if old is not None and accepted_deletions() & {change.old, change.old_repo}:
                    accepting(ctx, change.old, split_lines(old)[0])  # deleted on purpose
                    continue
                if untracked_kept(ctx.vault, git, change):
                    yield self.diag(change.old, None, None,
                                    "journal taken out of git with the file kept (`git rm "
                                    "--cached`): the commit drops it from the repository, "
                                    "which then no longer keeps it; track it again with "
                                    f"`git add {change.old_repo}` (the file stays as it is), "
                                    f"or accept this deletion: {accept_deletion(change.old)} "
                                    "git commit …")
                    continue
                yield self.diag(change.old, None, None,
                                "journal deleted; journals are append-only: restore it with "
                                f"`git checkout HEAD -- {change.old_repo}`, or accept this "
                                f"deletion: {accept_deletion(change.old)} git commit …")
                continue
            if change.status == "R" and git.layer_of(change.new) not in _KEEP_LAYERS:
                yield self.diag(change.new, None, None,
                                f"journal {change.old} moved to {change.new}, out of the "
                                "journal and the archive; journals stay where they are or move "
                                f"into the archive (git mv {change.new_repo} "
                                f"{change.old_repo})")
                continue
            if change.old_oid == change.new_oid:
                continue
            old = git.head_text(change)
            new = git.new_text(change)
            if old is None or new is None:
                continue
            if first_change(old, new) is None:
                continue  # an append
            # the model of loss (vaultkit.vault.loss): a committed line edited (a typo
            # fixed, a number corrected) or moved is not lost, nor one the work tree or a
            # stash still holds; a line whose content is gone is
            from vaultkit.vault.loss import judge

            judged = judge(old, new, holders=lambda path=change.new: _holders(ctx.vault, git,
                                                                              path))
            lost = [line for line in judged.lost if line.strip()]
            if not lost:
                continue
            if accepted_deletions() & {change.old, change.new, change.old_repo,
                                       change.new_repo}:
                accepting(ctx, change.new, lost)  # VAULTKIT_ACCEPT_DELETION: on purpose
                continue
            line, was, now = first_lost(old, new, lost)
            n = len(lost)
            moved = f" (moved from {change.old})" if change.new != change.old else ""
            others = f"; {n} committed lines lost in all" if n > 1 else ""
            # `vaultkit recover --all` puts back what the work tree lost since HEAD
            # (vaultkit.memory.history.scan_work_tree_losses): the lines are lost there
            # too, else the work tree would hold them and this were no loss
            if change.new == change.old and ctx.vault.work_tree_note(change.new) is not None:
                back = ("bring the committed lines back with `vaultkit recover --all` (what "
                        f"was written since stays, after them; by hand: git show {head_ref})"
                        + (", then stage the journal again" if git.staged else ""))
            else:
                back = (f"restore the committed lines (git show {head_ref}) and add new text "
                        "at the end")
            hint = (f"journals are append-only: {back}, or accept this removal: "
                    f"{accept_deletion(change.new)} git commit …")
            if now is None:
                tail = len(split_lines(new)[0]) < line  # nothing after it: cut off the end
                yield self.diag(change.new, line, 1,
                                f"{n} committed line{'s' * (n != 1)} removed "
                                f"{'from' if tail else 'at'} line {line}{' on' * tail}{moved} "
                                f"(HEAD: {_quote(was)}); {hint}")
            else:
                yield self.diag(change.new, line, 1,
                                f"line {line} differs from the committed journal{moved} "
                                f"(HEAD: {_quote(was)}, {side}: {_quote(now)}): its content is "
                                f"gone, not edited{others}; {hint}")


def _holders(vault, git, path):
    """The texts beside the new version that hold ``path`` too: lines git moved on purpose
    are not lost (partial staging, `git add -p` or an older version staged, leaves them in
    the work tree; `git stash` in a stash)."""
    if git.available and git.staged:
        note = vault.work_tree_note(path)  # (the hook checks the staged text in its place)
        yield None if note is None or note.error else note.text
        yield git.unstaged_by_pre_commit(path)  # under pre-commit: what it took out for the run
    if git.available:
        yield from git.stash_texts(path)


def first_lost(old: str, new: str, lost: list[str]) -> tuple[int, str, str | None]:
    """``(line, old line, new line or None)``: where the first of the ``lost`` lines of
    ``old`` stood in ``new`` (line numbers of ``new``, from 1), by the line diff: the new
    line it was replaced by, or None where it was cut."""
    from collections import Counter
    from difflib import SequenceMatcher

    from vaultkit.vault.loss import same_text

    a, b = split_lines(old)[0], split_lines(new)[0]
    missing = Counter(lost)
    # (diffed by their text: a line a formatter only re-marked is where it was)
    texts = SequenceMatcher(None, [same_text(line) for line in a],
                            [same_text(line) for line in b], autojunk=False)
    for tag, i1, i2, j1, j2 in texts.get_opcodes():
        if tag not in ("replace", "delete"):
            continue
        for i in range(i1, i2):
            if missing[a[i]] > 0:
                if tag == "replace":
                    j = min(j1 + i - i1, j2 - 1)
                    return j + 1, a[i], b[j]
                return j1 + 1, a[i], None
    return 1, lost[0], None  # (not reached: a lost line is never paired as equal)


def _not_committed(losses, git):
    """The losses without the lines a commit reachable from HEAD or a local ref holds in
    that file (HEAD's version first of all): git keeps those, the snapshots are not their
    only copy (a journal committed elsewhere and pulled, a line edited in an earlier
    commit)."""
    kept = []
    for loss in losses:
        committed = git.lines_committed(loss.path)
        lines = [line for line in loss.lines if line not in committed]
        if lines:
            kept.append(replace(loss, lines=lines) if len(lines) != len(loss.lines) else loss)
    return kept


def snapshot_short(commit: str) -> str:
    return f"snapshot {commit[:10]}"


RULE = JournalAppendOnly

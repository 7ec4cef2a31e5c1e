import sys
from dataclasses import replace

from vaultkit.core.errors import VaultkitError
from vaultkit.core.lazyre import lazy_re
from vaultkit.vault.gitstate import first_change, split_lines
from vaultkit.lint.rule import Rule
from vaultkit.lint.shared import (accept_deletion, accepted_deletions, accepted_removals,
                                  accepting)

# the target part of a wikilink (up to '#', '|' or ']]') and of a Markdown link
_WIKI_TARGET = lazy_re(r"!?\[\[([^\]|#\n]*)")
_MD_TARGET = lazy_re(r"\]\((<[^>\n]*>|[^)\s]*)")

_KEEP_LAYERS = ("journal", "archive")


def _quote(line: str, width: int = 60) -> str:
    line = line.strip()
    return repr(line if len(line) <= width else line[:width - 1] + "…")


class JournalAppendOnly(Rule):
    """
    ## What it does
    Reports a journal (`memory/YYYY-MM-DD.md`) whose committed version is not a prefix of
    its new version: a past line edited, reordered or removed, or the journal deleted
    or moved anywhere but `memory/archive/`. It points at the first line that differs
    from HEAD. The new version is the staged one with `--staged` and in the pre-commit
    hook, otherwise the working tree's. Line endings do not count, and a missing final
    newline in HEAD is tolerated (text appended onto the last line is still an append).
    A journal moved into the archive (`vaultkit archive`, `git mv`) is not a deletion,
    as long as its lines are kept. Outside a git repository, or before the first
    commit, there is no HEAD to compare with and the rule says once that it skipped.

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
    is one moved into the archive with its lines. This works before the first commit and
    in a folder without git.
    Without snapshots nothing changes.

    A rename's link rewrite is not an edit: when Obsidian renames a note it rewrites
    the links to it everywhere (`alwaysUpdateLinks`, or the "Update links?" prompt),
    old journals included. A changed line is accepted when it differs from HEAD only
    in link targets, each new target resolves to a note and each old one no longer
    resolves (the note it named is gone): the journal still says what it said, and its
    links keep working. Any other difference on the line is reported as before.

    ## Why is this bad?
    The journal is the most complete record the agent has, and it is only ever
    appended to (`printf >> memory/YYYY-MM-DD.md`). A rewrite is how memory gets lost:
    one cron run that used Write instead of appending wiped twelve hours of entries.
    Catching it before the commit keeps the lost lines one `git show HEAD:...` away. A
    journal never committed is lost for good by the commit that stores its overwritten
    version, unless a snapshot kept the lines.

    ## Example
    ```
    memory/2026-02-13.md:4:1: VK601 journal-append-only error: line 4 differs from the committed journal (HEAD: '- Deployed v1.2 to production', staged: '- Deployed v1.3'); journals are append-only: restore the committed lines (git show HEAD:memory/2026-02-13.md) and add new text at the end
    memory/2026-02-14.md:1:1: VK601 journal-append-only error: journal deleted; journals are append-only: restore it with `git checkout HEAD -- memory/2026-02-14.md`
    memory/2026-02-15.md:1:1: VK601 journal-append-only error: 18 lines lost since the snapshot at 18:00 (snapshot 3f9c2a7b1e; first: '### 10:00 — Checkpoint 1') are only in that snapshot: not in the staged journal, the work tree or a stash; committing it would seal the loss: bring them back with `vaultkit recover --all` (once; `vaultkit history` lists them), then stage the journal again, or accept this removal: VAULTKIT_ACCEPT_DELETION=memory/2026-02-15.md git commit …
    memory/2026-02-16.md:1:1: VK601 journal-append-only error: journal deleted since the snapshot at 18:00 (snapshot 8d01c4e2aa), which holds its 12 lines (first: '### 10:00 — Checkpoint 1') and no commit does; committing now would seal the loss: bring it back with `vaultkit recover --all` (`vaultkit history` lists it), or accept this deletion: VAULTKIT_ACCEPT_DELETION=memory/2026-02-16.md git commit …, or take it out of the snapshots: `vaultkit snapshot --forget memory/2026-02-16.md`
    ```
    """

    name = "journal-append-only"
    code = "VK601"
    severity = "error"
    scope = "vault"
    cacheable = False  # depends on git history, not only on the files

    def asks_git(self, ctx):
        from functools import partial

        from vaultkit.vault.snapshots import index_against_newest

        yield ctx.git.prefetch_diff
        yield partial(index_against_newest, ctx.vault, ctx.git)

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

        from vaultkit.vault.snapshots import (
            clock, current_blobs, file_of, journal_losses, open_store)

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

        def holders(path):
            # lines git moved on purpose are not lost: partial staging (`git add -p`, an
            # older version staged) leaves them in the work tree, `git stash` in a stash
            if staged:
                note = vault.note(path) if not path.startswith("../") \
                    else vault.external.get(path)
                yield None if note is None or note.error else note.text
                if git.available:  # under pre-commit: the lines it took out for the run
                    yield git.unstaged_by_pre_commit(path)
            if git.available:
                yield from git.stash_texts(path)

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
                                    holders=holders, accepted=accepted_removals(vault))
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
                     f" ({snapshot_short(loss.commit)}; first: {_quote(first)}) are only in "
                     f"that snapshot: not in the {side} journal, the work tree or a stash")
            if staged and loss.path not in git.by_new_path:
                # this commit does not stage the journal: it seals nothing, so it passes;
                # the loss stays listed (`vaultkit history`, the audit) until recovered
                yield replace(self.diag(loss.path, None, None,
                                        f"{where}; this commit does not stage it, so it "
                                        "passes: bring them back with `vaultkit recover "
                                        "--all` before the journal is committed"),
                              severity="warning")
                continue
            yield self.diag(loss.path, None, None,
                            f"{where}; committing it would seal the loss: bring them back "
                            "with `vaultkit recover --all` (once; `vaultkit history` lists "
                            "them), then stage the journal again, or accept this removal: "
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
                yield self.diag(change.old, None, None,
                                "journal deleted; journals are append-only: restore it with "
                                f"`git checkout HEAD -- {change.old_repo}`")
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
            where = first_unsafe_change(old, new, ctx.vault, change.new)
            if where is None:
                continue
            line, was, now = where
            moved = f" (moved from {change.old})" if change.new != change.old else ""
            hint = (f"journals are append-only: restore the committed lines (git show "
                    f"{head_ref}) and add new text at the end")
            if now is None:
                removed = split_lines(old)[0][line - 1:]
                gone = len(removed)
                was = next((r for r in removed if r.strip()), was)
                yield self.diag(change.new, line, 1,
                                f"{gone} committed line{'s' * (gone != 1)} removed from line "
                                f"{line} on{moved} (HEAD: {_quote(was)}); {hint}")
            else:
                yield self.diag(change.new, line, 1,
                                f"line {line} differs from the committed journal{moved} "
                                f"(HEAD: {_quote(was)}, {side}: {_quote(now)}); {hint}")


def _not_committed(losses, git):
    """The losses without the lines a commit reachable from HEAD or a local ref holds in
    that file (HEAD's version first of all): git keeps those, the snapshots are not their
    only copy (a journal committed elsewhere and pulled, a line edited in an earlier
    commit)."""
    from dataclasses import replace

    kept = []
    for loss in losses:
        committed = git.lines_committed(loss.path)
        lines = [line for line in loss.lines if line not in committed]
        if lines:
            kept.append(replace(loss, lines=lines) if len(lines) != len(loss.lines) else loss)
    return kept


def snapshot_short(commit: str) -> str:
    return f"snapshot {commit[:10]}"


def first_unsafe_change(old: str, new: str, vault, source: str):
    """:func:`first_change`, passing over lines that only follow a rename's link rewrite."""
    old_lines, old_final = split_lines(old)
    new_lines, _ = split_lines(new)
    start = 0
    while True:
        where = first_change("\n".join(old_lines[start:]) + ("\n" if old_final else ""),
                             "\n".join(new_lines[start:]) + "\n")
        if where is None:
            return None
        line, was, now = where
        if now is None or not is_rename_rewrite(was, now, vault, source):
            return start + line, was, now
        start += line


def _targets(line: str) -> list[tuple[int, int, str]]:
    """``(start, end, kind)`` of each link target in a line, in order."""
    found = [(m.start(1), m.end(1), "wiki") for m in _WIKI_TARGET.finditer(line)]
    found += [(m.start(1), m.end(1), "md") for m in _MD_TARGET.finditer(line)]
    return sorted(found)


def is_rename_rewrite(was: str, now: str, vault, source: str) -> bool:
    """True when ``now`` differs from ``was`` only in link targets, each new one resolving
    to a note of ``vault`` and each old one resolving to nothing any more."""
    old_t, new_t = _targets(was), _targets(now)
    if not old_t or len(old_t) != len(new_t):
        return False
    skeleton = []
    for line, targets in ((was, old_t), (now, new_t)):
        parts, pos = [], 0
        for a, b, kind in targets:
            parts.append(line[pos:a])
            parts.append(f"\0{kind}")
            pos = b
        parts.append(line[pos:])
        skeleton.append("".join(parts))
    if skeleton[0] != skeleton[1]:
        return False
    resolver = vault.resolver
    changed = False
    for (a, b, kind), (c, d, _) in zip(old_t, new_t):
        before, after = was[a:b], now[c:d]
        if before == after:
            continue
        changed = True
        if _resolve(resolver, kind, after, source) is None:
            return False
        if _resolve(resolver, kind, before, source) is not None:
            return False  # the old target still opens a note: a different link, not a rename
    return changed


def _resolve(resolver, kind: str, target: str, source: str) -> str | None:
    from urllib.parse import unquote

    if kind == "wiki":
        return resolver.resolve_target(target.strip(), source) if target.strip() else None
    from vaultkit.vault.resolve import _fold

    target = target[1:-1] if target.startswith("<") else unquote(target)
    target = target.split("#", 1)[0]
    if not target or ":" in target:  # a URL (https:, mailto:, obsidian:) is no note
        return None
    folder = _fold(source.rsplit("/", 1)[0]) if "/" in source else ""
    return resolver._resolve_markdown(folder, target).path


RULE = JournalAppendOnly

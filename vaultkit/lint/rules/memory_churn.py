from collections import Counter

from vaultkit.lint.rule import Rule

_NAME = "MEMORY.md"


class MemoryChurn(Rule):
    """
    ## What it does
    Warns when `MEMORY.md` was changed in more than one commit on the same day within
    the last `git: churn_days` days (14 by default), reading the history with one
    `git log`. With `--staged` and in the pre-commit hook, the commit being made counts
    too: a second change to `MEMORY.md` today is reported as it is committed. Days are
    the commits' author dates in the author's own time zone; merge commits and the
    commit that created `MEMORY.md` do not count (a new vault's first commit and one
    edit the same day are no churn), nor does a commit that only appended OpenClaw
    dreaming's `## Promoted From Short-Term Memory (DATE)` sections (the runtime's
    scheduled write; docs/dreaming.md): what they hold is judged by `promoted-junk` and
    `promoted-twice`.

    ## Why is this bad?
    `MEMORY.md` is the curated long-term layer, loaded into every session. The seeds'
    rule is that it changes at most once a day: day-to-day events belong in the
    journal and get promoted in the weekly distillation. A `MEMORY.md` rewritten
    several times a day is being used as a journal, and each rewrite is a chance to
    drop what was curated.

    ## Example
    ```
    MEMORY.md:1:1: VK603 memory-churn warning: MEMORY.md changed in more than one commit on the same day: 2026-02-13 (3 commits), 2026-02-14 (2 commits), within the last 14 days; keep day-to-day notes in the journal and update MEMORY.md at most once a day
    ```
    """

    name = "memory-churn"
    code = "VK603"
    severity = "warning"
    scope = "vault"

    def asks_git(self, ctx):
        from functools import partial

        path = (_NAME if ctx.profile.memory_prefix else "../" + _NAME)
        if ctx.vault.has_note(path):
            yield partial(ctx.git.commit_days, path, ctx.profile.git.churn_days)

    def check_vault(self, ctx):
        git = ctx.git
        if not git.available:
            git.notice()
            return
        path = (_NAME if ctx.profile.memory_prefix else "../" + _NAME)
        if not ctx.vault.has_note(path) and path not in git.by_new_path:
            return
        days = ctx.profile.git.churn_days
        counts = Counter(git.commit_days(path, days))
        if git.staged and path in git.by_new_path and not _promotions(git, path):
            counts[ctx.today().isoformat()] += 1  # the commit being made
        busy = sorted((day, n) for day, n in counts.items() if n > 1)
        if not busy:
            return
        listed = ", ".join(f"{day} ({n} commits)" for day, n in busy)
        yield self.diag(path, 1, 1,
                        f"{_NAME} changed in more than one commit on the same day: {listed}, "
                        f"within the last {days} days; keep day-to-day notes in the journal "
                        f"and update {_NAME} at most once a day")


def _promotions(git, path: str) -> bool:
    """Does the commit being made only append dreaming's promoted sections to the file?"""
    from vaultkit.vault.promoted import changed_lines, only_promotions

    change = git.by_new_path[path]
    old, new = git.head_text(change), git.new_text(change)
    if old is None or new is None:
        return False
    return only_promotions(*changed_lines(old, new))


RULE = MemoryChurn

"""The audit check ``baseline``: the accepted findings are current and committed."""

from __future__ import annotations


from vaultkit.audit.context import FAIL, PASS, WARN, AuditContext, Check

def check_baseline(ctx: AuditContext) -> Check:
    """The baseline the hook reads: readable, committed, and not holding fixed findings."""
    from vaultkit.lint.baseline import Baseline, baseline_path
    from vaultkit.lint.engine import run_rules, select_rules
    from vaultkit.core.errors import VaultkitError
    from vaultkit.lint.rule import Context

    path = baseline_path(ctx.vault)
    rel = path.relative_to(ctx.vault.root).as_posix() if path.is_relative_to(ctx.vault.root) \
        else str(path)
    try:
        baseline = Baseline.load(path)
    except VaultkitError as exc:
        return Check("baseline", FAIL, f"the baseline cannot be read: {exc}",
                     "rewrite it with `vaultkit check --write-baseline`")
    if not baseline.exists:
        return Check("baseline", PASS, f"no baseline ({rel}): `vaultkit check` reports every "
                                       "finding")
    rules = select_rules(ctx.vault.settings)
    found = run_rules(Context(ctx.vault), rules)
    used = baseline.filter(found).used
    stale = baseline.stale(used, rules=[r.name for r in rules], paths=None)
    total, files = len(baseline), len({e.path for e in baseline.entries})
    held = f"{rel} accepts {total:,} finding{'s' * (total != 1)} in {files:,} " \
           f"file{'s' * (files != 1)}"
    if stale:
        return Check("baseline", WARN, f"{held}, but {stale:,} of them "
                                       f"{'is' if stale == 1 else 'are'} fixed",
                     f"run `vaultkit check --shrink-baseline {ctx.vault.root}`, then "
                     f"commit {rel}")
    if ctx.git_top():
        tracked = ctx.git("ls-files", "--error-unmatch", "--", str(path))
        if tracked is not None and tracked.returncode != 0:
            return Check("baseline", WARN, f"{held}, but it is not committed: the hook in "
                                           "another clone reports every one of them",
                         f"git add {rel} && git commit -m 'vaultkit baseline'")
    return Check("baseline", PASS, f"{held}; only new findings are reported")

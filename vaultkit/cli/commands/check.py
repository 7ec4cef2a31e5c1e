"""``vaultkit check``: lint the vault."""

from __future__ import annotations

import contextlib
import os
import sys

from vaultkit.cli import add_format_arguments, add_output_argument, add_vault_arguments

HELP = "check the vault against the profile's rules"
DESCRIPTION = (
    "Check the vault. The whole vault is always read (links need it); findings are "
    "reported for the given files or folders, or for everything when none are given."
)


def add_arguments(p) -> None:
    p.add_argument("paths", nargs="*", metavar="PATH", help="files or folders to report on")
    add_vault_arguments(p)
    p.add_argument("--select", metavar="RULES", help="comma-separated rule names, codes or "
                   "code prefixes to use instead of the configured set (ALL for every rule)")
    p.add_argument("--ignore", metavar="RULES", help="comma-separated rules to leave out")
    p.add_argument("--extend-select", metavar="RULES", help="rules to add to the selection")
    p.add_argument("--fail-on", choices=("error", "warning"),
                   help="lowest severity that makes the exit code 1 (default: error)")
    add_format_arguments(p, ("text", "json", "github", "sarif"),
                         help="text (default), json, github (Actions annotations) or sarif "
                              "(code scanning)")
    add_output_argument(p, help="write the report to FILE")
    p.set_defaults(writes_output=True)  # (-o is the report only; the summary is stderr's)
    p.add_argument("--fix", action="store_true", help="apply the fixable rules' fixes")
    p.add_argument("--diff", action="store_true", help="show the fixes as a diff; write nothing")
    p.add_argument("--statistics", action="store_true",
                   help="count findings per rule (--format json: as a JSON list)")
    p.add_argument("--staged", action="store_true",
                   help="git rules compare the staged content (not the working tree) with HEAD")
    p.add_argument("--hook", action="store_true",
                   help="pre-commit mode: staged content, the given files plus vault-level findings")
    p.add_argument("--baseline", metavar="FILE",
                   help="the baseline of accepted findings to hide (default: `baseline` in "
                   "vaultkit.toml, else vaultkit-baseline.json at the vault root, if it exists)")
    p.add_argument("--write-baseline", action="store_true",
                   help="record every current finding in the baseline, so only new ones are "
                   "reported from now on")
    p.add_argument("--shrink-baseline", action="store_true",
                   help="remove from the baseline the recorded findings this whole-vault run "
                        "no longer finds (a plain run only says how many)")
    p.add_argument("--no-baseline", action="store_true",
                   help="report every finding, the baselined ones too")
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even with findings")
    p.add_argument("-q", "--quiet", action="store_true", help="print findings only, no summary")
    p.add_argument("-w", "--watch", action="store_true",
                   help="check again after each change to the vault's notes or settings, "
                        "until Ctrl-C")
    p.add_argument("--poll", type=float, metavar="SECONDS",
                   help="with --watch: look for changes every SECONDS instead of waiting "
                        "on file events")


def _split(value):
    if value is None:
        return None
    return [v.strip() for v in value.split(",") if v.strip()]


def run(args) -> int:
    if args.watch:
        from vaultkit.cli.commands._check_watch import watch

        return watch(args, _check_once)
    if args.poll is not None:
        from vaultkit.core.errors import VaultkitError

        raise VaultkitError("--poll goes with --watch")
    return _check_once(args)


def _check_once(args) -> int:
    from pathlib import Path

    from vaultkit.core import progress
    from vaultkit.cli.commands._common import check_output_folder, vault_relative
    from vaultkit.core.errors import VaultkitError

    check_output_folder(args.output)  # before any work
    if getattr(args, "notices", None) is None:  # (kept over the runs of --watch)
        from vaultkit.vault.gitstate import Notices

        args.notices = Notices()
    args.notices.quiet = args.quiet  # -q: findings only, not the "git rules skipped" line
    progress.allow(args.format == "text" and not args.quiet and not args.hook)
    # hook mode: pre-commit passes the staged files (none when only deletions are staged);
    # they are reported on, plus the vault-level findings, never the whole vault
    paths = args.paths or ([] if args.hook else ["."])
    existing = [p for p in paths if args.hook or Path(p).exists()]
    present = set(existing)  # (a hook may name thousands of files: no list search per file)
    # like ruff's E902: a path named that does not exist is an error (exit 1 at least),
    # reported once; the paths that exist are still checked
    missing = [p for p in paths if p not in present]
    args.missing_paths = len(missing)  # (the summary must not say "All checks passed!")
    if missing == paths and len(missing) == 1 and not args.hook:  # one error, said once
        raise VaultkitError(f"{missing[0]}: no such file or folder{_nearby(missing[0])}")
    for p in missing:
        print(f"vaultkit: error: {p}: no such file or folder{_nearby(p)}",
              file=sys.stderr)
    if not existing and not args.hook:
        raise VaultkitError("none of the given paths exists")
    if not args.hook:  # (a hook gets only Markdown files from pre-commit)
        for p in [p for p in existing if Path(p).is_file() and not p.lower().endswith(".md")]:
            print(f"vaultkit: warning: {p}: not a note (vaultkit checks Markdown notes, "
                  "*.md); skipped", file=sys.stderr)
            existing.remove(p)
        if not existing:
            raise VaultkitError("none of the given paths is a note or a folder")
    gone: list = []  # (a hook: vaults the commit deletes whole)
    groups = _group_by_vault(existing, root=args.root, hook=args.hook,
                             named=bool(args.paths) and not args.hook, gone=gone)
    if not groups and not gone:  # a hook's commit changes nothing in any vault: say nothing
        return 0
    from vaultkit.vault.outbound import verified_texts

    # a warm check prints what it printed last time: the output boundary skips a text it
    # scanned then (by digest) and scans any other (vaultkit.vault.outbound.Verified); the
    # list is the vault's, so it is used when the one vault checked is opened
    with verified_texts(None) as verifying:
        code = _check_groups(args, groups, vault_relative,
                             verifying if len(groups) == 1 else None, gone)
    return max(code, 1) if missing and not args.exit_zero else code


def _check_groups(args, groups, vault_relative, verifying, gone=()) -> int:
    from vaultkit.lint.engine import fail

    diags: list = []
    roots: list = []
    root_of: dict[int, object] = {}  # id of each finding (all alive in diags) -> its vault's root
    failed = False
    diffs: list[str] = []
    hidden: list[str] = []
    for anchor, group in groups:
        vault_diags, vault = _check_vault(args, anchor, group, vault_relative, diffs, hidden,
                                          verifying)
        diags.extend(vault_diags)
        for d in vault_diags:
            root_of[id(d)] = vault.root
        roots.append(vault.root)
        failed_here = fail(vault_diags, args.fail_on or vault.settings.config.fail_on)
        failed |= failed_here
        _record_accepted(args, vault, failed_here)
    for deleted, root in _gone_findings(args, gone):
        diags.append(deleted)
        root_of[id(deleted)] = root
        failed = True
    if args.diff:
        sys.stdout.write("".join(diffs))
        return 1 if diffs and not args.exit_zero else 0
    return _write_report(args, diags, roots, hidden, failed, _where(root_of))


def _gone_findings(args, gone):
    """``(finding, its vault's root)`` for each vault a hook's commit deletes whole
    (:func:`vaultkit.cli.commands._hookscope.gone_vaults`): no vault is left to open and
    check, so ``mass-deletion`` says it here, on the marker ``vaultkit init`` wrote (unless
    the command line leaves that rule out, or ``VAULTKIT_ACCEPT_DELETION`` names the
    folder)."""
    if not gone:
        return []
    from vaultkit.lint.diagnostics import Diagnostic
    from vaultkit.lint.engine import Selection
    from vaultkit.lint.rules import matches, rule_refs
    from vaultkit.lint.shared import accept_deletion, accepted_deletions

    rule = next(r for r in rule_refs() if r.name == "mass-deletion")
    chosen = Selection(_split(args.select), _split(args.ignore) or [],
                       _split(args.extend_select) or [])
    if (chosen.select is not None and not any(matches(rule, k) for k in chosen.select)) \
            or any(matches(rule, k) for k in chosen.ignore):
        return []
    accepted = {p.rstrip("/") for p in accepted_deletions()}
    out = []
    for vault in gone:
        if vault.folder in accepted:
            continue
        notes = f"{vault.notes} note{'s' * (vault.notes != 1)}"
        out.append((Diagnostic(
            rule.name, rule.code, "error", vault.marker, 1, 1,
            f"the whole vault at {vault.folder} is deleted by this commit ({vault.files} "
            f"files, {notes}); restore it with `git checkout HEAD -- {vault.folder}`, or "
            f"accept this deletion for one commit: {accept_deletion(vault.folder)} git "
            "commit …"), os.path.abspath(vault.folder)))
    return out


def _record_accepted(args, vault, failed: bool) -> None:
    """A commit's check that passed with cuts ``VAULTKIT_ACCEPT_DELETION`` accepted records
    them (their lines' digests, :class:`vaultkit.vault.loss.AcceptedRemovals`), so that the
    next commit does not refuse the same removal again (docs/snapshots.md)."""
    pending = vault.__dict__.pop("_accepting", None)
    vault.__dict__.pop("_accepted_removals", None)  # (read again by the next run)
    if not pending or failed or not (args.hook or args.staged):
        return
    from vaultkit.core.errors import VaultkitError
    from vaultkit.vault.loss import AcceptedRemovals

    try:
        AcceptedRemovals(vault.root).record(pending)
    except (OSError, VaultkitError) as exc:
        print(f"vaultkit: warning: the accepted removal of {', '.join(sorted(pending))} was "
              f"not recorded ({exc}); the next commit may ask for it again", file=sys.stderr)


def _write_report(args, diags, roots, hidden, failed, where) -> int:
    from vaultkit.lint.report import render, statistics, summary, use_colour

    import io

    # (-o: written whole at the end, atomically, or in place onto a FIFO or device)
    out = sys.stdout if not args.output else io.StringIO()
    if args.statistics:
        out.write(statistics(diags, args.format))
    else:
        colour = args.format == "text" and not args.output and use_colour()
        out.write(render(diags, args.format, colour=colour,
                         root=str(roots[0]) if len(roots) == 1 else None,
                         where=where))
    # a hook run with nothing to report prints nothing: pre-commit shows the check hook's
    # output on every commit (verbose, so warnings are seen), and "All checks passed!"
    # under every commit is noise
    if args.format == "text" and not args.quiet and not args.statistics \
            and not (args.hook and not diags):
        print(summary(diags, missing=getattr(args, "missing_paths", 0)), file=out)
        for line in hidden:
            print(line, file=out)
    if out is not sys.stdout:
        from vaultkit.core.atomic import write_output

        from vaultkit.vault.outbound import clean, commands_off

        write_output(args.output, commands_off(clean(out.getvalue())).encode("utf-8"))
    if args.exit_zero:
        return 0
    return 1 if failed else 0


def _nearby(path: str) -> str:
    """A "did you mean" naming files or folders beside a path that does not exist."""
    from pathlib import Path

    from vaultkit.vault.phrases import did_you_mean

    p = Path(path)
    parent = p.parent if str(p.parent) else Path(".")
    try:
        names = [c.name for c in parent.iterdir() if not c.name.startswith(".")]
    except OSError:
        return ""
    import difflib

    # close in name (memory/decision -> memory/decisions), not in the shared folder part
    prefix = "" if str(parent) == "." else f"{parent}/"
    close = difflib.get_close_matches(p.name, names, n=3, cutoff=0.75)
    return did_you_mean(str(p), [prefix + n for n in close]) if close else ""


def _where(root_of: dict):
    """``where(d)`` for one report: the finding's file as ruff prints it, relative to the
    current folder (``root_of`` maps each finding's id to its vault's root)."""
    from vaultkit.vault.scan import display_path

    prefixes: dict = {}
    try:  # (asked once for the report: one system call, not one per finding)
        here = os.getcwd()
    except OSError:  # (the current folder was removed: paths are shown from the root)
        here = ""

    def where(d) -> str:
        root = root_of.get(id(d))
        if root is None:
            return d.path
        prefix = prefixes.get(root)
        if prefix is None:  # how the root is shown; every file is then the root plus its path
            shown = display_path(root)
            below = here.startswith(str(root).rstrip(os.sep) + os.sep)
            # (with the current folder below the root, each file is shown on its own)
            prefix = "" if shown == "." else False if below else shown.rstrip("/") + "/"
            prefixes[root] = prefix
        if prefix is False or d.path.startswith("../"):  # the current folder is in the vault
            return display_path(os.path.normpath(os.path.join(root, d.path)))
        return prefix + d.path

    return where


def _group_by_vault(paths, *, root, hook: bool, named: bool = False, gone=None):
    """``[(anchor, paths)]``: the given paths grouped by the vault each lies in, in order.
    ``gone`` (a hook's list) gets the vaults the commit deletes whole
    (:func:`vaultkit.cli.commands._hookscope.gone_vaults`).

    A path in no vault is an error (NotAVault) as for every reading command, except in a
    hook, which gets every staged file of the repository: those outside a vault are not ours.
    """
    from pathlib import Path

    from vaultkit.vault.scan import NotAVault, find_root

    if root:
        if hook:
            from vaultkit.cli.commands._hookscope import commit_leaves_alone

            if commit_leaves_alone(root):  # (a vault in a subfolder, a commit elsewhere)
                return []
        return [(root, paths)]
    groups: dict = {}
    anchors: dict = {}
    missing = []
    # a file's folder as named -> its vault (or None): one search per folder. (A file that
    # is no symlink lies in the vault of the folder it is named in.)
    roots: dict = {}
    for p in paths:
        if not Path(p).exists():  # a hook's deleted file: reported with the first vault
            missing.append(p)
            continue
        folder = os.path.dirname(p) if os.path.isfile(p) and not os.path.islink(p) else None
        found = roots.get(folder, False) if folder is not None else False
        if found is False:
            try:  # a folder named on the command line that holds notes is a vault
                found = find_root(Path(p), named=named and Path(p).is_dir())
            except NotAVault:
                if not hook:
                    raise
                found = None
            if folder is not None:  # (the vault of a file is its folder's)
                roots[folder] = found
        if found is None:
            continue
        groups.setdefault(found, []).append(p)
        anchors.setdefault(found, p)
    if hook and not _holds_here(groups):
        # pre-commit runs the hook from the repository's top; a vault in a subfolder is
        # found from the files it passes, and from those the commit deletes (never passed)
        from vaultkit.cli.commands._hookscope import (deleted_names, deleted_vaults,
                                                      gone_vaults)

        if not groups:  # nothing staged in a vault: the current folder's vault-level findings
            try:
                find_root(Path("."))
                return [(".", missing)]
            except NotAVault:
                pass
        deleted = deleted_names()
        if gone is not None:
            gone.extend(gone_vaults(deleted))
        for found in deleted_vaults(deleted):
            if found not in groups:
                groups[found] = []
                anchors[found] = str(found)
        if not groups:
            return []  # the commit changes nothing in a vault: nothing for this hook
    if not groups:
        return [(".", missing)]
    out = [(anchors[found], group) for found, group in groups.items()]
    out[0][1].extend(missing)
    return out


def _holds_here(roots) -> bool:
    """True when one of the vault ``roots`` (resolved) holds the current folder."""
    here = os.getcwd()
    return any(here == str(r) or here.startswith(str(r).rstrip(os.sep) + os.sep) for r in roots)


def _check_vault(args, anchor, paths, vault_relative, diffs, hidden, verifying=None):
    """Check one vault (fixing it with --fix, adding its diff to ``diffs`` with --diff);
    findings its baseline accepts are left out, and counted in ``hidden``. ``verifying``
    (a :class:`~vaultkit.vault.outbound.verified_texts` entered) gets the vault's list of
    verified texts, when its cache is used."""
    from vaultkit.cli.commands._common import open_vault
    from vaultkit.lint.engine import Selection, select_rules

    vault = open_vault(args, anchor, named=bool(args.paths) and not args.hook, deferred=True)
    if verifying is not None and vault.caching:
        from vaultkit.vault.outbound import Verified

        verifying.use(Verified(vault.store))
    targets = _targets(vault, paths, vault_relative, hook=args.hook)
    if args.hook and targets:  # what the commit holds: the staged text, not the work tree's
        from vaultkit.session.staged import staged_view

        vault, targets = staged_view(vault, targets)
        differ = sorted(vault.__dict__.get("_work_tree", ()))
        if differ and not args.quiet:
            from vaultkit.vault.outbound import clean_line

            print(clean_line(f"vaultkit: info: checked as staged (what the commit holds; the "
                             f"work tree differs): {', '.join(differ)}"), file=sys.stderr)
    selection = Selection(_split(args.select), _split(args.ignore) or [],
                          _split(args.extend_select) or [])
    rules = select_rules(vault.settings, selection)
    baseline = _baseline(vault, args, targets)
    diags = _check(vault, rules, targets, args)
    if args.write_baseline:
        baseline.record(diags, rules=[r.name for r in rules])
        baseline.save()
        print(f"vaultkit: recorded {len(baseline)} finding{'s' * (len(baseline) != 1)} in "
              f"{_shown_path(baseline.path)}; commit it with the vault", file=sys.stderr)

    def shown(found):  # fixes, like reports, are only for the findings not accepted
        return baseline.filter(found).shown if baseline is not None else found

    diags, vault = _check_and_fix(args, vault, rules, targets, diags, diffs, shown)
    if baseline is None:
        return diags, vault
    filtered = baseline.filter(diags)
    if not args.write_baseline:
        _shrink(baseline, filtered, rules, targets, args)
    if filtered.hidden:
        hidden.append(f"{filtered.hidden} more in the baseline ({_shown_path(baseline.path)}; "
                      "`--no-baseline` shows them).")
    return filtered.shown, vault


def _check_and_fix(args, vault, rules, targets, diags, diffs, shown):
    """The vault's findings after --fix (if asked); with --diff, its diff goes to ``diffs``.

    The fix plan (a few more passes of the fixable rules) is built only for --fix and
    --diff: the summary's fixable count is the ``fixable`` flag the findings carry."""
    if not (args.fix or args.diff):
        return diags, vault
    visible = shown(diags)
    if not any(d.fixable for d in visible):
        return diags, vault
    # only fixable rules make fixes: the plan's passes run those alone (a fraction of the work)
    fixers = [r for r in rules if r.fixable]
    fixes = visible
    if not any(d.fix is not None for d in visible):  # from the results cache, which keeps no fix
        fixes = shown(_check(vault, fixers, targets, args, in_memory=True))
    plan = FixPlan(vault, fixes,
                   lambda v: shown(_check(v, fixers, targets, args, in_memory=True)),
                   getattr(args, "workspace", None))
    if args.diff:
        diffs.extend(plan.diffs())
        return diags, vault
    if plan.write():
        if getattr(args, "written", None) is not None:  # --watch: these are no change
            args.written.extend(plan.written_paths)
        from vaultkit.vault.loader import load_vault

        vault = load_vault(vault.root, root=vault.root, profile=args.profile,
                           use_cache=not args.no_cache)
        diags = _check(vault, rules, targets, args)
    if plan.written_count:
        n = plan.written_count
        print(f"Fixed {n} finding{'s' * (n != 1)}.", file=sys.stderr)
    return diags, vault


def _baseline(vault, args, targets):
    """The baseline this run reads (None with --no-baseline or when there is none)."""
    from vaultkit.core.errors import VaultkitError

    if not (args.no_baseline or args.baseline or args.write_baseline or args.shrink_baseline
            or vault.settings.config.baseline):
        from vaultkit.lint import BASELINE_NAME

        try:  # the common case, no baseline at all: answered without loading its module
            os.lstat(vault.root / BASELINE_NAME)
        except FileNotFoundError:
            return None
    from vaultkit.lint.baseline import Baseline, baseline_path

    if args.no_baseline:
        if args.write_baseline or args.shrink_baseline:
            option = "--write-baseline" if args.write_baseline else "--shrink-baseline"
            raise VaultkitError(f"{option} and --no-baseline contradict each other")
        return None
    if args.write_baseline and args.shrink_baseline:
        raise VaultkitError("--write-baseline records the findings anew; --shrink-baseline "
                            "only removes fixed ones: give one of them")
    for option, given in (("--write-baseline", args.write_baseline),
                          ("--shrink-baseline", args.shrink_baseline)):
        if given and (targets is not None or args.hook or args.diff):
            raise VaultkitError(f"{option} records the whole vault: run it without paths, "
                                "--hook and --diff")
    baseline = Baseline.load(baseline_path(vault, args.baseline), vault.root)
    if args.shrink_baseline and not baseline.exists:
        raise VaultkitError(f"{_shown_path(baseline.path)}: no baseline to shrink (write one "
                            "with `vaultkit check --write-baseline`)")
    if args.baseline and not baseline.exists and not args.write_baseline:
        raise VaultkitError(f"{args.baseline}: no such baseline (write one with "
                            "`vaultkit check --write-baseline`)")
    return baseline if baseline.exists or args.write_baseline else None


def _shrink(baseline, filtered, rules, targets, args) -> None:
    """``--shrink-baseline`` drops the recorded findings the run no longer sees; any other
    run (CI, a hook: the committed file must not change under them) only says how many
    could go."""
    names = [r.name for r in rules]
    if not args.shrink_baseline:
        stale = baseline.stale(filtered.used, rules=names, paths=targets)
        if stale and not args.quiet:
            print(f"vaultkit: info: {stale} baselined finding{'s are' if stale != 1 else ' is'} "
                  f"fixed; `vaultkit check --shrink-baseline` removes "
                  f"{'them' if stale != 1 else 'it'} from {_shown_path(baseline.path)}",
                  file=sys.stderr)
        return
    removed = baseline.shrink(filtered.used, rules=names, paths=None)
    if removed:
        baseline.save()
        if not args.quiet:
            print(f"vaultkit: {removed} fixed finding{'s' * (removed != 1)} removed from the "
                  f"baseline {_shown_path(baseline.path)}", file=sys.stderr)
    elif not args.quiet:
        print(f"vaultkit: info: every finding in {_shown_path(baseline.path)} is still there; "
              "nothing removed", file=sys.stderr)


def _shown_path(path) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return str(path)
    return str(path) if rel.startswith("../..") else rel


class FixPlan:
    """Every change ``--fix`` makes, worked out in memory before anything is written.

    A fix can make another finding (a property fixed in a note changes what INDEX.md
    should list, so the index is regenerated too), and fixes that overlapped one applied
    wait for the next pass (as in ruff). So the passes run here, on notes parsed from the
    fixed text, until nothing is left to fix: ``--diff`` shows this plan and ``--fix``
    writes it, the same set. (The summary's fixable count is the findings' ``fixable`` flag:
    what fixing makes, such as a stale INDEX.md, shows in ``--diff`` and is fixed by ``--fix``.)
    """

    MAX_PASSES = 10

    def __init__(self, vault, diags, recheck, workspace=None):
        from vaultkit.lint.engine import apply_fixes, encode_note_text
        from vaultkit.session.workspace import Workspace, outside_committed_lines

        self.vault = vault
        self.originals: dict = {}  # path -> the note as read from disk
        self.final: dict = {}  # path -> (text, bytes) after every pass
        self.per_path: dict = {}  # path -> how many findings its changes fix
        self.written_count = 0
        self.written_paths: list = []
        self._warned: set[str] = set()
        # each pass checks the vault with the fixed texts in place of the files: the
        # workspace's overlay, as an editor's unsaved buffers are checked
        if workspace is None:
            workspace = Workspace(vault.root, use_cache=vault.caching)
        overlay: dict[str, str] = {}
        current = vault
        git = None
        for _ in range(self.MAX_PASSES):
            by_path: dict = {}
            for d in diags:
                if d.fix is not None:
                    by_path.setdefault(d.path, []).append(d)
            changed = False
            fixed = 0
            for path, items in sorted(by_path.items()):
                note = current.note(path)
                if note is None or note.error:
                    continue
                if vault.profile.layer_of(path) in ("journal", "archive"):
                    if git is None:
                        from vaultkit.vault.gitstate import GitState

                        git = GitState(vault)
                    kept = outside_committed_lines(git, path, note.text, items)
                    if len(kept) < len(items):
                        self._warn(f"{path}: {len(items) - len(kept)} fix(es) not applied: "
                                   "they would rewrite committed journal lines, and journals "
                                   "are append-only")
                    items = kept
                new_text, count = apply_fixes(note, items)
                if new_text == note.text:
                    continue
                self.originals.setdefault(path, vault.note(path))
                overlay[path] = new_text
                self.final[path] = (new_text, encode_note_text(note, new_text))
                self.per_path[path] = self.per_path.get(path, 0) + count
                fixed += count
                changed = True
            if not changed:
                break
            current = workspace.overlaid(overlay, base=vault)
            diags = recheck(current)

    def diffs(self) -> list[str]:
        import difflib

        out = []
        for path, (text, _) in sorted(self.final.items()):
            old = self.originals[path].text
            if text == old:
                continue
            out.append("".join(difflib.unified_diff(
                old.splitlines(keepends=True), text.splitlines(keepends=True),
                fromfile=f"a/{path}", tofile=f"b/{path}")))
        return out

    def _warn(self, message: str) -> None:
        """A warning printed once per run (every pass of the plan would repeat it; a
        process-wide memory would silence it in the next run of the same process)."""
        if message not in self._warned:
            self._warned.add(message)
            print(f"vaultkit: warning: {message}", file=sys.stderr)

    def write(self) -> bool:
        """Write every planned file whose bytes are still those read; True if any was."""
        from vaultkit.core.atomic import write_atomic
        from vaultkit.core.confine import write_target
        from vaultkit.lint.engine import encode_note_text
        from vaultkit.core.errors import VaultkitError

        wrote = False
        for path, (text, data) in sorted(self.final.items()):
            note = self.originals[path]
            if text == note.text:
                continue
            try:  # never through a symlink, never outside the vault or into .git/
                target = write_target(self.vault.root, path)
            except VaultkitError as exc:
                self._warn(exc.args[0].replace("not written", "not fixed"))
                continue
            expected = encode_note_text(note, note.text)
            with _locked(target) as current:  # the lock `vaultkit log` appends under
                if current != expected:  # changed since it was read: never clobber
                    print(f"vaultkit: warning: {path} changed during the run; not fixed",
                          file=sys.stderr)
                    continue
                write_atomic(target, data, root=self.vault.root)
                wrote = True
                self.written_paths.append(target)
                self.written_count += self.per_path[path]
        return wrote


def _targets(vault, paths, vault_relative, hook=False):
    """Vault paths to report on, or None for everything."""
    targets: set[str] = set()
    everything = False
    import bisect

    listed: list[str] | None = None  # the vault's paths, sorted: read once, not per path
    for p in paths:
        rel = vault_relative(vault, p)
        if rel is None:
            if not hook:  # a hook gets every staged file of the repo; others are not ours
                print(f"vaultkit: warning: {p}: outside the vault at {vault.root}; skipped",
                      file=sys.stderr)
            continue
        if rel == "":
            everything = True
            continue
        if listed is None:
            listed = sorted(vault.paths)
        at = bisect.bisect_left(listed, rel)
        if at < len(listed) and listed[at] == rel:  # a file (no file is also a folder)
            targets.add(rel)
            continue
        targets.update(_below(listed, rel.rstrip("/") + "/") or [rel])
    return None if everything else targets


def _below(listed: list[str], prefix: str) -> list[str]:
    """The paths of the sorted ``listed`` that start with ``prefix`` (a folder's files)."""
    import bisect

    start = bisect.bisect_left(listed, prefix)
    end = start
    while end < len(listed) and listed[end].startswith(prefix):
        end += 1
    return listed[start:end]


def _check(vault, rules, targets, args, in_memory: bool = False):
    from vaultkit.lint.engine import run_rules
    from vaultkit.lint.rule import Context

    workspace = getattr(args, "workspace", None)  # (a process that keeps the vault warm)
    ctx = Context(vault, staged=args.staged, hook=args.hook, targets=targets,
                  reuse_results=not (in_memory or args.no_cache or args.fix or args.diff),
                  notices=getattr(args, "notices", None),
                  blobs=workspace.blobs if workspace is not None else getattr(args, "blobs", None))
    return run_rules(ctx, rules)


@contextlib.contextmanager
def _locked(path):
    """Hold the exclusive lock ``log`` and ``archive`` take on a file; yield its bytes.

    Without it, an entry appended between reading the file and replacing it is lost.
    Yields None when the file was replaced meanwhile (then it is not fixed).
    """
    import fcntl
    import os

    from vaultkit.core.errors import VaultkitError

    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | os.O_NONBLOCK)
    except OSError as exc:
        raise VaultkitError(f"{path}: cannot open to fix: {exc.strerror or exc}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            same = os.path.samestat(os.fstat(fd), os.stat(path))
        except FileNotFoundError:
            same = False
        yield path.read_bytes() if same else None
    finally:
        os.close(fd)

"""``vaultkit check``: lint the vault."""

from __future__ import annotations

import contextlib
import sys

from vaultkit.cli import add_vault_arguments

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
    p.add_argument("--format", choices=("text", "json", "github", "sarif"), default="text")
    p.add_argument("-o", "--output-file", metavar="FILE", help="write the report to FILE")
    p.add_argument("--fix", action="store_true", help="apply the fixable rules' fixes")
    p.add_argument("--diff", action="store_true", help="show the fixes as a diff; write nothing")
    p.add_argument("--statistics", action="store_true", help="count findings per rule")
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
    p.add_argument("--no-baseline", action="store_true",
                   help="report every finding, the baselined ones too")
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even with findings")
    p.add_argument("-q", "--quiet", action="store_true", help="print findings only, no summary")


def _split(value):
    if value is None:
        return None
    return [v.strip() for v in value.split(",") if v.strip()]


def run(args) -> int:
    from pathlib import Path

    from vaultkit.commands._common import open_vault, vault_relative
    from vaultkit.engine import Selection, fail, select_rules
    from vaultkit.errors import VaultkitError
    from vaultkit.report import render, statistics, summary, use_colour

    # hook mode: pre-commit passes the staged files (none when only deletions are staged);
    # they are reported on, plus the vault-level findings, never the whole vault
    paths = args.paths or ([] if args.hook else ["."])
    existing = [p for p in paths if Path(p).exists() or args.hook]
    for p in paths:
        if p not in existing:
            print(f"vaultkit: warning: {p}: no such file or folder; skipped", file=sys.stderr)
    if not existing and not args.hook:
        raise VaultkitError("none of the given paths exists")
    anchor = next((p for p in existing if Path(p).exists()), ".")
    vault = open_vault(args, anchor)
    targets = _targets(vault, existing, vault_relative, hook=args.hook)
    selection = Selection(_split(args.select), _split(args.ignore) or [],
                          _split(args.extend_select) or [])
    rules = select_rules(vault.settings, selection)
    fail_on = args.fail_on or vault.settings.config.fail_on
    baseline = _baseline(vault, args, targets)

    diags = _check(vault, rules, targets, args)
    if args.write_baseline:
        baseline.record(diags, rules=[r.name for r in rules])
        baseline.save()
        print(f"vaultkit: recorded {len(baseline)} finding{'s' * (len(baseline) != 1)} in "
              f"{_shown_path(baseline.path)}; commit it with the vault", file=sys.stderr)
    filtered = baseline.filter(diags) if baseline is not None else None
    diags = filtered.shown if filtered is not None else diags
    if args.fix or args.diff:
        fixed, diffs = _apply_fixes(vault, diags, write=args.fix)
        if args.diff:
            sys.stdout.write("".join(diffs))
            return 1 if diffs and not args.exit_zero else 0
        total, passes = fixed, 1
        while fixed:  # fixes that overlapped one applied wait for the next pass (as in ruff)
            from vaultkit.vault import load_vault

            vault = load_vault(vault.root, root=vault.root, profile=args.profile,
                               use_cache=not args.no_cache)
            diags = _check(vault, rules, targets, args)
            filtered = baseline.filter(diags) if baseline is not None else None
            diags = filtered.shown if filtered is not None else diags
            if passes == 10:
                break
            fixed, _ = _apply_fixes(vault, diags, write=True)
            total += fixed
            passes += 1
        if total:
            print(f"Fixed {total} finding{'s' * (total != 1)}.", file=sys.stderr)

    if filtered is not None and not args.write_baseline:
        _shrink(baseline, filtered, rules, targets, args)

    out = sys.stdout if not args.output_file else open(args.output_file, "w", encoding="utf-8")
    try:
        if args.statistics:
            out.write(statistics(diags))
        else:
            colour = args.format == "text" and not args.output_file and use_colour()
            out.write(render(diags, args.format, colour=colour, root=str(vault.root)))
        if args.format == "text" and not args.quiet and not args.statistics:
            print(summary(diags), file=out if out is not sys.stdout else sys.stdout)
            if filtered is not None and filtered.hidden:
                print(f"{filtered.hidden} more in the baseline ({_shown_path(baseline.path)}; "
                      "`--no-baseline` shows them).",
                      file=out if out is not sys.stdout else sys.stdout)
    finally:
        if out is not sys.stdout:
            out.close()
    if args.exit_zero:
        return 0
    return 1 if fail(diags, fail_on) else 0


def _baseline(vault, args, targets):
    """The baseline this run reads (None with --no-baseline or when there is none)."""
    from vaultkit.baseline import Baseline, baseline_path
    from vaultkit.errors import VaultkitError

    if args.no_baseline:
        if args.write_baseline:
            raise VaultkitError("--write-baseline and --no-baseline contradict each other")
        return None
    if args.write_baseline and (targets is not None or args.hook):
        raise VaultkitError("--write-baseline records the whole vault: run it without paths "
                            "and without --hook")
    baseline = Baseline.load(baseline_path(vault, args.baseline))
    if args.baseline and not baseline.exists and not args.write_baseline:
        raise VaultkitError(f"{args.baseline}: no such baseline (write one with "
                            "`vaultkit check --write-baseline`)")
    return baseline if baseline.exists or args.write_baseline else None


def _shrink(baseline, filtered, rules, targets, args) -> None:
    """A whole-vault run drops the recorded findings it no longer sees; a hook run (which
    must not change files the commit did not stage) only says how many could go."""
    names = [r.name for r in rules]
    if args.hook or targets is not None or args.diff:
        stale = baseline.stale(filtered.used, rules=names, paths=targets)
        if stale and not args.quiet:
            print(f"vaultkit: info: {stale} baselined finding{'s are' if stale != 1 else ' is'} "
                  f"fixed; `vaultkit check` on the whole vault removes "
                  f"{'them' if stale != 1 else 'it'} from {_shown_path(baseline.path)}",
                  file=sys.stderr)
        return
    removed = baseline.shrink(filtered.used, rules=names, paths=None)
    if removed:
        baseline.save()
        if not args.quiet:
            print(f"vaultkit: {removed} fixed finding{'s' * (removed != 1)} removed from the "
                  f"baseline {_shown_path(baseline.path)}", file=sys.stderr)


def _shown_path(path) -> str:
    import os

    try:
        rel = os.path.relpath(path)
    except ValueError:
        return str(path)
    return str(path) if rel.startswith("../..") else rel


def _targets(vault, paths, vault_relative, hook=False):
    """Vault paths to report on, or None for everything."""
    targets: set[str] = set()
    everything = False
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
        prefix = rel.rstrip("/") + "/"
        matched = [n for n in list(vault.notes) + list(vault.attachments)
                   if n == rel or n.startswith(prefix)]
        targets.update(matched or [rel])
    return None if everything else targets


def _check(vault, rules, targets, args):
    from vaultkit.engine import run_rules
    from vaultkit.rule import Context

    ctx = Context(vault, staged=args.staged, hook=args.hook, targets=targets,
                  reuse_results=not (args.no_cache or args.fix or args.diff))
    return run_rules(ctx, rules)


def _apply_fixes(vault, diags, *, write: bool):
    import difflib

    from vaultkit.atomic import write_atomic
    from vaultkit.engine import apply_fixes, encode_note_text

    by_path: dict[str, list] = {}
    for d in diags:
        if d.fix is not None:
            by_path.setdefault(d.path, []).append(d)
    fixed = 0
    diffs = []
    for path, items in sorted(by_path.items()):
        note = vault.note(path)
        if note is None or note.error:
            continue
        new_text, count = apply_fixes(note, items)
        if new_text == note.text:
            continue
        diffs.append("".join(difflib.unified_diff(
            note.text.splitlines(keepends=True), new_text.splitlines(keepends=True),
            fromfile=f"a/{path}", tofile=f"b/{path}")))
        if write:
            target = (vault.root / path).resolve()
            expected = encode_note_text(note, note.text)
            with _locked(target) as current:  # the lock `vaultkit log` appends under
                if current != expected:  # changed since it was read: never clobber
                    print(f"vaultkit: warning: {path} changed during the run; not fixed",
                          file=sys.stderr)
                    continue
                write_atomic(target, encode_note_text(note, new_text))
        fixed += count
    return fixed, diffs


@contextlib.contextmanager
def _locked(path):
    """Hold the exclusive lock ``log`` and ``archive`` take on a file; yield its bytes.

    Without it, an entry appended between reading the file and replacing it is lost.
    Yields None when the file was replaced meanwhile (then it is not fixed).
    """
    import fcntl
    import os

    from vaultkit.errors import VaultkitError

    try:
        fd = os.open(path, os.O_RDONLY)
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

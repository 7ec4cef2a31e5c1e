"""``vaultkit init``: write the starter vault."""

from __future__ import annotations

import sys

HELP = "create a starter vault (never overwrites an existing file)"
DESCRIPTION = (
    "Write a starter vault: bootstrap files, memory/ with today's journal and INDEX.md, the "
    "typed folders, Obsidian templates and settings, .gitignore and a .pre-commit-config.yaml "
    "pinned to this vaultkit. Into a folder that already holds notes (an agent's workspace "
    "or an Obsidian vault) it writes only what vaultkit needs there: vaultkit.toml, "
    ".pre-commit-config.yaml and .gitignore, each only if missing; --full adds the rest of "
    "the starter that is missing. It never changes an existing byte. Prints the "
    "openclaw.json settings to merge; never writes that file.")


def add_arguments(p) -> None:
    p.add_argument("dir", nargs="?", default=".", metavar="DIR", help="where (default: here)")
    p.add_argument("--git", action="store_true",
                   help="initialise a git repository there and make the first commit")
    p.add_argument("--openclaw-snippet", action="store_true",
                   help="only print the openclaw.json settings for DIR (JSON5); write nothing")
    p.add_argument("--full", action="store_true",
                   help="into a folder that holds notes, also add the rest of the starter "
                        "that is missing (bootstrap files, typed folders, templates, "
                        "Obsidian settings)")
    p.add_argument("--dry-run", action="store_true",
                   help="list what would be written; write nothing")
    p.add_argument("--add-hooks", action="store_true",
                   help="when the repository's .pre-commit-config.yaml (at its top, which may "
                        "be above DIR) exists without vaultkit's hooks: add them to it (one "
                        "entry appended to `repos:`); without it the lines to add are printed")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="do not list the files, only what was skipped and the snippet")


def run(args) -> int:
    from pathlib import Path

    from vaultkit.cli.starter import git_toplevel, init_vault, openclaw_snippet

    target = Path(args.dir)
    if args.openclaw_snippet:
        sys.stdout.write(openclaw_snippet(target.resolve()))
        return 0
    # an agent's existing workspace: offer the baseline before the hooks go on
    adopting = target.is_dir() and any(
        p.suffix == ".md" for p in target.rglob("*.md") if ".git" not in p.parts)
    minimal = adopting and not args.full
    if args.dry_run and args.git:
        from vaultkit.core.errors import VaultkitError

        raise VaultkitError("--dry-run writes nothing, so it cannot go with --git")
    result = init_vault(target, git=args.git, minimal=minimal, dry_run=args.dry_run,
                        add_hooks=args.add_hooks)
    out = sys.stdout
    verb = "would create" if args.dry_run else "created "
    if not args.quiet or args.dry_run:
        for rel in result.created:
            out.write(f"{verb} {rel}\n")
    for rel in result.skipped:
        out.write(f"skipped  {rel} ({result.reasons.get(rel, 'exists; left unchanged')})\n")
    for note in result.notes:
        out.write(f"note     {note}\n")
    hooks = result.hooks
    if hooks is not None:
        _report_hooks(out, hooks, args.dry_run)
    kept = f", {len(result.skipped)} skipped" if result.skipped else ""
    if args.dry_run:
        out.write(f"\n{len(result.created)} files would be written in {target}{kept}; "
                  "nothing written (run it without --dry-run to write them).\n")
        _hook_lines(out, hooks)
        return 0
    if minimal and not result.created:  # (init run again: nothing was added)
        out.write(f"\nvaultkit is set up in {target} already: 0 files written{kept}; "
                  "`vaultkit init --full` adds the rest of the starter (bootstrap files, "
                  "typed folders, templates, Obsidian settings) where missing.\n")
    elif minimal:
        out.write(f"\nvaultkit set up in {target}: {len(result.created)} files written{kept}. "
                  "The folder holds notes already, so only what vaultkit needs was added; "
                  "`vaultkit init --full` adds the rest of the starter (bootstrap files, "
                  "typed folders, templates, Obsidian settings) where missing.\n")
    else:
        out.write(f"\nStarter vault in {target}: {len(result.created)} files written{kept}.\n")
    if result.git:
        out.write(f"git: {result.git}\n")
    config_hint = target.resolve().parent / "openclaw.json"
    out.write("\nMerge these settings into your openclaw.json (usually ~/.openclaw/openclaw.json; "
              f"vaultkit never edits it; `vaultkit audit` also reads {config_hint}):\n\n")
    out.write(openclaw_snippet(target.resolve()))
    out.write("\nNext (paste the lines in order):\n")
    repository = None if result.git else git_toplevel(target)
    config = hooks.config if hooks is not None and hooks.done in ("created", "added") \
        and hooks.rel != "." else None  # (the top's, beside the vault: committed with it)
    for line in next_steps(target, git_done=bool(result.git), adopting=adopting,
                           repository=repository, config=config):
        out.write(f"  {line}\n")
    _hook_lines(out, hooks)
    return 0


def _hook_lines(out, hooks) -> None:
    """The lines to add to a repository's top configuration that init did not write."""
    if hooks is not None and hooks.lines:
        out.write(f"\nvaultkit's hooks for {_vault(hooks)}: add these lines under `repos:` "
                  f"in {hooks.config} (pre-commit reads only the repository's top one):\n\n")
        out.write(hooks.lines)


def _vault(hooks) -> str:
    return "this vault" if hooks.rel == "." else f"{hooks.rel}/"


def _report_hooks(out, hooks, dry_run: bool) -> None:
    """Where the hooks of a vault below its repository's top went (one line)."""
    top = f"{hooks.config} (the repository's top, where pre-commit reads it"
    if hooks.done == "created":
        verb = "would create" if dry_run else "created "
        out.write(f"{verb} {top}; the hooks are given {hooks.rel}/)\n")
    elif hooks.done == "added":
        verb = "would add" if dry_run else "added   "
        out.write(f"{verb} vaultkit's hooks for {_vault(hooks)} to {top})\n")
    elif hooks.done == "present":
        out.write(f"skipped  {hooks.config} (has vaultkit's hooks for {_vault(hooks)} already)\n")
    else:
        out.write(f"skipped  {hooks.config} ({hooks.why})\n")


def next_steps(target, *, git_done: bool, adopting: bool = False,
               repository: str | None = None, config=None) -> list[str]:
    """Shell lines that work pasted one after the other: one `cd`, then paths from there.
    ``config``: the repository's top .pre-commit-config.yaml init wrote, to commit too."""
    import os
    import shlex
    from pathlib import Path

    lines = []
    if Path(target) != Path("."):
        lines.append(f"cd {shlex.quote(str(target))}")
    if repository:  # already in a repository: commit what init added, no second `git init`
        inside = Path(repository).resolve() != Path(target).resolve()
        also = f" {shlex.quote(os.path.relpath(config, target))}" if config is not None else ""
        lines.append(f"git add .{also} && git commit -m 'Add the vaultkit starter files'"
                     + (f"   # into the repository at {repository}; for a repository of its "
                        "own, init the vault outside it with --git" if inside
                        else "   # `git status` first shows what that adds"))
    elif not git_done:
        lines.append("git init && git add -A && git commit -m 'Start the memory vault'"
                     "   # (or init --git)")
    if adopting:  # weeks of an agent's notes: accept today's findings, block new ones
        lines.append("vaultkit check   # what the existing notes hold today")
        lines.append("vaultkit check --write-baseline && git add vaultkit-baseline.json"
                     "   # accept them: the hook blocks only new ones")
    lines.append("pre-commit install   # vaultkit's hooks on every commit")
    lines.append("vaultkit snapshot   # memory kept between commits; keep it running: "
                 "vaultkit watch --service systemd|launchd|cron")
    lines.append("vaultkit audit   # the survival checklist")
    return lines

"""``vaultkit init``: write the starter vault."""

from __future__ import annotations

import sys

HELP = "create a starter vault (never overwrites an existing file)"
DESCRIPTION = (
    "Write a starter vault: bootstrap files, memory/ with today's journal and INDEX.md, the "
    "typed folders, Obsidian templates and settings, .gitignore and a .pre-commit-config.yaml "
    "pinned to this vaultkit. Into a folder that has files it only adds what is missing and "
    "changes no existing byte. Prints the openclaw.json settings to merge; never writes that "
    "file.")


def add_arguments(p) -> None:
    p.add_argument("dir", nargs="?", default=".", metavar="DIR", help="where (default: here)")
    p.add_argument("--git", action="store_true",
                   help="initialise a git repository there and make the first commit")
    p.add_argument("--openclaw-snippet", action="store_true",
                   help="only print the openclaw.json settings for DIR (JSON5); write nothing")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="do not list the files, only what was skipped and the snippet")


def run(args) -> int:
    from pathlib import Path

    from vaultkit.starter import init_vault, openclaw_snippet

    target = Path(args.dir)
    if args.openclaw_snippet:
        sys.stdout.write(openclaw_snippet(target.resolve()))
        return 0
    # an agent's existing workspace: offer the baseline before the hooks go on
    adopting = target.is_dir() and any(
        p.suffix == ".md" for p in target.rglob("*.md") if ".git" not in p.parts)
    result = init_vault(target, git=args.git)
    out = sys.stdout
    if not args.quiet:
        for rel in result.created:
            out.write(f"created  {rel}\n")
    for rel in result.skipped:
        out.write(f"skipped  {rel} ({result.reasons.get(rel, 'exists; left unchanged')})\n")
    for note in result.notes:
        out.write(f"note     {note}\n")
    kept = f", {len(result.skipped)} skipped" if result.skipped else ""
    out.write(f"\nStarter vault in {target}: {len(result.created)} files written{kept}.\n")
    if result.git:
        out.write(f"git: {result.git}\n")
    config_hint = target.resolve().parent / "openclaw.json"
    out.write("\nMerge these settings into your openclaw.json (usually ~/.openclaw/openclaw.json; "
              f"vaultkit never edits it; `vaultkit audit` also reads {config_hint}):\n\n")
    out.write(openclaw_snippet(target.resolve()))
    step = 1
    out.write("\nNext:\n")
    if not result.git:
        out.write(f"  {step}. cd {target} && git init && git add -A && git commit -m 'Start the memory vault'"
                  "   (or rerun with --git)\n")
        step += 1
    if adopting:
        out.write(f"  {step}. vaultkit check {target}   # what the existing notes hold today\n")
        out.write(f"  {step + 1}. vaultkit check --write-baseline {target} && git -C {target} add "
                  "vaultkit-baseline.json   # accept today's findings: the hook blocks only new "
                  "ones\n")
        step += 2
    out.write(f"  {step}. cd {target} && pre-commit install   # vaultkit's hooks on every commit\n")
    out.write(f"  {step + 1}. vaultkit audit {target}   # the survival checklist\n")
    return 0

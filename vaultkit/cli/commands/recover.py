"""``vaultkit recover``: bring back the memory a loss event in the history lost."""

from __future__ import annotations

import sys

HELP = "bring back lost journal lines and deleted notes that `vaultkit history` lists"
DESCRIPTION = (
    "Recover a memory-loss event that `vaultkit history` lists (by its id or its first four "
    "characters or more, or a commit), or --all of them, without rewriting history and "
    "without touching what "
    "was written since. Lost journal lines, and lines cut from a typed, knowledge or topic "
    "note, are put back where they stood, around what was written since: an overwritten "
    "journal becomes its old lines followed by the new text, as an append would have left "
    "it, with no heading or marker added (a journal's committed HEAD text stays first, put "
    "back at its start if it was overwritten; lines a commit lost follow it; committed lines "
    "the work tree lost since HEAD come back in place too, an edit of one left as edited). "
    "Lines cut "
    "from MEMORY.md and the other bootstrap files, and those of a file gone since, go to "
    "the recovery note memory/semantic/recovered.md; deleted notes are restored to their "
    "path if it is free, else beside it (NAME.recovered-<sha7>.md). Each line is written "
    "once: a second run, or one after `vaultkit watch` restored them, recovers nothing "
    "new. Commit the result as usual: it passes check and the append-only hook.")


def add_arguments(p) -> None:
    from vaultkit.cli import add_format_arguments, add_output_argument, add_vault_arguments

    p.usage = ("vaultkit recover [PATH] EVENT | [PATH] --all [--dry-run] [--json] "
               "[--root DIR] [--profile NAME|FILE]")
    p.add_argument("words", nargs="*", metavar="[PATH] EVENT",
                   help="the vault (default: here), then an event id from `vaultkit history` "
                        "(or its first four characters or more, or a commit); with --all, only "
                        "the vault")
    p.add_argument("--all", action="store_true",
                   help="every loss event not recovered yet (a journal edit, a MEMORY.md prune "
                        "within its allowance and a removal accepted on purpose are not losses: "
                        "name one by its id)")
    p.add_argument("--dry-run", action="store_true",
                   help="say what would be written; write nothing, not even the snapshot a run "
                        "records first, so a loss since the last snapshot is not seen (run "
                        "`vaultkit snapshot` first)")
    add_format_arguments(p, ('text', 'json'))
    add_output_argument(p)
    add_vault_arguments(p, cache=False)


def run(args) -> int:
    from vaultkit.cli.commands.history import open_history_settings, scan_all
    from vaultkit.core.errors import VaultkitError
    from vaultkit.memory.recover import recover, select

    words = list(args.words)  # [PATH] EVENT, or [PATH] with --all
    if not (len(words) <= 1 if args.all else 1 <= len(words) <= 2):
        raise VaultkitError("give one EVENT id from `vaultkit history` (after the vault's "
                            "PATH, if any), or --all")
    args.event = None if args.all else words.pop()
    args.path = words[0] if words else "."
    root, settings = open_history_settings(args)
    # (--dry-run writes nothing, not even a snapshot: a loss since the last one is not seen)
    history = scan_all(root, settings, record=not args.dry_run, work_tree=True)
    for warning in history.warnings:  # versions over the read bound, or missing
        print(f"vaultkit: warning: {warning}", file=sys.stderr)
    events = select(history.events, args.event, args.all)
    results = recover(root, settings, events, dry_run=args.dry_run)
    if args.format == "json":
        from vaultkit.vault.outbound import dumps

        print(dumps({"dryRun": args.dry_run, "recovered": [r.to_dict() for r in results]},
                    indent=2))
        return 0
    from vaultkit.vault.outbound import clean_line

    verb = {"append": "would append" if args.dry_run else "appended",
            "restore": "would restore" if args.dry_run else "restored",
            "put-back": "would put back" if args.dry_run else "put back"}
    done = 0
    for r in results:
        e = r.event
        when = (f"lost from the work tree since HEAD {e.commit[:10]}" if e.source == "work-tree"
                else f"lost in {e.commit[:10]} on {e.day}")
        if r.action == "skip":
            if not args.all or not e.recovered:
                print(clean_line(f"{e.id} {e.kind} {e.path}: {r.reason}"))
            continue
        done += 1
        what = (f"{r.lines} line{'s' * (r.lines != 1)} to {r.path}" if r.action == "append"
                else f"{r.lines} line{'s' * (r.lines != 1)} where "
                     f"{'it' if r.lines == 1 else 'they'} stood in {r.path}"
                if r.action == "put-back"
                else f"{e.path} as {r.path}" if r.path != e.path else e.path)
        if r.reason == "committed start restored":  # the journal starts with HEAD's text again
            what = (f"{'would put' if args.dry_run else 'put'} the committed lines (HEAD) "
                    f"back at the start of {r.path}"
                    + (f", then {r.lines} line{'s' * (r.lines != 1)} brought back"
                       if r.lines else "")
                    + ", then what was written since")
            print(clean_line(f"{e.id} {e.kind}: {what} ({when})"))
            continue
        print(clean_line(f"{e.id} {e.kind}: {verb[r.action]} {what} ({when})"))
    if done == 0:
        print("nothing to recover" + (": every loss event is recovered" if args.all else "")
              # (no snapshot taken: what changed since the last one is not judged)
              + (" (as of the last snapshot: --dry-run records none)" if args.dry_run else ""))
    elif not args.dry_run:
        print(f"{done} event{'s' * (done != 1)} recovered; review the changes and commit them",
              file=sys.stderr)
    return 0

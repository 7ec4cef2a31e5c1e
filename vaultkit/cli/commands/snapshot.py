"""``vaultkit snapshot``: record the memory files that changed, on a private git ref."""

from __future__ import annotations

import sys

HELP = "record the memory files changed since the last snapshot (private ref, never your branch)"
DESCRIPTION = (
    "Record every memory file (bootstrap files, journals, archive, typed and topic notes) whose "
    "content changed since the last snapshot as one commit on the private ref "
    "refs/vaultkit/snapshots of the vault's repository (a bare repository under "
    ".vaultkit/snapshots.git in a folder that is not in git). HEAD, the index, the work tree, "
    "the stash and your branches are never touched; it works before the first commit. Nothing "
    "changed: nothing written. Snapshots older than [snapshots] keep-days (default 30) are "
    "dropped. The hook compares a staged journal with them; `vaultkit history` and `vaultkit "
    "recover` find and bring back what was lost between commits. Run it every few minutes "
    "(`vaultkit watch --service cron` prints the crontab line), or run `vaultkit watch`.")


def add_arguments(p) -> None:
    from vaultkit.cli import add_format_arguments, add_output_argument, add_vault_arguments

    p.add_argument("vault_path", nargs="?", default=".", metavar="PATH",
                   help="the vault (default: here)")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--report", action="store_true",
                      help="print the store's size (snapshots, oldest, newest, bytes) and "
                           "take no snapshot")
    what.add_argument("--push", metavar="REMOTE",
                      help="after the snapshot, push the snapshot ref to REMOTE (force: the "
                           "retention rewrites it). Off by default: snapshots hold every "
                           "memory file as it was. Refused, nothing pushed, while a snapshot "
                           "holds a credential (see --drop-secrets)")
    what.add_argument("--drop-secrets", action="store_true",
                      help="rewrite the snapshots without the credentials they hold (each "
                           "line holding one taken out of every snapshot; everything else "
                           "kept) and take no snapshot")
    what.add_argument("--forget", metavar="PATH", action="append",
                      help="rewrite the snapshots without every version of PATH (a vault "
                           "path; repeatable): a journal deleted on purpose no longer counts "
                           "as a loss. Takes no snapshot")
    p.add_argument("--no-prune", action="store_true",
                   help="keep snapshots older than [snapshots] keep-days this time")
    add_format_arguments(p, ("text", "json"))
    add_output_argument(p)
    p.add_argument("-q", "--quiet", action="store_true",
                   help="print nothing unless something went wrong (for cron)")
    add_vault_arguments(p, cache=False)


def run(args) -> int:
    import datetime as dt
    import time

    started = time.time_ns()  # (before the vault is found: what the record may vouch for)
    from vaultkit.memory.memset import open_settings
    from vaultkit.vault.snapshots import open_store, snapshot_settings

    root, settings = open_settings(args)
    snapshot_settings(settings)  # a bad [snapshots] table is reported before anything is written
    if args.report:
        store = open_store(root, settings)
        report = store.size_report() if store is not None else {
            "ref": None, "store": None, "snapshots": 0, "oldest": None, "newest": None,
            "objects": 0, "bytes": 0, "keepDays": snapshot_settings(settings).keep_days}
        _warn(store)
        if args.format == "json":
            import json

            print(json.dumps(report, indent=2))
        elif report["snapshots"] == 0:
            print("no snapshots yet: run `vaultkit snapshot` (or `vaultkit watch`)")
        else:
            def when(stamp):
                return dt.datetime.fromtimestamp(stamp).strftime("%Y-%m-%d %H:%M")

            print(f"{report['snapshots']} snapshot{'s' * (report['snapshots'] != 1)} on "
                  f"{report['ref']} in {report['store']}, {when(report['oldest'])} to "
                  f"{when(report['newest'])}; {report['objects']:,} objects, "
                  f"{report['bytes']:,} bytes on disk (before git's own packing); kept "
                  f"{report['keepDays']} days")
        return 0
    if args.drop_secrets:
        return _drop_secrets(root, settings, args)
    if args.forget:
        return _forget(root, settings, args)
    store = open_store(root, settings, create=True)
    seen: dict = {}
    result = store.snapshot(prune=not args.no_prune, seen=seen)
    if args.root is None and args.profile is None:
        # what the next run with nothing changed checks instead of all of this
        from vaultkit.vault.quicksnap import remember

        remember(args.vault_path, root, settings, store, seen, started)
    _warn(store)  # (what a bounded read of the chain left out: said even with --quiet)
    pushed = None
    if args.push:
        held = store.credentials()  # what the push would send, scanned before it is sent
        if held:
            return _refuse_push(store, held, args)
        pushed = store.push(args.push)
    if args.format == "json":
        import json

        out = result.to_dict()
        out.update(ref=store.ref, pushed=pushed)
        print(json.dumps(out, indent=2, ensure_ascii=False))
        return 0
    if args.quiet:
        return 0
    if result.commit is None:
        print(f"nothing changed since the last snapshot ({result.files} files on {store.ref})")
    else:
        names = ", ".join(result.changed[:5]) + (" …" if len(result.changed) > 5 else "")
        gone = f", {len(result.removed)} removed" if result.removed else ""
        print(f"snapshot {result.commit[:10]} on {store.ref}: {len(result.changed)} changed"
              f"{gone} of {result.files} files" + (f" ({names})" if result.changed else ""))
    if result.pruned:
        print(f"dropped {result.pruned} snapshot{'s' * (result.pruned != 1)} older than "
              f"{snapshot_settings(settings).keep_days} days")
    if pushed:
        print(f"pushed {store.ref} to {pushed}", file=sys.stderr)
    return 0


def _warn(store) -> None:
    for warning in store.warnings if store is not None else ():
        print(f"vaultkit: warning: {warning}", file=sys.stderr)


def _when(stamp: int) -> str:
    import datetime as dt

    return dt.datetime.fromtimestamp(stamp).strftime("%Y-%m-%d %H:%M")


def _held_dicts(held) -> list[dict]:
    return [{"snapshot": h.commit, "time": h.time, "path": h.path, "line": h.finding.line,
             "kind": h.finding.kind, "masked": h.finding.masked} for h in held]


def _refuse_push(store, held, args) -> int:
    """Nothing pushed: each credential named (masked) with its snapshot and path."""
    from vaultkit.vault.outbound import clean_line

    for h in held:
        print(clean_line(f"vaultkit: error: not pushed: snapshot {h.commit[:10]} "
                         f"({_when(h.time)}) holds a {h.finding.describe()} in "
                         f"{h.path}:{h.finding.line}"), file=sys.stderr)
    snaps = len({h.commit for h in held})
    print(f"vaultkit: {store.ref} was not pushed to {clean_line(args.push)}: {len(held)} "
          f"credential{'s' * (len(held) != 1)} in {snaps} snapshot{'s' * (snaps != 1)} would "
          "reach it and stay there. Remove each from its note if it is still there, then "
          "take it out of the snapshots with `vaultkit snapshot --drop-secrets` and push "
          "again", file=sys.stderr)
    if args.format == "json":
        from vaultkit.vault.outbound import dumps

        print(dumps({"ref": store.ref, "pushed": None, "credentials": _held_dicts(held)},
                    indent=2, ensure_ascii=False))
    return 1


def _drop_secrets(root, settings, args) -> int:
    from vaultkit.core.bounded import read_regular
    from vaultkit.vault.outbound import clean_line
    from vaultkit.vault.secretscan import has_candidates, scan_text
    from vaultkit.vault.snapshots import file_of, open_store, store_path

    store = open_store(root, settings)
    done = store.drop_secrets() if store is not None else None
    held = done.dropped if done is not None else []
    # a credential still in the note on disk is recorded again by the next snapshot
    still = []
    for path in sorted({h.path for h in held}):
        try:
            text = read_regular(file_of(root, store_path(path)),
                                settings.profile.budgets.max_file_bytes,
                                follow_symlinks=False).decode("utf-8", "replace")
        except OSError:
            continue
        if has_candidates(text) and scan_text(text):
            still.append(path)
    if args.format == "json":
        from vaultkit.vault.outbound import dumps

        print(dumps({"ref": store.ref if store else None, "old": done and done.old,
                     "new": done and done.new, "rewritten": done.rewritten if done else 0,
                     "dropped": _held_dicts(held), "stillOnDisk": still},
                    indent=2, ensure_ascii=False))
    elif not held:
        if not args.quiet:
            print("no snapshot holds a credential: nothing rewritten")
    else:
        if not args.quiet:
            for h in held:
                print(clean_line(f"dropped {h.finding.describe()} from {h.path}:"
                                 f"{h.finding.line} (first in snapshot {h.commit[:10]}, "
                                 f"{_when(h.time)})"))
            print(f"rewrote {done.rewritten} snapshot{'s' * (done.rewritten != 1)} on "
                  f"{store.ref} ({done.old[:10]} -> {done.new[:10]}); the old objects stay "
                  "in this repository until git prunes them (`git gc --prune=now`), and on "
                  "a remote the chain was pushed to before until that remote prunes them")
    for path in still:
        print(clean_line(f"vaultkit: warning: {path} still holds a credential on disk: the "
                         "next snapshot records it again; remove it there, then run "
                         "`vaultkit snapshot --drop-secrets` again"), file=sys.stderr)
    return 1 if still else 0


def _forget(root, settings, args) -> int:
    from vaultkit.core.errors import VaultkitError
    from vaultkit.vault.outbound import clean_line
    from vaultkit.vault.snapshots import open_store

    paths = []
    for given in args.forget:
        path = given.replace("\\", "/").strip()
        while path.startswith("./"):
            path = path[2:]
        if not path or path.startswith("/") or any(p in ("", ".", "..") for p in
                                                   path.split("/")[path.startswith("../"):]):
            raise VaultkitError(f"--forget {clean_line(given)}: not a vault path (such as "
                                "memory/2026-02-16.md)")
        paths.append(path)
    store = open_store(root, settings)
    if store is None:
        raise VaultkitError("--forget: this vault has no snapshots; nothing rewritten")
    old, new, rewritten, held = store.forget(paths)
    if args.format == "json":
        from vaultkit.vault.outbound import dumps

        print(dumps({"ref": store.ref, "old": old, "new": new, "rewritten": rewritten,
                     "forgotten": held}, indent=2, ensure_ascii=False))
    elif not args.quiet:
        print(clean_line(f"forgot {', '.join(held)}: rewrote {rewritten} snapshot"
                         f"{'s' * (rewritten != 1)} on {store.ref} ({old[:10]} -> "
                         f"{new[:10]}); `vaultkit history` and the hook no longer see "
                         "their versions"))
    return 0

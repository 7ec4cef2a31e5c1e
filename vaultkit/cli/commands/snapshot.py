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
    p.add_argument("--report", action="store_true",
                   help="print the store's size (snapshots, oldest, newest, bytes) and take "
                        "no snapshot")
    p.add_argument("--push", metavar="REMOTE",
                   help="after the snapshot, push the snapshot ref to REMOTE (force: the "
                        "retention rewrites it). Off by default: snapshots hold every "
                        "memory file as it was, credentials pasted into a note included")
    p.add_argument("--no-prune", action="store_true",
                   help="keep snapshots older than [snapshots] keep-days this time")
    add_format_arguments(p, ("text", "json"))
    add_output_argument(p)
    p.add_argument("-q", "--quiet", action="store_true",
                   help="print nothing unless something went wrong (for cron)")
    add_vault_arguments(p, cache=False)


def run(args) -> int:
    import datetime as dt

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
    store = open_store(root, settings, create=True)
    result = store.snapshot(prune=not args.no_prune)
    _warn(store)  # (what a bounded read of the chain left out: said even with --quiet)
    pushed = store.push(args.push) if args.push else None
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

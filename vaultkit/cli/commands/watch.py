"""``vaultkit watch``: snapshot each write and put back what a journal lost, at once."""

from __future__ import annotations

import sys

HELP = "snapshot every write to the memory and restore lines a journal loses, within seconds"
DESCRIPTION = (
    "Watch the vault's memory files (file events through the optional watchfiles package, "
    "`pip install 'vaultkit-lint[watch]'`; polling every 2 s without it) and record a snapshot "
    "within a second or two of each write. A journal that lost lines gets them back at "
    "once, where they stood, around what was written since (an edit that keeps most of a "
    "line is no loss; --no-restore only reports); no round runs while git is mid-operation, "
    "and a checkout, pull, reset, commit or stash is a new baseline. MEMORY.md cut, a note "
    "cut by the profile's share or deleted is reported. Every event goes to a log that "
    "`vaultkit history` and `vaultkit audit` read. --service prints (or, with --install, "
    "installs after asking) what keeps it running: a systemd user unit, a launchd agent, or "
    "a crontab line running `vaultkit snapshot` every few minutes where no daemon is wanted.")


def add_arguments(p) -> None:
    from vaultkit.cli import add_vault_arguments

    p.add_argument("vault_path", nargs="?", default=".", metavar="PATH",
                   help="the vault (default: here)")
    p.add_argument("--no-restore", action="store_true",
                   help="report a journal's lost lines, do not put them back")
    p.add_argument("--poll", type=float, metavar="SECONDS",
                   help="poll every SECONDS instead of waiting on file events")
    p.add_argument("--service", choices=("systemd", "launchd", "cron"),
                   help="print the unit, agent or crontab line that keeps snapshots running")
    p.add_argument("--install", action="store_true",
                   help="with --service: install it (asks first; --yes does not ask)")
    p.add_argument("--yes", action="store_true", help="with --install: do not ask")
    add_vault_arguments(p, cache=False)


def run(args) -> int:
    from pathlib import Path

    from vaultkit.core.errors import VaultkitError
    from vaultkit.memory.memset import open_settings
    from vaultkit.vault.snapshots import snapshot_settings

    root, settings = open_settings(args)
    conf = snapshot_settings(settings)
    if args.install and not args.service:
        raise VaultkitError("--install goes with --service systemd|launchd|cron")
    if args.poll is not None and not args.poll > 0:
        raise VaultkitError("--poll: give a number of seconds above 0")
    if args.service:
        from vaultkit.memory.watch import install_service, service_text

        text, target = service_text(args.service, Path(root), interval=conf.interval,
                                    profile=args.profile)
        if not args.install:
            where = (f"# save as {target}, then: " + {
                "systemd": f"systemctl --user daemon-reload && systemctl --user enable --now "
                           f"{Path(str(target)).name}",
                "launchd": f"launchctl load -w {target}"}[args.service]
                     if target else "# add to your crontab (crontab -e):")
            print(where)
            sys.stdout.write(text)
            print("# or run this command again with --install", file=sys.stderr)
            return 0
        what = f"write {target} and enable it" if target else "add this line to your crontab"
        if not args.yes:
            if not sys.stdin.isatty():
                raise VaultkitError(f"--install would {what}: confirm with --yes (no terminal "
                                    "to ask on)")
            sys.stdout.write(text)
            answer = input(f"{what}? [y/N] ").strip().lower()
            if answer not in ("y", "yes"):
                print("nothing installed")
                return 1
        for line in install_service(args.service, text, target):
            print(line)
        return 0
    from vaultkit.memory.watch import Watcher

    from vaultkit.cli.commands._check_server import CheckServer
    from vaultkit.cli.resident import SOCKET

    watcher = Watcher(Path(root), settings, restore=not args.no_restore)
    server = CheckServer(root, watcher.store)
    why_not = server.start()
    print(f"vaultkit: watching {root} (snapshots on {watcher.store.ref}; "
          f"{'restoring' if not args.no_restore else 'reporting'} lost journal lines; "
          f"{'answering `vaultkit check` on ' + SOCKET if why_not is None else why_not}; "
          "Ctrl-C stops)", file=sys.stderr, flush=True)
    try:
        return watcher.run(interval=conf.interval * 60, poll=args.poll)
    finally:
        server.close()

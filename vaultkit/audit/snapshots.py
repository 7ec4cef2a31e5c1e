"""The audit check ``snapshots``: memory written between commits has a copy, kept by something
that runs on its own (a watch service, a crontab line or the heartbeat), and recently."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from vaultkit.audit.context import PASS, TIP, WARN, AuditContext, Check


def check_snapshots(ctx: AuditContext) -> Check:
    from vaultkit.memory.watch import read_events, service_name
    from vaultkit.vault.snapshots import open_store, snapshot_settings

    vault = ctx.vault
    root = Path(vault.root)
    try:
        conf = snapshot_settings(vault.settings)
        store = open_store(root, vault.settings)
    except Exception as exc:  # noqa: BLE001 (VaultkitError, or a ConfigError from [snapshots])
        return Check("snapshots", WARN, f"snapshots cannot be read: {exc}",
                     "fix [snapshots] in vaultkit.toml, then run `vaultkit snapshot`")
    setup = (f"run `vaultkit watch --service systemd --install` (launchd on macOS), or "
             f"`vaultkit watch --service cron --install` for a `vaultkit snapshot` every "
             f"{conf.interval} min, or add `vaultkit snapshot` to the heartbeat")
    keepers = _keepers(root, Path(vault.workspace), service_name(root), store)
    if store is None:
        # vaultkit's own guard not set up: a recommendation (git still keeps what is
        # committed), not a failure
        return Check("snapshots", TIP,
                     "no snapshots: a journal overwritten before the next commit has no copy "
                     "anywhere, and the commit would seal the loss", setup)
    last = store.last_run()
    chain = store.log()
    if last is None and chain:
        last = chain[0].time
    now = ctx.now.timestamp()
    age_min = (now - last) / 60 if last else None
    events = read_events(store, since=now - 30 * 86400)
    restored = sum(1 for e in events if e.get("kind") == "journal-restored")
    reported = sum(1 for e in events if e.get("kind") in ("journal-lines-lost", "memory-cut",
                                                          "note-deleted"))
    extra = ""
    if restored:
        extra += f"; watch restored {restored} journal loss{'es' * (restored != 1)} in 30 days"
    memory = sum(1 for e in events if e.get("kind") == "memory-restored")
    if memory:
        extra += (f"; watch put back {memory} MEMORY.md cut{'s' * (memory != 1)} past the "
                  "pruning allowance in 30 days")
    if reported:
        extra += (f"; {reported} loss{'es' * (reported != 1)} reported in 30 days "
                  "(`vaultkit history` lists them)")
    try:
        from vaultkit.memory.history import scan_snapshot_losses

        open_losses = [e for e in scan_snapshot_losses(root, vault.settings, record=False)
                       if not e.recovered and e.is_loss and e.timestamp >= now - 30 * 86400]
    except Exception:  # noqa: BLE001 (a store git cannot read: the rest still says something)
        open_losses = []
    if open_losses:
        listed = "; ".join(f"{e.kind} {e.path} before the snapshot of {e.date[:16]} ({e.id})"
                           for e in open_losses[:3])
        return Check("snapshots", WARN,
                     f"{len(open_losses)} loss{'es' * (len(open_losses) != 1)} between commits "
                     f"not recovered: {listed}", "run `vaultkit recover --all` (see `vaultkit "
                     "history` first), review and commit")
    found = (f"{len(chain)} snapshot{'s' * (len(chain) != 1)} on {store.ref}, last run "
             f"{_age(age_min)} ago" if age_min is not None else "no snapshot run yet")
    if not keepers:
        return Check("snapshots", WARN, f"{found}, but nothing keeps them running (no watch "
                     f"service, crontab line or heartbeat step){extra}", setup)
    every = conf.interval
    if keepers == ["the heartbeat (HEARTBEAT.md)"]:  # as often as the heartbeat runs
        every = max(every, _heartbeat_minutes(ctx))
    if age_min is None or age_min > 2 * every:
        return Check("snapshots", WARN,
                     f"{found}: older than twice the interval ({every} min) though "
                     f"{keepers[0]} should run them{extra}",
                     "check that it runs (systemctl --user status, launchctl list, crontab -l, "
                     "or the heartbeat's log); `vaultkit snapshot` now records a snapshot")
    return Check("snapshots", PASS, f"{found}, kept by {', '.join(keepers)}{extra}")


def _heartbeat_minutes(ctx: AuditContext) -> int:
    """How often OpenClaw's heartbeat runs (``heartbeat.every``), in minutes."""
    from vaultkit.vault.openclaw import parse_duration

    if ctx.config_error is not None:
        return 60
    every, _ = ctx.setting("heartbeat.every")
    minutes = parse_duration(every)
    return int(minutes) if minutes else 60


def _age(minutes: float | None) -> str:
    if minutes is None:
        return "never"
    if minutes < 90:
        return f"{max(0, int(minutes))} min"
    if minutes < 48 * 60:
        return f"{minutes / 60:.0f} h"
    return f"{minutes / 1440:.0f} days"


def _keepers(root: Path, workspace: Path, name: str, store) -> list[str]:
    """What keeps snapshots running for this vault."""
    found = []
    home = Path.home()
    unit = home / ".config" / "systemd" / "user" / f"{name}.service"
    if unit.is_file():
        found.append(f"the systemd unit {unit.name}")
    agent = home / "Library" / "LaunchAgents" / f"dev.vaultkit.{name}.plist"
    if agent.is_file():
        found.append(f"the launchd agent {agent.name}")
    if _in_crontab(root, name):
        found.append("a crontab line")
    for beat in (workspace / "HEARTBEAT.md", root / "HEARTBEAT.md"):
        try:
            if beat.is_file() and "vaultkit snapshot" in beat.read_text("utf-8", "replace"):
                found.append("the heartbeat (HEARTBEAT.md)")
                break
        except OSError:
            continue
    if store is not None and _watch_running(store):
        found.append("a running `vaultkit watch`")
    return found


def _in_crontab(root: Path, name: str) -> bool:
    from vaultkit.core.gitenv import run_program

    try:
        proc = run_program(["crontab", "-l"], timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return False
    if proc.returncode != 0:
        return False
    for line in proc.stdout.splitlines():
        line = line.strip()
        if line.startswith("#"):
            continue
        if name in line or ("vaultkit snapshot" in line and str(root) in line):
            return True
    return False


def _watch_running(store) -> bool:
    """The newest ``started`` in the event log with no ``stopped`` after it, its process
    still running: a watcher killed outright logs no ``stopped``, and a later process
    given its pid is not it (:mod:`vaultkit.core.processes`)."""
    from vaultkit.core.processes import runs_since
    from vaultkit.memory.watch import read_events

    pid, when = None, None
    for item in read_events(store, since=time.time() - 90 * 86400):
        if item.get("kind") == "started":
            pid = str(item.get("detail", "")).removeprefix("pid ").strip()
            when = item.get("time")
        elif item.get("kind") == "stopped" and \
                str(item.get("detail", "")).removeprefix("pid ").strip() == pid:
            pid = None
    if not pid or not pid.isdigit():
        return False
    return runs_since(int(pid), when if isinstance(when, (int, float)) else None)

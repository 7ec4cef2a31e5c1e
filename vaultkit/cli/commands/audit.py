"""``vaultkit audit``: the survival checklist for a vault and its OpenClaw setup."""

from __future__ import annotations

import sys

HELP = "run the survival checklist (memory, openclaw.json, heartbeat, index, git, hooks)"
DESCRIPTION = (
    "Check a vault and its OpenClaw setup against the survival checklist. Each check passes, "
    "warns or fails, says what it found and how to fix it; a check whose input is not "
    "visible (no openclaw.json found) is unknown (????), and vaultkit's own tooling not set "
    "up yet (its hooks, snapshots, INDEX.md) is a tip (TIP) with the command that sets it "
    "up. Exit 1 when any check fails (warnings, unknowns and tips do not), 2 on a usage "
    "error.")


def add_arguments(p) -> None:
    from vaultkit.cli import add_format_arguments, add_output_argument, add_vault_arguments

    p.add_argument("vault", nargs="?", default=".", metavar="VAULT",
                   help="the vault (default: here)")
    add_vault_arguments(p)
    p.add_argument("--openclaw-config", metavar="PATH",
                   help="openclaw.json to read (default: $OPENCLAW_CONFIG_PATH, else openclaw.json "
                        "in the vault's parent folder, else ~/.openclaw/openclaw.json)")
    p.add_argument("--agent", metavar="ID", help="apply this agent's overrides from agents.list[]")
    p.add_argument("--backup-max-age", type=float, metavar="HOURS",
                   help="git-backup fails when the last commit is older (default: the profile's "
                        "git.backup_max_age_hours, 36)")
    p.add_argument("--skip", metavar="IDS", default="",
                   help="comma-separated check ids not to run (e.g. git-backup,pre-commit)")
    add_format_arguments(p, ('text', 'json'))
    add_output_argument(p)
    p.add_argument("--symbols", choices=("auto", "always", "never"), default="auto",
                   help="✅ ⚠️ ❌ ❔ 💡 instead of PASS/WARN/FAIL/????/TIP (auto: on a "
                        "terminal)")


def run(args) -> int:
    from vaultkit.audit import CHECK_IDS, FAIL, render_json, render_text, run_audit
    from vaultkit.cli.commands._common import open_vault
    from vaultkit.core.errors import VaultkitError

    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    unknown = sorted(skip - set(CHECK_IDS))
    if unknown:
        raise VaultkitError(f"--skip: unknown check {', '.join(unknown)} "
                            f"(known: {', '.join(CHECK_IDS)})")
    if args.backup_max_age is not None and not 0 < args.backup_max_age < float("inf"):
        raise VaultkitError("--backup-max-age must be a positive number of hours")
    from vaultkit.core import progress

    progress.allow(args.format == "text")
    vault = open_vault(args, args.vault)
    if args.agent:
        _check_agent(vault, args)
    checks = run_audit(vault, openclaw_config=args.openclaw_config, agent=args.agent,
                       backup_max_age_hours=args.backup_max_age, skip=skip)
    if args.format == "json":
        sys.stdout.write(render_json(checks))
    else:
        symbols = args.symbols == "always" or (args.symbols == "auto" and sys.stdout.isatty())
        from vaultkit.vault import openclaw

        config, source = openclaw.find_config_with_source(vault, args.openclaw_config)
        where = f"{config} (via {source})" if config else "none found"
        agent = f", agent {args.agent}" if args.agent else ""
        header = f"Survival checklist for {vault.root} (profile {vault.profile.name}{agent})\n"
        if vault.profile.bootstrap_files:
            header += f"openclaw.json: {where}\n"
        else:
            from vaultkit.audit import AGENT_CHECKS

            header += (f"not an agent's workspace: the {len(AGENT_CHECKS)} agent-memory checks "
                       "do not apply\n")
        sys.stdout.write(render_text(checks, symbols=symbols, header=header))
    return 1 if any(c.status == FAIL for c in checks) else 0


def _check_agent(vault, args) -> None:
    """An --agent that the (parsable) config does not list is a usage error."""
    from vaultkit.vault import openclaw
    from vaultkit.core.errors import VaultkitError

    path = openclaw.find_config(vault, args.openclaw_config)
    if path is None:
        raise VaultkitError(f"--agent {args.agent}: no openclaw.json found to read agents.list[] "
                            "from (use --openclaw-config PATH)")
    data, error = openclaw.load_openclaw(path)
    if error is not None:
        return  # the checks report the parse error
    ids = openclaw.agent_ids(data)
    if args.agent not in ids:
        known = ", ".join(ids) if ids else "none"
        raise VaultkitError(f"--agent {args.agent}: not in agents.list[] of {path} "
                            f"(agents there: {known})")

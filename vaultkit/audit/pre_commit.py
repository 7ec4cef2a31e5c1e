"""The audit check ``pre-commit``: the vaultkit hooks are installed and can run."""

from __future__ import annotations

import os
from pathlib import Path

from vaultkit.audit.context import FAIL, PASS, TIP, AuditContext, Check

HOOK_IDS = ("vaultkit-check", "vaultkit-index", "vaultkit-colors", "vaultkit-append-only",
            "vaultkit-audit")


def check_pre_commit(ctx: AuditContext) -> Check:
    import yaml

    from vaultkit.core.bounded import (MAX_CONFIG_BYTES, LimitError, load_yaml, read_regular,
                                       read_text)

    top = ctx.git_top()
    base = top if isinstance(top, Path) else ctx.vault.root
    config = base / ".pre-commit-config.yaml"
    example = ("add the vaultkit hooks to .pre-commit-config.yaml (`vaultkit init` writes one "
               "pinned to this version), then run `pre-commit install`")
    if not config.is_file():
        # vaultkit's own hooks not set up: a recommendation, not a failure
        return Check("pre-commit", TIP, f"no .pre-commit-config.yaml in {base}", example)
    try:
        data = load_yaml(read_text(config))
    except LimitError as exc:
        return Check("pre-commit", FAIL, f"{config} is not read: {exc}",
                     f"rewrite {config} as a plain pre-commit configuration")
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        return Check("pre-commit", FAIL, f"{config} is not valid YAML{where}: "
                                         f"{getattr(exc, 'problem', None) or exc}",
                     f"fix the YAML in {config}")
    except (OSError, UnicodeDecodeError) as exc:
        why = getattr(exc, "strerror", None) or exc
        return Check("pre-commit", FAIL, f"{config} cannot be read: {why}",
                     f"rewrite {config} as UTF-8 text")
    ids = []
    revs = []
    local_entries = []  # (hook id, entry) of `repo: local` hooks pre-commit runs as commands
    repos = data.get("repos") if isinstance(data, dict) else None
    for repo in repos if isinstance(repos, list) else []:
        if not isinstance(repo, dict):
            continue
        for hook in repo.get("hooks") or []:
            if isinstance(hook, dict) and str(hook.get("id", "")).startswith("vaultkit-"):
                ids.append(str(hook["id"]))
                if repo.get("rev"):
                    revs.append(str(repo["rev"]))
                if repo.get("repo") == "local" and hook.get("language") in ("system", "script") \
                        and isinstance(hook.get("entry"), str):
                    local_entries.append((str(hook["id"]), hook["entry"], hook.get("language")))
    known = [i for i in dict.fromkeys(ids) if i in HOOK_IDS]
    if not known:
        return Check("pre-commit", TIP, f"{config} uses no vaultkit hook",
                     "add a repo entry with the hooks vaultkit-check, vaultkit-index, "
                     "vaultkit-colors and vaultkit-append-only (and vaultkit-audit at pre-push)")
    used = ", ".join(known)
    if top is None or top is False:
        return Check("pre-commit", FAIL, f"{config} uses {used}, but the vault is not a git "
                                         "repository, so no hook can run",
                     f"git init {ctx.vault.root}, then run `pre-commit install` there")
    proc = ctx.git("rev-parse", "--git-path", "hooks/pre-commit")
    hook = None
    if proc is not None and proc.returncode == 0 and proc.stdout.strip():
        hook = Path(proc.stdout.strip())
        if not hook.is_absolute():
            hook = ctx.vault.root / hook
    installed = False
    if hook is not None and hook.is_file():
        try:
            installed = b"pre-commit" in read_regular(hook, MAX_CONFIG_BYTES)
        except OSError:
            installed = False
    pin = ""
    if revs:
        from vaultkit import __version__

        pinned = sorted(set(revs))
        pin = f"; pinned to {', '.join(pinned)}"
        if all(r.lstrip("v") != __version__ for r in pinned):
            pin += f" (this vaultkit is {__version__})"
    if not installed:
        return Check("pre-commit", TIP,
                     f"{config.name} uses {used}{pin}, but the git hook is not installed "
                     f"({hook or '.git/hooks/pre-commit'} missing or not pre-commit's)",
                     f"run `pre-commit install` in {top}")
    unresolved, found_in = _hook_commands(local_entries, base)
    if unresolved:
        names = ", ".join(f"{hid} (`{cmd}`)" for hid, cmd in unresolved)
        return Check("pre-commit", FAIL,
                     f"{config.name}: {names} cannot run: not found on this PATH, so every "
                     "commit fails (a cron job's PATH is only /usr/bin:/bin)",
                     "put the folder that holds `vaultkit` on the PATH of whatever commits (in "
                     "crontab: PATH=/path/to/venv/bin:/usr/bin:/bin), or install vaultkit "
                     "with pipx so it is in ~/.local/bin")
    where = ""
    outside = sorted({d for d in found_in if d not in _STANDARD_BIN})
    if outside:
        where = (f"; hooks run {', '.join(outside)}/…, which a cron job or GUI git client only "
                 "finds with that folder on its PATH")
    return Check("pre-commit", PASS,
                 f"{config.name} uses {used}{pin}; the git hook is installed{where}")


_STANDARD_BIN = ("/usr/local/bin", "/usr/bin", "/bin", "/usr/local/sbin", "/usr/sbin", "/sbin")


def _hook_commands(entries, base: Path) -> tuple[list[tuple[str, str]], list[str]]:
    """Local hooks whose command does not resolve (``[(id, command)]``), and the folders
    of those that do. pre-commit runs a ``system`` hook's entry from the PATH and a
    ``script`` hook's from the repository."""
    import shlex
    import shutil

    unresolved, found_in = [], []
    for hook_id, entry, language in entries:
        try:
            words = shlex.split(entry)
        except ValueError:
            words = entry.split()
        if not words:
            continue
        command = words[0]
        if language == "script" or "/" in command:
            path = Path(command).expanduser()
            path = path if path.is_absolute() else base / path
            resolved = str(path) if path.is_file() and os.access(path, os.X_OK) else None
        else:
            resolved = shutil.which(command)
        if resolved is None:
            unresolved.append((hook_id, command))
        else:
            found_in.append(os.path.dirname(resolved))
    return unresolved, found_in

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
    commands = []  # (hook id, the words after the command: the entry's, then `args`)
    repos = data.get("repos") if isinstance(data, dict) else None
    for repo in repos if isinstance(repos, list) else []:
        if not isinstance(repo, dict):
            continue
        for hook in repo.get("hooks") or []:
            if isinstance(hook, dict) and str(hook.get("id", "")).startswith("vaultkit-"):
                ids.append(str(hook["id"]))
                if _on_commit(hook, data):
                    commands.append((str(hook["id"]), _words(hook)))
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
    aimed = _aimed_elsewhere(commands, top, ctx.vault.root)
    if aimed is not None:
        return aimed
    where = ""
    outside = sorted({d for d in found_in if d not in _STANDARD_BIN})
    if outside:
        where = (f"; hooks run {', '.join(outside)}/…, which a cron job or GUI git client only "
                 "finds with that folder on its PATH")
    return Check("pre-commit", PASS,
                 f"{config.name} uses {used}{pin}; the git hook is installed{where}")


# the hooks given no file names: they act on the vault their command names, else on the
# folder pre-commit runs them in, the repository's top
_NAMING_HOOKS = ("vaultkit-index", "vaultkit-colors", "vaultkit-audit")
_COMMAND_NAMES = frozenset({"check", "index", "graph", "audit"})  # (what the hooks run)


def _on_commit(hook: dict, config: dict) -> bool:
    """Whether pre-commit runs ``hook`` on ``git commit``: its ``stages`` (else the
    configuration's ``default_stages``; else every stage) name the commit stage."""
    stages = hook.get("stages", config.get("default_stages"))
    return not isinstance(stages, list) or bool({"pre-commit", "commit"} & set(map(str, stages)))


def _words(hook: dict) -> list[str]:
    """What follows vaultkit's command in a hook's ``entry`` (a local hook's: ``vaultkit
    index --stage``, ``python -m vaultkit index``), then its ``args``."""
    import shlex

    words: list[str] = []
    entry = hook.get("entry")
    if isinstance(entry, str):
        try:
            words = shlex.split(entry)
        except ValueError:
            words = entry.split()
        at = next((i for i, w in enumerate(words) if w in _COMMAND_NAMES), 0)
        words = words[at + 1:]
    args = hook.get("args")
    if isinstance(args, list):
        words += [str(a) for a in args]
    return words


def _named_folders(words: list[str]) -> list[str]:
    """The folders a vaultkit command's words name: its positional words and ``--root``'s."""
    named, after_root = [], False
    for word in words:
        if after_root:
            named.append(word)
            after_root = False
        elif word == "--root":
            after_root = True
        elif word.startswith("--root="):
            named.append(word.partition("=")[2])
        elif not word.startswith("-"):
            named.append(word)
    return named


def _aimed_elsewhere(commands, top: Path, root: Path) -> Check | None:
    """For a vault below the repository's top (``monorepo/agent/vault``): the hooks given no
    file names that run on a commit and whose command names no folder, or another one. pre-commit runs them from the
    top; with no folder named, one that finds no vault there fails every commit (FAIL), one
    that does acts on that vault instead (TIP). None when each names this vault, or when
    the vault is the repository's top."""
    top, root = Path(top).resolve(), Path(root).resolve()
    if top == root:
        return None
    rel = os.path.relpath(root, top)
    from vaultkit.vault.scan import NotAVault, find_root

    def vault_of(folder: Path) -> Path | None:
        try:
            return find_root(folder) if folder.is_dir() else None
        except (NotAVault, OSError):
            return None

    unnamed, elsewhere, broken = [], [], []
    for hook_id, words in commands:
        if hook_id not in _NAMING_HOOKS:
            continue
        folders = [(top / f).resolve() for f in _named_folders(words)]
        if root in folders:
            continue
        if not folders:
            unnamed.append(hook_id)
        elif any(vault_of(f) is None for f in folders):
            broken.append(hook_id)
        else:
            elsewhere.append(hook_id)
    fix = f"give them the vault's folder: `args: [{rel}]` (what `vaultkit init {rel}` writes)"
    if broken:
        return Check("pre-commit", FAIL,
                     f"{', '.join(dict.fromkeys(broken))} name a folder that is no vault: "
                     "every commit fails", fix)
    other = vault_of(top) if unnamed else None
    if unnamed and other is None:
        return Check("pre-commit", FAIL,
                     f"{', '.join(dict.fromkeys(unnamed))} name no vault folder, and "
                     f"pre-commit runs them from {top}, which is no vault: every commit fails",
                     fix)
    if unnamed:
        return Check("pre-commit", TIP,
                     f"{', '.join(dict.fromkeys(unnamed))} name no vault folder: pre-commit "
                     f"runs them from {top}, so they act on the vault at {other}, not on this "
                     "one", fix)
    if elsewhere:
        return Check("pre-commit", TIP,
                     f"{', '.join(dict.fromkeys(elsewhere))} name another vault than this "
                     f"one ({rel}): they leave this vault alone", fix)
    return None


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

"""Every git process vaultkit starts, with the repository's command hooks switched off.

A vault's repository is not trusted: its ``.git/config`` can come from a clone, a
pulled symlink or text an agent was given. Git runs commands named in that
configuration (``core.fsmonitor``, hooks, pagers, external diff and text-conversion
drivers, clean/smudge filters, credential helpers, signature programs). Reading a
vault's history must never execute any of them, so every git call goes through
:func:`run_git`, which

- sets them to nothing on the command line (``-c`` outranks every config file):
  ``core.fsmonitor``, ``core.hooksPath=/dev/null``, ``core.pager``,
  ``credential.helper``, ``log.showSignature``, ``commit.gpgSign``, ``protocol.allow``;
- passes ``--no-ext-diff --no-textconv`` to ``diff`` and ``log``;
- for the commands that read the working tree (``status``, ``diff`` without
  ``--cached``, ``add``, ``commit``, ``mv``, ``rm``, ``hash-object``), empties every
  ``filter.<name>.clean``, ``smudge`` and ``process`` the repository's own
  configuration names (through ``GIT_CONFIG_COUNT``, which takes any name; the user's
  global filters, git-lfs for one, stay);
- ignores the system config (``GIT_CONFIG_NOSYSTEM``), never prompts
  (``GIT_TERMINAL_PROMPT=0``), drops ``GIT_EXTERNAL_DIFF`` and never takes
  ``index.lock`` for a read (``GIT_OPTIONAL_LOCKS=0``).

``GIT_DIR``, ``GIT_WORK_TREE``, ``GIT_INDEX_FILE`` and ``GIT_PREFIX`` are kept by
default: pre-commit runs hooks with them set (``git commit -a`` and
``git commit -- path`` stage into a temporary index), and the hook must see that
index. Callers that address another repository than the one being committed
(``audit``, ``init --git``) pass ``keep_repo_env=False``.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

# Repository-controlled settings that name a command, switched off. An empty
# core.fsmonitor means "off" to every git version (a path before 2.36, a bool since).
SAFE_CONFIG = (
    "core.fsmonitor=",
    "core.hooksPath=/dev/null",
    "core.pager=cat",
    "core.quotepath=off",
    "credential.helper=",
    "log.showSignature=false",
    "commit.gpgSign=false",
    "protocol.allow=never",
    "diff.ignoreSubmodules=all",  # a submodule's own config is not read through status/diff
)
REPO_ENV = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_PREFIX")
_DIFF_COMMANDS = frozenset({"diff", "log", "show"})
_FILTER_KEYS = ("clean", "smudge", "process")

# (cwd, repository env, the bytes of the repository's config files) -> the filter names
# that configuration defines: a long-running process (``vaultkit watch``, the MCP server)
# asks git again once a config file changes, so a filter added meanwhile is switched off too
_FILTERS: dict[tuple, tuple[str, ...]] = {}
_FILTERS_KEPT = 16  # (cwd, configuration) pairs remembered
_CONFIG_AT_MOST_BYTES = 1 << 20


def git_env(*, keep_repo_env: bool = True, extra: dict | None = None) -> dict[str, str]:
    """The environment of a git process (see the module docstring)."""
    env = dict(os.environ)
    if not keep_repo_env:
        for name in REPO_ENV:
            env.pop(name, None)
    env.pop("GIT_EXTERNAL_DIFF", None)
    env["GIT_CONFIG_NOSYSTEM"] = "1"
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["GIT_OPTIONAL_LOCKS"] = "0"
    env["GIT_PAGER"] = "cat"
    env["PAGER"] = "cat"
    if extra:
        env.update(extra)
    return env


def git_command(args, *, hooks_path_visible: bool = False,
                network: bool = False) -> list[str]:
    """``git -c ... <args>``: the argument list with the command hooks off.

    ``network`` (an explicit push the user asked for): the transport protocols are allowed
    and the credential helpers of the user's *global* configuration are kept (those of the
    repository's own config stay off, like every other command it names)."""
    args = list(args)
    cmd = ["git"]
    for setting in SAFE_CONFIG:
        if hooks_path_visible and setting.startswith("core.hooksPath="):
            continue  # (only `rev-parse --git-path hooks/...`, which runs nothing)
        if network and setting.startswith("protocol.allow="):
            continue
        cmd += ["-c", setting]
    if network:
        for helper in _global_helpers():
            cmd += ["-c", f"credential.helper={helper}"]
    sub = _subcommand(args)
    if sub is not None and args[sub] in _DIFF_COMMANDS:
        args[sub + 1:sub + 1] = ["--no-ext-diff", "--no-textconv"]
    return cmd + args


def run_git(args, *, cwd: Path | str | None = None, input: bytes | str | None = None,
            text: bool = False, timeout: float | None = None, keep_repo_env: bool = True,
            hooks_path_visible: bool = False, network: bool = False,
            env: dict | None = None) -> subprocess.CompletedProcess:
    """Run git safely; returns the completed process (output captured).

    Raises FileNotFoundError when git is not installed and subprocess.TimeoutExpired
    after ``timeout`` seconds, like :func:`subprocess.run`.
    """
    args = list(args)
    full_env = git_env(keep_repo_env=keep_repo_env, extra=env)
    if _reads_worktree(args):
        names = _filter_names(_where(args, cwd), full_env)
        if names:
            _add_env_config(full_env, [(f"filter.{n}.{k}", "") for n in names
                                       for k in _FILTER_KEYS]
                            + [(f"filter.{n}.required", "false") for n in names])
    return subprocess.run(git_command(args, hooks_path_visible=hooks_path_visible,
                                      network=network),
                          cwd=None if cwd is None else str(cwd), input=input,
                          capture_output=True, text=text, env=full_env, timeout=timeout)


def popen_git(args, *, cwd: Path | str | None = None, stderr=subprocess.PIPE,
              keep_repo_env: bool = True, env: dict | None = None,
              stdin=subprocess.DEVNULL) -> subprocess.Popen:
    """Start git safely with its output on a pipe, to read as it comes (a long ``git log``).

    The same switched-off hooks as :func:`run_git`; a history read never touches the
    work tree, so no filter settings are needed. ``stdin``: a file to read its input from
    (never a pipe the caller writes while it reads: that can deadlock).
    """
    return subprocess.Popen(git_command(args), cwd=None if cwd is None else str(cwd),
                            stdin=stdin, stdout=subprocess.PIPE, stderr=stderr,
                            env=git_env(keep_repo_env=keep_repo_env, extra=env))


def run_program(args: list[str], *, input: str | None = None,
                timeout: float = 60) -> subprocess.CompletedProcess:
    """A program other than git that the user asked vaultkit to use (``crontab``,
    ``systemctl --user``, ``launchctl`` for ``vaultkit watch --service``), as text, never
    through a shell. Raises OSError when it cannot start, subprocess.TimeoutExpired."""
    return subprocess.run(list(args), input=input, capture_output=True, text=True,
                          timeout=timeout, stdin=None if input is not None
                          else subprocess.DEVNULL)


def _global_helpers() -> list[str]:
    try:
        proc = subprocess.run(["git", "config", "--global", "--get-all", "credential.helper"],
                              capture_output=True, text=True, timeout=30,
                              env=git_env(keep_repo_env=False))
    except (OSError, subprocess.TimeoutExpired):
        return []
    return [h for h in proc.stdout.splitlines() if h.strip()] if proc.returncode == 0 else []


def _subcommand(args: list[str]) -> int | None:
    """Index of the git subcommand in ``args`` (after ``-C dir`` and ``-c k=v``)."""
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-C", "-c"):
            i += 2
            continue
        if a.startswith("-"):
            i += 1
            continue
        return i
    return None


def _where(args: list[str], cwd) -> str:
    """The folder git runs in: ``cwd`` changed by each ``-C dir`` before the subcommand."""
    where = os.path.abspath(cwd) if cwd is not None else os.getcwd()
    sub = _subcommand(args)
    i = 0
    while i < (len(args) if sub is None else sub):
        if args[i] == "-C" and i + 1 < len(args):
            where = os.path.join(where, args[i + 1])
            i += 2
            continue
        i += 1
    return where


def _reads_worktree(args: list[str]) -> bool:
    sub = _subcommand(args)
    if sub is None:
        return False
    name = args[sub]
    if name == "diff":
        return not any(a in ("--cached", "--staged") for a in args[sub + 1:])
    return name in ("status", "add", "commit", "mv", "rm", "stash", "checkout", "reset", "restore",
                    "hash-object")


def _repository_config(where: str, env: dict) -> tuple | None:
    """The bytes of the repository's own config files (``config`` and ``config.worktree``
    of its git folder and of the common one), the repository found from ``where`` as git
    finds it (``GIT_DIR``, else the first ``.git`` or git folder up the tree); None when
    that is not plain (an include: the file it names is not read here, a file that is not
    regular or too big), and then the filters are asked of git every time."""
    from vaultkit.core.bounded import ReadRefused, read_regular

    git_dir = env.get("GIT_DIR")
    if git_dir:
        git_dir = os.path.join(where, git_dir)
    else:
        folder = where
        while True:
            dot = os.path.join(folder, ".git")
            if os.path.isdir(dot):
                git_dir = dot
            elif os.path.isfile(dot):
                try:
                    line = read_regular(dot, 4096).decode("utf-8", "surrogateescape")
                except (ReadRefused, OSError):
                    return None
                if not line.startswith("gitdir:"):
                    return None
                git_dir = os.path.join(folder, line[len("gitdir:"):].strip())
            elif os.path.isfile(os.path.join(folder, "HEAD")) \
                    and os.path.isdir(os.path.join(folder, "objects")):
                git_dir = folder  # (a bare repository: the snapshot store's)
            if git_dir or os.path.dirname(folder) == folder:
                break
            folder = os.path.dirname(folder)
        if not git_dir:
            return None
    folders = [git_dir]
    common = env.get("GIT_COMMON_DIR")
    try:
        common = common or read_regular(os.path.join(git_dir, "commondir"), 4096).decode(
            "utf-8", "surrogateescape").strip()
    except (ReadRefused, OSError):
        pass
    if common:
        folders.append(os.path.join(git_dir, common))
    out = []
    for folder in folders:
        for name in ("config", "config.worktree"):
            path = os.path.join(folder, name)
            try:
                data = read_regular(path, _CONFIG_AT_MOST_BYTES)
            except FileNotFoundError:
                data = None
            except (ReadRefused, OSError):
                return None
            if data is not None and b"include" in data.lower():
                return None
            out.append((os.path.abspath(path), data))
    return tuple(out)


def _filter_names(cwd, env: dict) -> tuple[str, ...]:
    """The ``filter.<name>`` drivers the repository's configuration defines."""
    config = _repository_config(str(cwd), env)
    # (asked of git once per folder and configuration: its config files' bytes)
    key = (str(cwd), *(env.get(n) for n in REPO_ENV), config)
    if config is None or key not in _FILTERS:
        names: list[str] = []
        try:
            # (only the repository's own: a user's global filters, git-lfs say, are theirs)
            proc = subprocess.run(
                git_command(["config", "--show-scope", "-z", "--name-only", "--get-regexp",
                             r"^filter\..*\.(clean|smudge|process)$"]),
                cwd=None if cwd is None else str(cwd), capture_output=True, env=env,
                timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            proc = None
        if proc is not None and proc.returncode == 0:
            fields = proc.stdout.decode("utf-8", "surrogateescape").split("\0")
            for scope, item in zip(fields[::2], fields[1::2]):
                name = item.partition(".")[2].rpartition(".")[0]
                if scope in ("local", "worktree") and name and name not in names:
                    names.append(name)
        if config is None:
            return tuple(names)
        _FILTERS[key] = tuple(names)
        while len(_FILTERS) > _FILTERS_KEPT:
            del _FILTERS[next(iter(_FILTERS))]
    return _FILTERS[key]


def _add_env_config(env: dict, pairs: list[tuple[str, str]]) -> None:
    """Append ``pairs`` to GIT_CONFIG_COUNT/KEY/VALUE (command-line scope, any key)."""
    try:
        count = int(env.get("GIT_CONFIG_COUNT", "0") or 0)
    except ValueError:
        count = 0
    for key, value in pairs:
        env[f"GIT_CONFIG_KEY_{count}"] = key
        env[f"GIT_CONFIG_VALUE_{count}"] = value
        count += 1
    env["GIT_CONFIG_COUNT"] = str(count)

"""The starter vault: copy ``vault-template/`` without touching what exists.

``init_vault`` writes every template file that is missing and nothing else: an existing
file (or symlink, or anything else at that path) is skipped and listed, never opened for
writing. Text files get their placeholders filled (``{{vaultkit_version}}``, ``{{today}}``,
``{{init_time}}``, ``{{vaultkit_repo}}``); ``memory/TODAY.md`` becomes today's journal.
Files under ``templates/`` are Obsidian note templates and keep their own ``{{date}}`` and
``{{title}}`` for Obsidian to fill. Two files are generated rather than copied, and only when
init created them or they are missing: ``memory/INDEX.md`` (by the index generator, so that
``check`` finds it fresh) and ``.obsidian/graph.json`` (Obsidian's defaults plus the
profile's colour groups).
"""

from __future__ import annotations

import datetime as dt
import os
import re
import subprocess
from contextlib import suppress as _suppress
from dataclasses import dataclass, field
from pathlib import Path

from vaultkit import __version__
from vaultkit.core.atomic import write_atomic
from vaultkit.core.errors import VaultkitError
from vaultkit.core.resources import template_dir

_RENDERED_SUFFIXES = (".md", ".json", ".yaml", ".yml", ".toml")
_NOT_RENDERED = ("templates/",)  # Obsidian templates: their {{...}} are Obsidian's

GIT_FALLBACK_NAME = "vaultkit"
GIT_FALLBACK_EMAIL = "vaultkit@localhost"
FIRST_COMMIT_MESSAGE = "Start the memory vault (vaultkit init)"


@dataclass
class InitResult:
    created: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    reasons: dict[str, str] = field(default_factory=dict)  # skipped path -> why
    generated: list[str] = field(default_factory=list)  # created files filled by a generator
    git: str = ""  # what --git did, one line
    notes: list[str] = field(default_factory=list)  # anything else worth saying
    hooks: HookSetup | None = None  # a vault below its repository's top: where its hooks went


@dataclass
class HookSetup:
    """vaultkit's hooks for a vault in a subfolder of its repository: pre-commit reads only
    the repository's top ``.pre-commit-config.yaml``, so that is where they go."""
    config: Path  # the repository's top .pre-commit-config.yaml
    rel: str  # the vault's folder from the repository's top (posix)
    done: str  # "created", "added", "present", or "" (not written: ``lines`` to add by hand)
    lines: str = ""  # the entry to add under `repos:` when it was not written
    why: str = ""  # why it was not written


def render_template(data: bytes, today: dt.date, now: dt.datetime | None = None) -> bytes:
    text = data.decode("utf-8")
    now = now or dt.datetime.combine(today, dt.time(9, 0))
    for token, value in (("{{vaultkit_version}}", __version__), ("{{today}}", today.isoformat()),
                         ("{{init_time}}", now.strftime("%H:%M"))):
        text = text.replace(token, value)
    return text.encode("utf-8")


def template_files(today: dt.date) -> list[tuple[Path, str]]:
    """``(source file, vault-relative output path)`` for every template file, sorted."""
    source = template_dir()
    out = []
    for folder, dirs, files in os.walk(source):
        dirs.sort()
        rel_folder = Path(folder).relative_to(source)
        for name in sorted(files):
            rel = (rel_folder / name).as_posix()
            if name == "TODAY.md":
                rel = rel[: -len("TODAY.md")] + f"{today.isoformat()}.md"
            out.append((Path(folder) / name, rel))
    return out


# what an existing workspace needs to run vaultkit, and no more: its settings (with the
# version the hooks need), the hooks, and a .gitignore for vaultkit's cache. Everything
# else the starter holds (bootstrap files, typed folders, templates, Obsidian settings)
# changes what the agent loads or how Obsidian shows the vault, so it is written only
# when asked (`init --full`) or into a new folder
MINIMAL_FILES = ("vaultkit.toml", ".pre-commit-config.yaml", ".gitignore")


def init_vault(target: Path, *, git: bool = False, today: dt.date | None = None,
               now: dt.datetime | None = None, minimal: bool = False,
               dry_run: bool = False, add_hooks: bool = False) -> InitResult:
    """Write the starter vault into ``target``; never change an existing file. ``minimal``:
    only :data:`MINIMAL_FILES`; ``dry_run``: list what would be written, write nothing.
    A ``target`` below its git repository's top gets its hooks in the top's
    ``.pre-commit-config.yaml`` (:func:`setup_hooks`); ``add_hooks``: add them to one that
    exists there."""
    now = now or dt.datetime.now()
    today = today or now.date()
    target = Path(target)
    if target.exists() and not target.is_dir():
        raise VaultkitError(f"{target}: exists and is not a folder")
    if dry_run:
        return _planned(target, today, minimal, now, add_hooks)
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise VaultkitError(f"{target}: cannot create the folder: {exc.strerror or exc}") from None
    root = target.resolve()
    result = InitResult()

    def skip(rel: str, why: str) -> None:
        result.skipped.append(rel)
        result.reasons[rel] = why

    from vaultkit.core.confine import make_folders, write_target

    files = template_files(today)
    # the starter's own Obsidian settings are the files init may write inside .obsidian/
    owned = {rel for _, rel in files if rel.startswith(".obsidian/")}
    if minimal:
        files = [(src, rel) for src, rel in files if rel in MINIMAL_FILES]
    top = repository_top(root)
    if top is not None:  # a vault below its repository's top: its hooks go to the top
        files = [(src, rel) for src, rel in files if rel != CONFIG_NAME]
        result.hooks = setup_hooks(top, root, today, now, add=add_hooks)
        if os.path.lexists(root / CONFIG_NAME):  # (an earlier init's, or a copy)
            result.notes.append(f"{CONFIG_NAME} here is never read by pre-commit, which reads "
                                f"only {top / CONFIG_NAME}; left unchanged")
    for src, rel in files:
        dest = target / rel
        if os.path.lexists(dest):
            skip(rel, "exists; left unchanged")
            continue
        if src.name == ".gitkeep" and dest.parent.is_dir() and any(dest.parent.iterdir()):
            skip(rel, "folder already has files")
            continue
        try:  # (a folder symlinked out of the vault or into .git/ is refused, not followed)
            make_folders(root, (root / rel).parent, owned=owned)
            dest = write_target(root, rel, owned=owned)
        except VaultkitError as exc:
            why = exc.args[0].split(": ", 1)[-1]
            skip(rel, why.replace("; nothing written there", "").replace("; not written", ""))
            continue
        data = src.read_bytes()
        if (src.name.endswith(_RENDERED_SUFFIXES) or src.name.startswith(".")) \
                and not rel.startswith(_NOT_RENDERED):
            data = render_template(data, today, now)
        if src.name == "TODAY.md":  # the first entry at the level the journals there use
            from vaultkit.memory.journal import workspace_entry_level

            if workspace_entry_level((root / rel).parent, Path(rel).name) == 2:
                data = re.sub(rb"(?m)^### ", b"## ", data)
        try:
            with open(dest, "xb"):  # claim the name: fails if it appeared meanwhile
                pass
        except FileExistsError:
            skip(rel, "exists; left unchanged")
            continue
        except OSError as exc:
            skip(rel, f"cannot be written: {exc.strerror or exc}")
            continue
        try:
            write_atomic(dest, data, root=root, owned=owned)
        except BaseException:  # remove the empty placeholder, or a retry would skip this file
            with _suppress(OSError):
                if os.lstat(dest).st_size == 0:
                    os.unlink(dest)
            raise
        result.created.append(rel)

    if top is None and CONFIG_NAME in result.skipped:
        _own_config(result, root, today, now, add_hooks, dry_run=False)
    if not minimal:
        _generate(target, result)
    if git:
        result.git = _git_first_commit(target)
    return result


def _own_config(result: InitResult, root: Path, today: dt.date, now: dt.datetime | None,
                add_hooks: bool, dry_run: bool) -> None:
    """The vault's own ``.pre-commit-config.yaml`` exists (the vault is its repository's
    top, or in none): when it has none of vaultkit's hooks, give the lines to add, or add
    them (``add_hooks``), instead of only saying it was left unchanged."""
    hooks = setup_hooks(root, root, today, now, add=add_hooks, dry_run=dry_run)
    if hooks.done == "present":
        return  # (the plain "exists; left unchanged")
    result.skipped.remove(CONFIG_NAME)
    result.reasons.pop(CONFIG_NAME, None)
    result.hooks = hooks


def _planned(target: Path, today: dt.date, minimal: bool, now: dt.datetime,
             add_hooks: bool) -> InitResult:
    """What :func:`init_vault` would write (``created``) and leave (``skipped``), with
    nothing written: a file is planned when nothing is at its path."""
    result = InitResult()
    top = repository_top(target)
    if top is not None:
        result.hooks = setup_hooks(top, target.resolve(), today, now, add=add_hooks,
                                   dry_run=True)
    for src, rel in template_files(today):
        if minimal and rel not in MINIMAL_FILES:
            continue
        if top is not None and rel == CONFIG_NAME:
            continue
        dest = target / rel
        if os.path.lexists(dest):
            result.skipped.append(rel)
            result.reasons[rel] = "exists; left unchanged"
        elif src.name == ".gitkeep" and dest.parent.is_dir() and any(dest.parent.iterdir()):
            result.skipped.append(rel)
            result.reasons[rel] = "folder already has files"
        else:
            result.created.append(rel)
    graph_rel = ".obsidian/graph.json"
    if not minimal and not os.path.lexists(target / graph_rel):
        result.created.append(graph_rel)
    if top is None and CONFIG_NAME in result.skipped and target.is_dir():
        _own_config(result, target.resolve(), today, now, add_hooks, dry_run=True)
    return result


def _generate(target: Path, result: InitResult) -> None:
    """Fill INDEX.md and graph.json, the two generated files, where init may write them."""
    from vaultkit.vault.loader import load_vault

    try:
        vault = load_vault(target, root=target, use_cache=False)
    except Exception as exc:  # a vaultkit.toml the user already had may not load
        result.notes.append(f"INDEX.md and graph colours not generated: {exc}")
        return
    index_rel = vault.profile.expand(vault.profile.index.path)
    if index_rel in result.created:
        from vaultkit.links.indexgen import write_index

        try:
            write_index(vault)
            result.generated.append(index_rel)
        except Exception as exc:
            result.notes.append(f"{index_rel}: not generated ({exc}); run `vaultkit index`")
    graph_rel = ".obsidian/graph.json"
    graph = target / graph_rel
    if not os.path.lexists(graph):
        from vaultkit.links.obsidian import write_colors

        try:
            write_colors(vault)
            result.created.append(graph_rel)
            result.generated.append(graph_rel)
        except Exception as exc:
            result.notes.append(f"{graph_rel}: not written ({exc})")
    else:
        result.skipped.append(graph_rel)
        result.reasons[graph_rel] = "exists; left unchanged (`vaultkit graph --write-colors` merges the colours)"


def _git(target: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    from vaultkit.core.gitenv import run_git

    try:
        return run_git(["-C", str(target), *args], text=True, timeout=120, keep_repo_env=False,
                       env=env)
    except FileNotFoundError:
        raise VaultkitError("--git: git is not installed") from None


def git_toplevel(target: Path) -> str | None:
    """The top folder of the git repository ``target`` lies in, or None (no repository, no
    git)."""
    try:
        top = _git(target, "rev-parse", "--show-toplevel")
    except VaultkitError:
        return None
    return top.stdout.strip() or None if top.returncode == 0 else None


CONFIG_NAME = ".pre-commit-config.yaml"


def repository_top(folder: Path) -> Path | None:
    """The top of the git repository ``folder`` lies below (not at), or None: the folder
    that needs its hooks in that top's ``.pre-commit-config.yaml``. (``folder`` may not
    exist yet: git is asked from the nearest folder above it that does.)"""
    here = Path(folder).resolve()
    existing = here
    while not existing.is_dir() and existing != existing.parent:
        existing = existing.parent
    top = git_toplevel(existing)
    if top is None:
        return None
    top_path = Path(top).resolve()
    return top_path if top_path != here and top_path in here.parents else None


def _yaml_scalar(text: str) -> str:
    """``text`` as a YAML scalar that reads back as itself, in a block or a ``[...]`` list:
    plain when it is made of safe characters, else a JSON string (which YAML reads)."""
    import json

    if re.fullmatch(r"[A-Za-z0-9_/^\\][A-Za-z0-9_./^\\-]*", text):
        return text
    return json.dumps(text, ensure_ascii=False)


def files_pattern(rel: str) -> str:
    """pre-commit's ``files:`` (a Python regular expression searched in each name from the
    repository's top) for the files of the folder ``rel``."""
    return "^" + re.sub(r"([.^$*+?{}\[\]\\|()])", r"\\\1", rel) + "/"


_ARGS_HOOKS = ("vaultkit index --stage", "vaultkit graph --write-colors", "vaultkit audit")


def subfolder_config(rel: str, today: dt.date, now: dt.datetime | None = None) -> str:
    """The starter's ``.pre-commit-config.yaml`` for a vault in the folder ``rel`` of its
    repository, to go at the repository's top: pre-commit reads it only there and runs the
    hooks from there, so the hooks that take no file names are given the vault's folder
    (``args``) and the check hook only the vault's files (``files``)."""
    text = render_template((template_dir() / CONFIG_NAME).read_bytes(), today, now).decode()
    out, pointed = [], 0
    for line in text.splitlines(keepends=True):
        if line.startswith("# vaultkit's hooks for this vault,"):
            line = line.replace("this vault,", f"the vault in {rel}/,")
        if line == "repos:\n":
            out.append("# pre-commit reads this file only at the repository's top and runs "
                       "the hooks from there:\n# each hook is given the vault's folder "
                       "(args) or only its files (files).\n")
        out.append(line)
        m = re.fullmatch(r"( +)entry: (.*?)\s*", line)
        if m and m.group(2) in _ARGS_HOOKS:
            folder = rel if not rel.startswith("-") else "./" + rel  # (not an option)
            out.append(f"{m.group(1)}args: [{_yaml_scalar(folder)}]   # the vault's folder\n")
            pointed += 1
        elif m and m.group(2) == "vaultkit check --hook":
            out.append(f"{m.group(1)}files: {_yaml_scalar(files_pattern(rel))}   "
                       "# the vault's files only\n")
            pointed += 1
    if pointed != len(_ARGS_HOOKS) + 1:  # (the template and this function go together)
        raise VaultkitError(f"{CONFIG_NAME}: the starter's hooks are not the expected ones")
    return "".join(out)


def _entry(config: str) -> str:
    """The ``- repo: local`` entry of a configuration :func:`subfolder_config` made."""
    return config[config.index("  - repo: local"):]


def setup_hooks(top: Path, vault: Path, today: dt.date, now: dt.datetime | None = None, *,
                add: bool = False, dry_run: bool = False) -> HookSetup:
    """Put vaultkit's hooks for the vault at ``vault`` (below ``top``) where pre-commit reads
    them: a new ``.pre-commit-config.yaml`` at ``top``; in one that exists, added only when
    ``add`` (an entry appended, nothing else changed), else the lines to add are given."""
    from vaultkit.core.bounded import MAX_CONFIG_BYTES, LimitError, load_yaml, read_regular

    rel = vault.relative_to(top).as_posix()
    config = top / CONFIG_NAME
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:  # (a name git and the file system allow, YAML cannot hold)
        return HookSetup(config=config, rel=rel.encode("utf-8", "surrogateescape")
                         .decode("utf-8", "backslashreplace"), done="",
                         why="the vault's folder name is not UTF-8, which a pre-commit "
                             "configuration cannot name: rename the folder, then run init again")
    whole = rel == "."  # (the vault is the repository's top: the starter's hooks as they are)
    text = (render_template((template_dir() / CONFIG_NAME).read_bytes(), today, now).decode()
            if whole else subfolder_config(rel, today, now))
    entry = _entry(text)
    setup = HookSetup(config=config, rel=rel, done="")
    if not os.path.lexists(config):
        if not dry_run:
            try:
                with open(config, "xb"):  # claim the name: fails if it appeared meanwhile
                    pass
            except OSError as exc:
                setup.lines, setup.why = entry, f"cannot be written: {exc.strerror or exc}"
                return setup
            try:
                write_atomic(config, text.encode("utf-8"))
            except BaseException:  # remove the empty placeholder, or a retry would skip it
                with _suppress(OSError):
                    if os.lstat(config).st_size == 0:
                        os.unlink(config)
                raise
        setup.done = "created"
        return setup
    try:
        old = read_regular(config, MAX_CONFIG_BYTES, follow_symlinks=False).decode("utf-8")
        data = load_yaml(old)
    except (OSError, UnicodeDecodeError, LimitError, ValueError) as exc:
        setup.lines = entry
        setup.why = f"cannot be read ({getattr(exc, 'strerror', None) or exc}); left unchanged"
        return setup
    except Exception as exc:  # yaml.YAMLError: the file is the user's to mend
        setup.lines = entry
        setup.why = f"is not valid YAML ({str(exc).splitlines()[0]}); left unchanged"
        return setup
    repos = data.get("repos") if isinstance(data, dict) else None
    if not isinstance(repos, list):
        setup.lines, setup.why = entry, "has no `repos:` list; left unchanged"
        return setup
    pattern = None if whole else files_pattern(rel)
    if any(isinstance(r, dict) and isinstance(h, dict) and h.get("files") == pattern
           and str(h.get("id", "")).startswith("vaultkit-")
           for r in repos for h in (r.get("hooks") or [] if isinstance(r, dict) else [])):
        setup.done = "present"
        return setup
    new = _appended(old, data, entry, load_yaml)
    # (the lines to paste, indented as the file's own items are)
    setup.lines = entry if new is None else new[len(old) + (not old.endswith("\n")):]
    if not add:
        setup.why = "exists; left unchanged: add the lines below, or run this again with --add-hooks"
        return setup
    if new is None:
        setup.why = ("exists; its `repos:` list is not the file's last block in block style, "
                     "so nothing was added")
        return setup
    if not dry_run:
        try:
            write_atomic(config, new.encode("utf-8"))
        except (OSError, VaultkitError) as exc:
            setup.why = f"cannot be written: {getattr(exc, 'strerror', None) or exc}"
            return setup
    setup.done, setup.lines = "added", ""
    return setup


def _appended(old: str, data: dict, entry: str, load_yaml) -> str | None:
    """``old`` with ``entry`` appended as the last item of its ``repos:`` list, indented as
    its items are; None when the result would not read as exactly that (a ``repos:`` in
    flow style, or not the file's last block)."""
    import textwrap

    base = textwrap.dedent(entry)
    found = re.search(r"(?m)^repos:[ \t]*(?:#.*)?\n(?:[ \t]*(?:#.*)?\n)*([ \t]*)- ", old)
    indents = [found.group(1)] if found else []
    indents += [i for i in ("  ", "") if i not in indents]
    for indent in indents:
        new = (old if old.endswith("\n") else old + "\n") \
            + textwrap.indent(base, indent, lambda line: line.strip() != "")
        try:
            reread = load_yaml(new)
        except Exception:
            continue
        expected = dict(data, repos=[*data["repos"], load_yaml("repos:\n" + entry)["repos"][0]])
        if reread == expected:
            return new
    return None


def _git_first_commit(target: Path) -> str:
    """``git init`` (unless ``target`` already is a repository's top) and commit everything."""
    top = _git(target, "rev-parse", "--show-toplevel")
    here = top.returncode == 0 and Path(top.stdout.strip()).resolve() == target.resolve()
    if top.returncode == 0 and not here:
        return (f"not initialised: {target} is inside the repository {top.stdout.strip()}; "
                "commit there")
    if not here:
        proc = _git(target, "init", "-q")
        if proc.returncode != 0:
            raise VaultkitError(f"--git: git init failed: {proc.stderr.strip()}")
    elif _git(target, "rev-parse", "-q", "--verify", "HEAD").returncode == 0:
        return "already a git repository with commits; nothing committed (commit the new files yourself)"
    identity = []
    if not _git(target, "config", "user.name").stdout.strip():
        identity += ["-c", f"user.name={GIT_FALLBACK_NAME}"]
    if not _git(target, "config", "user.email").stdout.strip():
        identity += ["-c", f"user.email={GIT_FALLBACK_EMAIL}"]
    proc = _git(target, "add", "-A")
    if proc.returncode != 0:
        raise VaultkitError(f"--git: git add failed: {proc.stderr.strip()}")
    proc = _git(target, *identity, "commit", "-q", "-m", FIRST_COMMIT_MESSAGE)
    if proc.returncode != 0:
        raise VaultkitError(f"--git: git commit failed: {(proc.stderr or proc.stdout).strip()}")
    head = _git(target, "rev-parse", "--short", "HEAD").stdout.strip()
    who = " (as vaultkit <vaultkit@localhost>: no git identity is configured)" if identity else ""
    return f"initialised the git repository and committed {head}{who}"


def openclaw_snippet(workspace: Path) -> str:
    """The openclaw.json settings the survival checklist needs, as JSON5 to merge."""
    return f"""{{
  // vaultkit: the settings the survival checklist needs. Merge them into your
  // openclaw.json (JSON5: comments and trailing commas are fine).
  agents: {{
    defaults: {{
      workspace: {_json5_string(str(workspace))},
      compaction: {{
        // room for the memory flush before compaction (the runtime default 20000 is too tight)
        reserveTokensFloor: 40000,
        memoryFlush: {{
          enabled: true,
          softThresholdTokens: 4000,
          systemPrompt: "Session nearing compaction. Store durable memories now.",
        }},
      }},
      // HEARTBEAT.md: hourly memory writes, weekly distillation ("0m" would disable it)
      heartbeat: {{ every: "1h" }},
    }},
  }},
}}
"""


def _json5_string(text: str) -> str:
    import json

    return json.dumps(text, ensure_ascii=False)

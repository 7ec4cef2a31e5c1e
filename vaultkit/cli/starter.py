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
               dry_run: bool = False) -> InitResult:
    """Write the starter vault into ``target``; never change an existing file. ``minimal``:
    only :data:`MINIMAL_FILES`; ``dry_run``: list what would be written, write nothing."""
    now = now or dt.datetime.now()
    today = today or now.date()
    target = Path(target)
    if target.exists() and not target.is_dir():
        raise VaultkitError(f"{target}: exists and is not a folder")
    if dry_run:
        return _planned(target, today, minimal)
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

    if not minimal:
        _generate(target, result)
    if git:
        result.git = _git_first_commit(target)
    return result


def _planned(target: Path, today: dt.date, minimal: bool) -> InitResult:
    """What :func:`init_vault` would write (``created``) and leave (``skipped``), with
    nothing written: a file is planned when nothing is at its path."""
    result = InitResult()
    for src, rel in template_files(today):
        if minimal and rel not in MINIMAL_FILES:
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

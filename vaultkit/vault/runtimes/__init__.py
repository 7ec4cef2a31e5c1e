"""What each agent runtime loads from the vault at session start, simulated exactly.

The runtimes are data in the profile (``runtimes:`` in the rule pack, ``[runtime.NAME]`` and
``runtimes = [...]`` in ``vaultkit.toml``; :class:`~vaultkit.vault.profile.RuntimeSpec`):
the files, their order, the limits and their unit, where and how a file is cut and the
marker written there. This package runs the loading algorithms those specs name, one module each
(:mod:`.registry` maps ``loader:`` to it; :mod:`.base` holds what they share):

``workspace-set`` (OpenClaw)
    A fixed list of files in the workspace, filtered by session type, each cut to a
    per-file limit and all together to a total limit, in UTF-16 units of the right-trimmed
    text; a cut file keeps a head and a tail around a marker (AGENTS.md: a head, a digest
    of its policy lines and a tail).
``claude-memory`` (Claude Code)
    ``CLAUDE.md``, ``.claude/CLAUDE.md`` and ``CLAUDE.local.md`` from the repository root
    down to the workspace, the rule files without ``paths``, ``@path`` imports up to a
    depth, all loaded in full; the auto-memory index ``MEMORY.md`` cut to its first lines
    or units, at a line end.
``project-docs`` (Codex)
    The first of a list of names per folder from the git root down to the workspace,
    joined with a blank line, the whole cut to a byte budget without a marker.
``entry-store`` (Hermes Agent)
    ``MEMORY.md`` and ``USER.md`` of its memories folder as entries, each file a block
    under a usage header; past twice its limit (4,000 at least) a head and a tail.
``memory-summary`` (Codex memories)
    ``memories/memory_summary.md`` trimmed and cut in the middle to a token budget.
``context-md`` (Gemini CLI)
    ``GEMINI.md`` (or the configured names) from the workspace up to the git root, its
    ``@path`` imports inlined between comments, each file in a block naming its path.

Only files inside the repository (the git root above the workspace, else the workspace)
are read: user-level and managed files (``~/.claude/CLAUDE.md``, ``~/.codex/AGENTS.md``)
are named in :attr:`RuntimeContext.notes`, not simulated. That holds for real paths too
(:class:`~.base.Files`): a file, import or folder on the way that is a symlink out of the
repository or into ``.git/``, and a file that is not a regular one, is a piece marked
``refused`` (never read, never shown); a file with other hard links is measured, and
:attr:`RuntimeContext.shown_text` leaves its text out. Sources: docs/context.md.
"""

from __future__ import annotations

import os
from pathlib import Path

from vaultkit.vault.runtimes.base import (  # noqa: F401  (the package's public names)
    _JS_SPACE, _JS_SPACE_RUN, _CJK, MIN_TRIMMED_CONTENT, RUNTIME_ORDER, SESSIONS, Files,
    ImportProblem, Loader, Piece, Request, RuntimeContext, _Files, _chain, _cjk, _fmt,
    _line_of, _within, estimate_tokens, git_root, js_trim_end, shown, u16_prefix,
    u16_suffix, u16len, units)
from vaultkit.vault.runtimes.claude_memory import (  # noqa: F401
    _CODE_SPAN, _FENCE, _HTML_BLOCK, _IMPORT, _auto_memory, _claude_text, _has_paths,
    _import_target, _rule_files, _strip_comments_and_code, auto_memory_path,
    cut_auto_memory, find_imports, load_claude)
from vaultkit.vault.runtimes.project_docs import load_codex  # noqa: F401
from vaultkit.vault.runtimes.registry import REGISTRY, Registered  # noqa: F401
from vaultkit.vault.runtimes.workspace_set import (  # noqa: F401
    _Cut, _clamp, _cut_digest, _digest, _lost_lines, cut_file, load_openclaw)


# -- detection ---------------------------------------------------------------------------

def detected(vault) -> list[str]:
    """The runtimes that apply: ``runtimes`` from vaultkit.toml, else those whose marker
    files exist in the workspace (``detect``; ``openclaw.json`` also in its parent folder),
    OpenClaw for a vault with its memory folder; an ``AGENTS.md`` alone means Codex."""
    profile = vault.profile
    if profile.runtimes_enabled is not None:
        return list(profile.runtimes_enabled)
    ws = Path(vault.workspace)
    out = []
    for name, spec in profile.runtimes.items():
        for marker in spec.detect:
            if os.path.lexists(ws / marker) or (marker.endswith(".json")
                                                and os.path.isfile(ws.parent / marker)):
                out.append(name)
                break
    if not profile.memory_prefix or os.path.isdir(Path(vault.root) / profile.memory_dir):
        # a memory folder (or a memory-only vault) is OpenClaw's layout
        for name, spec in profile.runtimes.items():
            if spec.loader == "workspace-set" and name not in out:
                out.append(name)
    if not out:
        for name, spec in profile.runtimes.items():
            if spec.loader == "project-docs" and any(os.path.isfile(ws / n) for n in spec.files):
                out.append(name)
    return out


# -- entry point -------------------------------------------------------------------------

LOADERS = {"workspace-set": "openclaw", "claude-memory": "claude-code", "project-docs": "codex"}


def load_context(vault, name: str, session: str | None = None, *, openclaw_config=None,
                 agent: str | None = None) -> RuntimeContext:
    """What runtime ``name`` (a key of the profile's ``runtimes``) loads from ``vault``."""
    spec = vault.profile.runtimes[name]
    files = Files(vault)
    ctx = REGISTRY[spec.loader].load(Request(vault, spec, files, session,
                                             openclaw_config, agent))
    ctx.runtime = name
    for piece in ctx.loaded:
        piece.linked = files.linked.get(piece.path, "")
    return ctx


def contexts(vault, names: list[str] | None = None, session: str | None = None, *,
             openclaw_config=None, agent: str | None = None) -> list[RuntimeContext]:
    """The context of each runtime in ``names`` (default: :func:`detected`)."""
    wanted = detected(vault) if names is None else names
    out = []
    for name in wanted:
        spec = vault.profile.runtimes[name]
        out.append(load_context(vault, name, session if spec.sessions else None,
                                openclaw_config=openclaw_config, agent=agent))
    return out


def applies(vault, loader: str) -> bool:
    """True when a runtime with this ``loader`` applies to ``vault`` (memoised per vault)."""
    memo = vault.__dict__.get("_runtimes_detected")
    if memo is None:
        memo = vault.__dict__["_runtimes_detected"] = {
            vault.profile.runtimes[n].loader for n in detected(vault)}
    return loader in memo


def for_vault(vault, session: str | None = None) -> list[RuntimeContext]:
    """:func:`contexts` of the detected runtimes, computed once per loaded vault (the rules
    that read it share one simulation)."""
    memo = vault.__dict__.setdefault("_runtime_contexts", {})
    if session not in memo:
        memo[session] = contexts(vault, None, session)
    return memo[session]


def outside_state(vault) -> str:
    """Size and mtime of every file the runtimes may read outside the vault's listing (the
    instruction files in the folders above the vault up to the git root, a workspace above
    a memory-only vault, the detection markers there): what a cached result of the rules
    that read them depends on besides the vault's own files (``.claude/`` is inside)."""
    root, ws = Path(vault.root), Path(vault.workspace)
    paths: list[Path] = [ws.parent / "openclaw.json"]
    if root != ws:
        paths += [ws / ".codex", ws / ".claude", ws / ".claude" / "settings.json",
                  ws / ".claude" / "settings.local.json"]
    names = {n for spec in vault.profile.runtimes.values() for n in spec.files}
    top = git_root(ws)
    here = ws
    while top is not None and here != top and here.parent != here:
        here = here.parent
        paths.extend(here / n for n in sorted(names))
        if here == top:
            break
    if root != ws:
        paths.extend(ws / n for n in sorted(names))
    for spec in vault.profile.runtimes.values():
        outside = REGISTRY[spec.loader].outside
        if outside is not None:
            paths.extend(outside(vault, spec))
    out = []
    for path in paths:
        try:
            st = os.stat(path)
            # (the ctime and inode too: a copy can put the size and mtime back)
            out.append(f"{path}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}:{st.st_ino}")
        except OSError:
            out.append(f"{path}:-")
    return "\n".join(out)

"""OpenClaw's ``openclaw.json``: find it, read it (JSON5), and answer what a setting is.

The config is JSON5 (comments, trailing commas, unquoted keys). It is looked up, first hit
wins, in:

1. the path given on the command line (``--openclaw-config PATH``),
2. ``$OPENCLAW_CONFIG_PATH``,
3. ``openclaw.json`` in the vault's parent folder (the workspace sits inside ``~/.openclaw/``);
   for a memory-only vault (``memory_dir: .``) also in the workspace's parent folder,
4. ``~/.openclaw/openclaw.json``.

Settings live under ``agents.defaults``; an agent's entry in ``agents.list[]`` (matched by
``id``) overrides them key by key. What neither sets is the runtime's default (:data:`DEFAULTS`,
from OpenClaw's src/config/zod-schema.agent-defaults.ts and bootstrap.ts); the bootstrap
limits' defaults changed between versions and follow the one installed
(:data:`BOOTSTRAP_DEFAULTS`).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from vaultkit.core.lazyre import lazy_re

TYPE_CHECKING = False  # (typing's own flag costs importing typing)
if TYPE_CHECKING:  # (names for annotations only)
    from typing import Any

CONFIG_NAME = "openclaw.json"
ENV_VAR = "OPENCLAW_CONFIG_PATH"

# The runtime's defaults for the settings vaultkit looks at (agents.defaults.*).
DEFAULTS: dict[str, Any] = {
    "bootstrapMaxChars": 20000,
    "bootstrapTotalMaxChars": 60000,
    "compaction": {
        "reserveTokensFloor": 20000,
        "memoryFlush": {"enabled": True, "softThresholdTokens": 4000},
    },
    "heartbeat": {"every": "30m"},
}

# Keys of an agents.list[] entry that name the agent rather than override a default.
_IDENTITY_KEYS = {"id", "name", "default"}

_ERROR_RE = lazy_re(r"^<string>:(\d+) (.*?)(?: at column (\d+))?$", re.S)

_UNSET = object()


def _candidates(vault) -> list[tuple[Path, str]]:
    if isinstance(vault, (str, os.PathLike)):
        root = workspace = Path(vault).resolve()
    else:
        root, workspace = Path(vault.root), Path(vault.workspace)
    out = [(root.parent / CONFIG_NAME, "the vault's parent folder")]
    if workspace != root:
        out.append((workspace.parent / CONFIG_NAME, "the workspace's parent folder"))
    out.append((Path.home() / ".openclaw" / CONFIG_NAME, "~/.openclaw"))
    return out


def find_config_with_source(vault, path: str | Path | None = None) -> tuple[Path | None, str]:
    """Like :func:`find_config`, with a few words on where it came from."""
    if path:
        return Path(path).expanduser(), "--openclaw-config"
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env).expanduser(), f"${ENV_VAR}"
    for candidate, where in _candidates(vault):
        # (never raises: an unreadable ~/.openclaw is "absent"; a FIFO or device there is
        # found, so that reading it reports why it is not used)
        if os.path.exists(candidate) and not os.path.isdir(candidate):
            return candidate, where
    return None, "not found"


def config_candidates(vault) -> list[tuple[Path, str]]:
    """Where an ``openclaw.json`` is looked for when neither ``--openclaw-config`` nor
    ``$OPENCLAW_CONFIG_PATH`` names one, in order: ``[(path, what the place is)]``."""
    return _candidates(vault)


def find_config(vault, path: str | Path | None = None) -> Path | None:
    """The ``openclaw.json`` that applies to ``vault`` (a Vault or its root folder), or None.

    An explicit ``path`` or ``$OPENCLAW_CONFIG_PATH`` is returned even when the file is
    missing, so that the caller can say so instead of silently using another file.
    """
    return find_config_with_source(vault, path)[0]


def load_openclaw(path: str | Path) -> tuple[dict | None, tuple[str, int | None, int | None] | None]:
    """Read a JSON5 config: ``(data, None)`` or ``(None, (message, line, column))``. Never raises."""
    from vaultkit.core.bounded import LimitError, load_json5, read_text

    path = Path(path)
    try:  # (a FIFO or /dev/zero given as the config is refused, not read forever)
        text = read_text(path)
    except FileNotFoundError:
        return None, (f"{path}: no such file", None, None)
    except (OSError, UnicodeDecodeError) as exc:
        return None, (f"{path}: cannot be read: {getattr(exc, 'strerror', None) or exc}", None, None)
    try:
        data = load_json5(text)
    except LimitError as exc:
        return None, (f"not read: {exc}", None, None)
    except ValueError as exc:
        message = str(exc)
        m = _ERROR_RE.match(message)
        if m:
            return None, (m.group(2), int(m.group(1)), int(m.group(3)) if m.group(3) else None)
        if not text.strip():
            return None, ("the file is empty", 1, 1)
        return None, (message, None, None)
    except RecursionError:
        return None, ("nested too deeply to read", None, None)
    except Exception as exc:  # json5 raises odd things on odd input; never crash on a config
        return None, (f"{type(exc).__name__}: {exc}", None, None)
    if not isinstance(data, dict):
        return None, (f"the top level is {type(data).__name__}, not an object", 1, 1)
    return data, None


def config_trouble(path: Path, error: tuple) -> str:
    """What is wrong with an unusable config, in the words every audit check uses."""
    if not Path(path).exists():
        return "does not exist"
    message, line, _ = error
    if line is None and "cannot be read" in message:
        return "cannot be read"
    return "does not parse"


def _agent_entry(data: dict, agent_id: str | None) -> dict | None:
    if not agent_id:
        return None
    agents = data.get("agents")
    items = agents.get("list") if isinstance(agents, dict) else None
    if not isinstance(items, list):
        return None
    for item in items:
        if isinstance(item, dict) and str(item.get("id")) == agent_id:
            return item
    return None


def agent_ids(data: dict | None) -> list[str]:
    """The ids in ``agents.list[]``."""
    agents = (data or {}).get("agents")
    items = agents.get("list") if isinstance(agents, dict) else None
    if not isinstance(items, list):
        return []
    return [str(i["id"]) for i in items if isinstance(i, dict) and "id" in i]


def _merge(base: dict, over: dict) -> dict:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def agent_settings(data: dict | None, agent_id: str | None = None) -> dict:
    """Runtime defaults, then ``agents.defaults``, then the agent's ``agents.list[]`` entry."""
    merged = _merge({}, DEFAULTS)
    agents = (data or {}).get("agents")
    defaults = agents.get("defaults") if isinstance(agents, dict) else None
    if isinstance(defaults, dict):
        merged = _merge(merged, defaults)
    entry = _agent_entry(data or {}, agent_id)
    if entry:
        merged = _merge(merged, {k: v for k, v in entry.items() if k not in _IDENTITY_KEYS})
    return merged


def _dig(obj: Any, keys: list[str]) -> Any:
    for key in keys:
        if not isinstance(obj, dict) or key not in obj:
            return _UNSET
        obj = obj[key]
    return obj


def setting(data: dict | None, dotted: str, agent_id: str | None = None) -> tuple[Any, str | None]:
    """One setting (``"compaction.reserveTokensFloor"``) and where it was set.

    The second item is ``"agents.list[ID].…"`` or ``"agents.defaults.…"``, or None when only
    the runtime default applies (then the value is that default, or None when there is none).
    """
    keys = dotted.split(".")
    entry = _agent_entry(data or {}, agent_id)
    if entry is not None:
        value = _dig(entry, keys)
        if value is not _UNSET:
            return value, f"agents.list[{agent_id}].{dotted}"
    value = _dig((data or {}).get("agents"), ["defaults", *keys])
    if value is not _UNSET:
        return value, f"agents.defaults.{dotted}"
    value = _dig(DEFAULTS, keys)
    return (None if value is _UNSET else value), None


def _as_limit(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        return None
    return int(value)


# OpenClaw's defaults for bootstrapMaxChars and bootstrapTotalMaxChars changed between
# versions. Each row is what was verified on 2026-12-07, for the versions it was verified for
# (docs/context.md names each source): (first version, last version, per file, total, where
# it was read). None: no bound. A version between two rows is not verified.
BOOTSTRAP_DEFAULTS: tuple[tuple[tuple | None, tuple | None, int, int, str], ...] = (
    (None, (2026, 2, 10**6), 20000, 150000,
     "src/agents/pi-embedded-helpers/bootstrap.ts at 004e913; issue #19453"),
    ((2026, 4, 27), (2026, 4, 27), 12000, 60000, "issue #78211; PR #67968"),
    ((2026, 8, 2), None, 20000, 60000,
     "issue #136733; src/agents/embedded-agent-helpers/bootstrap.ts at 0487131"),
)

# USER.md's own cap (USER_BOOTSTRAP_MAX_CHARS), applied as min(per-file limit, cap): a
# smaller bootstrapMaxChars lowers it, a larger one cannot raise it. Verified on 2026-12-07:
# src/agents/embedded-agent-helpers/bootstrap.ts (buildBootstrapContextFiles: `fileBudget =
# isUserBootstrapFile(file.name) ? Math.min(maxChars, USER_BOOTSTRAP_MAX_CHARS) : maxChars`,
# by name, case-insensitively), src/agents/bootstrap-budget.ts at c6a24c5
# (effectiveBootstrapFileLimit); issue #136733 (2026.8.2 cuts USER.md at 4,000, 2026.7.1-2
# did not); PR #136967. (first version with it, last version known without it, cap, source)
USER_FILE_CAP = ((2026, 8, 2), (2026, 7, 1), 4000,
                 "issue #136733; src/agents/bootstrap-budget.ts at c6a24c5")

# The bootstrap file set from 2026.8.2: src/agents/workspace.ts WORKSPACE_BOOTSTRAP_FILENAMES
# (a stored version whose commit the index does not name; the one at 0033b70 still loads
# the eight of rules/openclaw.yaml), TOOLS.md and HEARTBEAT.md retired by PRs #113966
# (2026-07-26) and #113621 (2026-07-25, after #112967 / #113131), both merged before the
# 2026.8.2 release of 2026-09-01 (issue #136733). loadWorkspaceBootstrapFiles skips a missing
# USER.md or MEMORY.md (no marker); filterBootstrapFilesForSession: a subagent gets
# AGENTS.md, a cron session AGENTS.md, SOUL.md, IDENTITY.md, USER.md, no non-private
# session the root MEMORY.md. Checked 2026-12-07. (first version, files, skipped when
# absent, sessions)
SIX_FILE_SET = ((2026, 8, 2),
                ("AGENTS.md", "SOUL.md", "IDENTITY.md", "USER.md", "BOOTSTRAP.md", "MEMORY.md"),
                ("USER.md", "MEMORY.md"),
                {"main": ["*"], "cron": ["AGENTS.md", "SOUL.md", "IDENTITY.md", "USER.md"],
                 "subagent": ["AGENTS.md"],
                 "group": ["AGENTS.md", "SOUL.md", "IDENTITY.md", "USER.md", "BOOTSTRAP.md"]})
# the last version known to load the eight files (issue #136733's 2026.7.1-2, whose stored
# workspace.ts at 0033b70 lists them)
EIGHT_FILES_UNTIL = (2026, 7, 1)
EIGHT_FILES = ("AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "USER.md", "HEARTBEAT.md",
               "BOOTSTRAP.md", "MEMORY.md")

_VERSION_RE = lazy_re(r"^v?(\d{1,6})\.(\d{1,6})\.(\d{1,6})(?:[-+.][0-9A-Za-z.-]*)?$")

# npm's global prefixes where `npm install -g openclaw` puts the package (lib/node_modules)
_NPM_PREFIXES = ("~/.npm-global", "~/.local", "/usr/local", "/usr", "/opt/homebrew")


def parse_version(text: Any) -> tuple[int, int, int] | None:
    """``"2026.4.27"``, ``"v2026.7.1-2"``, ``"2026.2.23-beta.1"`` -> ``(2026, 4, 27)``."""
    if not isinstance(text, str):
        return None
    m = _VERSION_RE.match(text.strip())
    return (int(m.group(1)), int(m.group(2)), int(m.group(3))) if m else None


def _which_openclaw() -> str | None:
    # (shutil.which, without importing shutil and its compression modules on every check)
    for folder in os.get_exec_path():
        path = os.path.join(folder, "openclaw")
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def _npm_prefixes() -> list[Path]:
    out = [Path(os.environ["NPM_CONFIG_PREFIX"])] if os.environ.get("NPM_CONFIG_PREFIX") else []
    return out + [Path(p).expanduser() for p in _NPM_PREFIXES]


def _package_version(package_json: Path) -> str | None:
    """The version in OpenClaw's own package.json, or None (not OpenClaw's, unreadable)."""
    from vaultkit.core.bounded import load_json, read_text

    try:
        data = load_json(read_text(package_json))
    except (OSError, ValueError, UnicodeDecodeError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("name") != "openclaw":
        return None
    version = data.get("version")
    return version if isinstance(version, str) else None


def installed_version(config_data: dict | None = None,
                      config_path: Path | None = None) -> tuple[str, str] | None:
    """The OpenClaw version on this machine and where it was read, or None. Nothing is run
    and nothing is fetched: the package.json of the npm package behind the ``openclaw`` on
    PATH, else of a global npm install, else ``meta.lastTouchedVersion`` of openclaw.json
    (OpenClaw stamps each config write with its version)."""
    found = _which_openclaw()
    if found:
        try:
            real = Path(found).resolve()
        except (OSError, RuntimeError):
            real = None
        for folder in (real.parents if real else ()):
            version = _package_version(folder / "package.json")
            if version:
                return version, str(folder / "package.json")
            if folder.name == "node_modules":
                break
    for prefix in _npm_prefixes():
        package_json = prefix / "lib" / "node_modules" / "openclaw" / "package.json"
        if os.path.isfile(package_json):
            version = _package_version(package_json)
            if version:
                return version, str(package_json)
    meta = (config_data or {}).get("meta")
    version = meta.get("lastTouchedVersion") if isinstance(meta, dict) else None
    if isinstance(version, str) and version.strip():
        return version.strip(), f"meta.lastTouchedVersion in {config_path or CONFIG_NAME}"
    return None


def install_state() -> str:
    """What :func:`installed_version` found outside any config, for a cache key: the version
    and its package.json by stat (an upgrade rewrites it). An upgrade of OpenClaw changes
    the limits, so it must change cached findings too."""
    found = installed_version()
    if found is None:
        return "no install"
    try:
        st = os.stat(found[1])
        return f"{found}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}:{st.st_ino}"
    except OSError:
        return f"{found}:-"


def _fmt_version(v: tuple | None) -> str:
    if v is None:
        return ""
    return f"{v[0]}.{v[1]}" if v[2] >= 10**6 else f"{v[0]}.{v[1]}.{v[2]}"


def version_defaults(version: str | None) -> tuple[int, int, str]:
    """``(bootstrapMaxChars, bootstrapTotalMaxChars, what they are)`` for an OpenClaw version
    (None: not known), from :data:`BOOTSTRAP_DEFAULTS`."""
    newest = BOOTSTRAP_DEFAULTS[-1]
    if version is None:
        return newest[2], newest[3], "default of the newest known version (no install found)"
    v = parse_version(version)
    if v is None:
        return (newest[2], newest[3], f"default of the newest known version (OpenClaw "
                f"version {version!r} not understood)")
    for first, last, per_file, total, _ in BOOTSTRAP_DEFAULTS:
        if (first is None or v >= first) and (last is None or v <= last):
            return per_file, total, f"OpenClaw {version} default"
    before = max((r for r in BOOTSTRAP_DEFAULTS if r[1] is not None and r[1] < v),
                 key=lambda r: r[1])
    after = min((r for r in BOOTSTRAP_DEFAULTS if r[0] is not None and r[0] > v),
                key=lambda r: r[0])
    # not verified: the larger of each, so that nothing is reported cut that may not be
    return (max(before[2], after[2]), max(before[3], after[3]),
            f"OpenClaw {version}: its defaults are not verified ({before[2]:,}/{before[3]:,} "
            f"up to {_fmt_version(before[1])}, {after[2]:,}/{after[3]:,} from "
            f"{_fmt_version(after[0])}); the larger of each")


def user_file_cap(version: str | None) -> tuple[int | None, str]:
    """``(USER.md's fixed cap or None, what it is)`` for an OpenClaw version (None: not
    known, so the newest known contract), from :data:`USER_FILE_CAP`."""
    first, last_without, cap, _ = USER_FILE_CAP
    since = f"OpenClaw {_fmt_version(first)} and later"
    fixed = f"USER.md's fixed {cap:,}-character cap ({since}; bootstrapMaxChars cannot raise it)"
    v = parse_version(version) if version is not None else None
    if v is None:
        why = ("no install found" if version is None
               else f"OpenClaw version {version!r} not understood")
        return cap, f"{fixed}; the newest known contract ({why})"
    if v >= first:
        return cap, fixed
    if v <= last_without:
        return None, ""
    # not verified: no cap, so that nothing is reported cut that may not be
    return None, (f"whether OpenClaw {version} caps USER.md is not verified (not up to "
                  f"{_fmt_version(last_without)}, {cap:,} from {_fmt_version(first)}); "
                  "no cap applied")


def file_set(version: str | None):
    """The bootstrap file set of an OpenClaw version: ``(files, skipped when absent,
    sessions, note)``, or None for the rule pack's eight files (up to 2026.7.1). A version
    between the two is not verified: the six-file set, which counts no file the older one
    would not, and a note says so."""
    first, files, optional, sessions = SIX_FILE_SET
    v = parse_version(version) if version is not None else None
    if v is not None and v <= EIGHT_FILES_UNTIL:
        return None
    note = ""
    if v is not None and v < first:
        note = (f"whether OpenClaw {version} loads TOOLS.md and HEARTBEAT.md is not verified "
                f"(up to {_fmt_version(EIGHT_FILES_UNTIL)} it does, from "
                f"{_fmt_version(first)} it does not); they are not counted")
    return list(files), list(optional), sessions, note


def installed_for(vault, path: str | Path | None = None) -> str | None:
    """The installed OpenClaw version (:func:`installed_version`) for ``vault``, or None."""
    config, _ = find_config_with_source(vault, path)
    data = load_cached(config)[0] if config is not None else None
    found = installed_version(data, config)
    return found[0] if found else None


def user_cap(vault, path: str | Path | None = None) -> tuple[int | None, str]:
    """USER.md's fixed cap for the OpenClaw installed here (or named by the config's
    ``meta.lastTouchedVersion``): :func:`user_file_cap` of :func:`installed_version`."""
    return user_file_cap(installed_for(vault, path))


def _profile_limit(vault, spec, name: str, toml_keys: tuple[tuple[str, str], ...]):
    """A limit vaultkit.toml (or a profile of its own) sets for OpenClaw, and where."""
    config = getattr(getattr(vault, "settings", None), "config", None)
    for table, key in toml_keys:
        holder = (getattr(config, "runtime", {}) or {}).get("openclaw", {}) \
            if table == "runtime.openclaw" else (getattr(config, "budgets", {}) or {})
        for spelling in (key, key.replace("-", "_")):
            if isinstance(holder, dict) and spelling in holder:
                return getattr(spec, name), f"vaultkit.toml [{table}] {spelling}"
    value = getattr(spec, name, None) if spec is not None else None
    if value is not None and value != DEFAULTS[{"per_file_max": "bootstrapMaxChars",
                                                  "total_max": "bootstrapTotalMaxChars"}[name]]:
        return value, f"the profile's runtimes.openclaw.{name}"
    return None, None


def bootstrap_limits(vault, path: str | Path | None = None,
                     agent: str | None = None) -> tuple[int, int, str]:
    """``(bootstrapMaxChars, bootstrapTotalMaxChars, where they came from)`` for ``vault``.

    Each limit, first hit wins: ``openclaw.json`` (the agent's ``agents.list[]`` entry,
    then ``agents.defaults``); ``vaultkit.toml`` (``[runtime.openclaw] per-file-max`` /
    ``total-max``, or the old ``[budgets]`` names; a profile's own values); the defaults of
    the OpenClaw version installed here (:func:`installed_version`,
    :data:`BOOTSTRAP_DEFAULTS`); the newest known version's. The description names the
    source of each number and what is wrong with a config that cannot be used.
    """
    return bootstrap_limits_detail(vault, path, agent)[:3]


def bootstrap_limits_detail(vault, path: str | Path | None = None, agent: str | None = None):
    """:func:`bootstrap_limits` plus the keys to change: ``(per_file, total, description,
    per-file key, total key, the config file or None)``; a key is ``agents.defaults.…`` or
    ``agents.list[ID].…`` (the one that applies)."""
    runtimes = getattr(getattr(vault, "profile", None), "runtimes", None) or {}
    spec = next((r for r in runtimes.values() if r.loader == "workspace-set"), None)
    config, _ = find_config_with_source(vault, path)
    data, notes = None, []
    if config is None:
        notes.append("no openclaw.json found")
    else:
        data, error = load_cached(config)
        if error is not None:
            notes.append(f"{config} {config_trouble(config, error)}")
    chosen: dict[str, tuple[int | None, str | None]] = {}
    keys = {}
    for name, key, toml_keys in (
            ("per_file_max", "bootstrapMaxChars",
             (("runtime.openclaw", "per-file-max"), ("budgets", "bootstrap-max-chars"))),
            ("total_max", "bootstrapTotalMaxChars",
             (("runtime.openclaw", "total-max"), ("budgets", "bootstrap-total-max-chars")))):
        value, where = setting(data, key, agent) if data is not None else (None, None)
        keys[name] = where or (f"agents.list[{agent}].{key}"
                               if agent and _agent_entry(data or {}, agent) is not None
                               else f"agents.defaults.{key}")
        if where and _as_limit(value) is not None:
            chosen[name] = (_as_limit(value), f"openclaw.json {where} ({config})")
            continue
        chosen[name] = _profile_limit(vault, spec, name, toml_keys)
    if chosen["per_file_max"][1] is None or chosen["total_max"][1] is None:
        found = installed_version(data, config)
        per_file, total, what = version_defaults(found[0] if found else None)
        if found:
            what += f" (read from {found[1]})"
        for name, value in (("per_file_max", per_file), ("total_max", total)):
            if chosen[name][1] is None:
                chosen[name] = (value, what)
    (per_file, src_per), (total, src_total) = chosen["per_file_max"], chosen["total_max"]
    text = src_per if src_per == src_total else f"per file: {src_per}; in all: {src_total}"
    if notes:
        text += "; " + "; ".join(notes)
    return per_file, total, text, keys["per_file_max"], keys["total_max"], config


_cache: dict[tuple[str, int, int], tuple[dict | None, tuple | None]] = {}


def load_cached(path: Path):
    """:func:`load_openclaw` of ``path``, read again only when the file changed."""
    try:
        st = path.stat()
    except OSError:
        return load_openclaw(path)
    key = (str(path), st.st_mtime_ns, st.st_size, st.st_ctime_ns, st.st_ino)
    if key not in _cache:
        _cache[key] = load_openclaw(path)
    return _cache[key]


def parse_duration(text: Any) -> float | None:
    """A heartbeat duration (``"30m"``, ``"1h"``, ``"90s"``, ``"1h30m"``, ``"0m"``) in minutes."""
    if isinstance(text, bool):
        return None
    if isinstance(text, (int, float)):
        return float(text)
    if not isinstance(text, str):
        return None
    s = text.strip().lower()
    if not s:
        return None
    units = {"ms": 1 / 60000, "s": 1 / 60, "m": 1, "h": 60, "d": 1440}
    total = 0.0
    pos = 0
    for m in re.finditer(r"(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?", s):
        if m.start() != pos or not m.group(0):
            return None
        total += float(m.group(1)) * units[m.group(2) or "m"]
        pos = m.end()
        while pos < len(s) and s[pos] == " ":
            pos += 1
    return total if pos == len(s) else None

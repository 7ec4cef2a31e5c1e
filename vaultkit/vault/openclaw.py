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
from OpenClaw's src/config/zod-schema.agent-defaults.ts and bootstrap.ts).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from vaultkit.core.lazyre import lazy_re

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


def bootstrap_limits(vault, path: str | Path | None = None,
                     agent: str | None = None) -> tuple[int, int, str]:
    """``(bootstrapMaxChars, bootstrapTotalMaxChars, where they came from)`` for ``vault``.

    Values set in ``openclaw.json`` win; otherwise the profile's OpenClaw runtime
    (``runtimes.openclaw.per_file_max`` and ``total_max``: the runtime defaults unless
    vaultkit.toml changed them). A config that is missing or does not parse falls back to
    the profile too; the description says so.
    """
    runtimes = getattr(getattr(vault, "profile", None), "runtimes", None) or {}
    spec = next((r for r in runtimes.values() if r.loader == "workspace-set"), None)
    per_file = DEFAULTS["bootstrapMaxChars"]
    total = DEFAULTS["bootstrapTotalMaxChars"]
    if spec is not None and spec.per_file_max is not None:
        per_file = spec.per_file_max
    if spec is not None and spec.total_max is not None:
        total = spec.total_max
    config, _ = find_config_with_source(vault, path)
    if config is None:
        return per_file, total, "the profile's runtime limits; no openclaw.json found"
    data, error = load_cached(config)
    if error is not None:
        return per_file, total, f"the profile's runtime limits; {config} {config_trouble(config, error)}"
    sources = []
    value, where = setting(data, "bootstrapMaxChars", agent)
    if where and _as_limit(value) is not None:
        per_file = _as_limit(value)
        sources.append(where)
    value, where = setting(data, "bootstrapTotalMaxChars", agent)
    if where and _as_limit(value) is not None:
        total = _as_limit(value)
        sources.append(where)
    if sources:
        return per_file, total, f"{config} ({', '.join(sources)})"
    return per_file, total, f"the profile's runtime limits; {config} sets neither limit"


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

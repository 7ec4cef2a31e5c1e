"""Obsidian's graph view colours: merge vaultkit's colour groups into ``.obsidian/graph.json``.

One group per type or layer named in the profile's ``colors`` (``#rrggbb``), in that
order. A type's query is its folder, written folder-exact (``path:"memory/decisions/"``);
a layer's query is its folders, or a ``path:/regex/`` for file patterns (the daily
journal ``memory/YYYY-MM-DD.md``, the bootstrap files at the root), joined with ``OR``.

The merge keeps every other key and every group the user made, in place, and only
appends vaultkit's groups that are missing: a group whose query is one of vaultkit's
keeps the colour it has, so a colour the user picked in Obsidian wins (``recolour``,
``graph --write-colors --recolor``, sets the profile's colours again). A
missing file is created with Obsidian's defaults. When nothing changes the file is not
written, so running it twice gives the same bytes. A file that is not valid JSON (or not
an object) is an error and stays untouched.
"""

from __future__ import annotations

import os
import re

from vaultkit.core.errors import VaultkitError

TYPE_CHECKING = False  # (typing's own flag costs importing typing)
if TYPE_CHECKING:
    from vaultkit.vault.profile import Profile
    from vaultkit.vault.loader import Vault

GRAPH_JSON = ".obsidian/graph.json"

# Obsidian's own defaults for a fresh graph.json (keys as listed in reference.md)
DEFAULTS: dict = {
    "collapse-filter": True,
    "search": "",
    "showTags": False,
    "showAttachments": False,
    "hideUnresolved": False,
    "showOrphans": True,
    "collapse-color-groups": False,
    "colorGroups": [],
    "collapse-display": True,
    "showArrow": False,
    "textFadeMultiplier": 0,
    "nodeSizeMultiplier": 1,
    "lineSizeMultiplier": 1,
    "collapse-forces": True,
    "centerStrength": 0.518713248970312,
    "repelStrength": 10,
    "linkStrength": 1,
    "linkDistance": 250,
    "scale": 1,
    "close": True,
}


def colour_groups(profile: "Profile") -> list[dict]:
    """vaultkit's colour groups for ``profile``: ``{"query", "color": {"a", "rgb"}}``."""
    out = []
    seen = set()
    for key, colour in profile.colors.items():
        query = _query(profile, key)
        if not query or query in seen:
            continue
        seen.add(query)
        out.append({"query": query, "color": {"a": 1, "rgb": int(colour[1:], 16)}})
    return out


def unknown_colour_keys(profile: "Profile") -> list[str]:
    """``colors`` keys that name neither a type nor a layer (they make no group)."""
    return [k for k in profile.colors if k not in profile.types and profile.layer(k) is None]


def _query(profile: "Profile", key: str) -> str | None:
    spec = profile.types.get(key)
    if spec is not None:
        folder = profile.expand(spec.folder).strip("/")
        return f'path:"{folder}/"' if folder else None
    layer = profile.layer(key)
    if layer is None:
        return None
    patterns = [profile.expand(p) for p in layer.paths]
    if len(patterns) > 1 and not any(c in p for p in patterns for c in "*?{"):
        names = "|".join(_js_escape(p) for p in patterns)
        return f"path:/^({names})$/"
    parts = []
    for pattern in layer.paths:
        q = _pattern_query(profile.expand(pattern))
        if q and q not in parts:
            parts.append(q)
    return " OR ".join(parts) or None


def _pattern_query(pattern: str) -> str:
    """``dir/**/*.md`` and ``dir/*.md`` become ``path:"dir/"``; anything else a regex."""
    m = re.fullmatch(r"([^*?{}]+)/(?:\*\*/)?\*\.md", pattern)
    if m:
        return f'path:"{m.group(1)}/"'
    from vaultkit.vault.profile import pattern_tokens

    out = [_JS_REGEX.get(token) or _js_escape(token) for token in pattern_tokens(pattern)]
    return "path:/^" + "".join(out) + "$/"


# Obsidian's search runs JavaScript regexes: the same tokens, written for that flavour
_JS_REGEX = {"**/": r"(.+\/)?", "**": r".*", "*": r"[^\/]*", "?": r"[^\/]",
             "{date}": r"\d{4}-\d{2}-\d{2}", "{time}": r"([01]\d|2[0-3])[0-5]\d", "/": r"\/"}


def _js_escape(text: str) -> str:
    """Escape for a JavaScript regex literal (what Obsidian's search runs)."""
    return "".join("\\" + c if c in r".^$*+?()[]{}|\/" else c for c in text)


def _load(vault: "Vault") -> tuple[dict | None, bytes | None]:
    path = vault.root / GRAPH_JSON
    real, root = os.path.realpath(path), os.path.realpath(vault.root)
    if not real.startswith(root.rstrip(os.sep) + os.sep):  # never read (or copy in) a file
        raise VaultkitError(f"{GRAPH_JSON}: a symlink out of the vault; left untouched")
    import json

    from vaultkit.core.bounded import MAX_CONFIG_BYTES, LimitError, load_json, read_regular

    try:
        raw = read_regular(path, MAX_CONFIG_BYTES)
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        raise VaultkitError(f"{GRAPH_JSON}: cannot read: {exc.strerror or exc}; "
                            "left untouched") from None
    try:
        data = load_json(raw.decode("utf-8-sig"))
    except UnicodeDecodeError:
        raise VaultkitError(f"{GRAPH_JSON}: not UTF-8; left untouched") from None
    except json.JSONDecodeError as exc:
        raise VaultkitError(f"{GRAPH_JSON}: not valid JSON (line {exc.lineno}, column "
                            f"{exc.colno}: {exc.msg}); left untouched") from None
    except LimitError as exc:
        raise VaultkitError(f"{GRAPH_JSON}: not read: {exc}; left untouched") from None
    if not isinstance(data, dict):
        raise VaultkitError(f"{GRAPH_JSON}: not a JSON object; left untouched")
    groups = data.get("colorGroups", [])
    if not isinstance(groups, list):
        raise VaultkitError(f"{GRAPH_JSON}: 'colorGroups' is not a list; left untouched")
    return data, raw


def merge_colours(data: dict | None, groups: list[dict], recolour: bool = False) -> dict:
    """``data`` (a parsed graph.json, or None) with ``groups`` merged in; a new dict.

    Missing groups are appended; an existing one keeps its colour unless ``recolour``."""
    out = dict(DEFAULTS) if data is None else dict(data)
    existing = list(out.get("colorGroups") or [])
    index = {g.get("query"): i for i, g in enumerate(existing) if isinstance(g, dict)}
    merged = [dict(g) if isinstance(g, dict) else g for g in existing]
    for group in groups:
        i = index.get(group["query"])
        if i is None:
            merged.append({"query": group["query"], "color": dict(group["color"])})
        elif recolour:
            merged[i]["color"] = dict(group["color"])
    out["colorGroups"] = merged
    return out


def missing_colour_groups(vault: "Vault") -> list[dict]:
    """vaultkit's groups that graph.json lacks (all, if no file). A group the user
    recoloured is there: its colour is the user's choice."""
    try:
        data, _ = _load(vault)
    except VaultkitError:
        data = None
    have = {}
    for g in (data or {}).get("colorGroups") or []:
        if isinstance(g, dict) and isinstance(g.get("color"), dict):
            have[g.get("query")] = g["color"].get("rgb")
    return [g for g in colour_groups(vault.profile) if g["query"] not in have]


def write_colors(vault: "Vault", recolour: bool = False) -> bool:
    """Merge the colour groups into graph.json, atomically. True when the file changed."""
    import json

    from vaultkit.core.atomic import write_atomic

    data, raw = _load(vault)
    merged = merge_colours(data, colour_groups(vault.profile), recolour)
    if data is not None and merged == data:
        return False
    text = json.dumps(merged, indent=2, ensure_ascii=False)
    if raw is not None and raw.endswith(b"\n"):
        text += "\n"
    new = text.encode("utf-8")
    if raw is not None and raw.startswith(b"\xef\xbb\xbf"):
        new = b"\xef\xbb\xbf" + new
    if new == raw:
        return False
    from vaultkit.core.atomic import remove_stale_temps

    # (the scan never lists .obsidian/: a killed write's leftover is removed here)
    remove_stale_temps(vault.root / ".obsidian", ".graph.json.")
    write_atomic(vault.root / GRAPH_JSON, new, root=vault.root, owned=(GRAPH_JSON,))
    return True


# -- the templates folder ---------------------------------------------------------

# Where Obsidian's core Templates plugin and the Templater plugin keep their settings, and
# the key naming the templates folder in each.
TEMPLATE_SETTINGS = ((".obsidian/templates.json", "folder"),
                     (".obsidian/plugins/templater-obsidian/data.json", "templates_folder"))
_MAX_SETTINGS_BYTES = 1_000_000


def template_folders(root) -> tuple[str, ...]:
    """The vault folders Obsidian's settings name as templates folders ('/'-separated,
    without slashes at either end). A template holds placeholders (``{{date}}``,
    ``<% tp.date.now() %>``), not a note: it is not linted. Unreadable or odd settings
    name nothing."""
    import os
    import stat

    found = []
    for rel, key in TEMPLATE_SETTINGS:
        path = os.path.join(str(root), rel)
        try:
            st = os.stat(path)
            if not stat.S_ISREG(st.st_mode) or st.st_size > _MAX_SETTINGS_BYTES:
                continue
            import json  # (here: most vaults have no such settings, and a warm check asks)

            with open(path, "rb") as fh:
                data = json.loads(fh.read(_MAX_SETTINGS_BYTES + 1).decode("utf-8-sig"))
        except (OSError, ValueError, RecursionError):
            continue
        folder = data.get(key) if isinstance(data, dict) else None
        if not isinstance(folder, str):
            continue
        folder = folder.replace("\\", "/").strip().strip("/")
        if folder and folder not in found and ".." not in folder.split("/"):
            found.append(folder)
    return tuple(found)


def _settings_json(root, rel: str):
    """A JSON settings file under the vault, or None when absent, odd or too large."""
    import os
    import stat

    path = os.path.join(str(root), rel)
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size > _MAX_SETTINGS_BYTES:
            return None
        import json

        with open(path, "rb") as fh:
            return json.loads(fh.read(_MAX_SETTINGS_BYTES + 1).decode("utf-8-sig"))
    except (OSError, ValueError, RecursionError):
        return None


def daily_notes_folder(root) -> str | None:
    """The folder Obsidian's Daily notes core plugin writes to ('/'-separated, '' for the
    vault root), from ``.obsidian/daily-notes.json`` (its ``folder``; the root when the
    file has none), or the root when the plugin is on without settings; None when the
    vault uses no daily notes (or the settings cannot be read)."""
    data = _settings_json(root, ".obsidian/daily-notes.json")
    if isinstance(data, dict):
        folder = data.get("folder", "")
        if not isinstance(folder, str):
            return None
        folder = folder.replace("\\", "/").strip().strip("/")
        return None if ".." in folder.split("/") else folder
    plugins = _settings_json(root, ".obsidian/core-plugins.json")
    on = (plugins.get("daily-notes") is True if isinstance(plugins, dict)
          else isinstance(plugins, list) and "daily-notes" in plugins)
    return "" if on else None


def daily_notes_format(root) -> tuple[str, str] | None:
    """``(folder, date format)`` of Obsidian's Daily notes plugin (the format as the plugin
    writes it, ``YYYY-MM-DD`` when unset), or None when the vault uses no daily notes."""
    folder = daily_notes_folder(root)
    if folder is None:
        return None
    data = _settings_json(root, ".obsidian/daily-notes.json")
    fmt = data.get("format") if isinstance(data, dict) else None
    if not isinstance(fmt, str) or not fmt.strip() or ".." in fmt:
        fmt = "YYYY-MM-DD"
    return folder, fmt.strip().strip("/")


def in_folders(path: str, folders: tuple[str, ...]) -> bool:
    """``path`` lies inside one of ``folders`` (case-insensitively, as Obsidian matches)."""
    low = path.lower()
    return any(low.startswith(f.lower() + "/") for f in folders)


# how deep a vault of its own is looked for: a knowledge base sits at the workspace's top or
# one folder down; deeper, every run would stat thousands of folders for none
NESTED_DEPTH = 2


def nested_vaults(vault: "Vault") -> tuple[str, ...]:
    """The folders one or two levels below the vault's top that hold notes and a
    ``.obsidian/`` folder of their own: Obsidian vaults kept inside the workspace (``kb/``,
    ``projects/garden/``), whose notes Obsidian's link policy governs. Sorted; found once
    per loaded vault (one ``stat`` per such folder, ``.obsidian/`` being no listed file)."""
    found = vault.__dict__.get("_nested_vaults")
    if found is None:
        folders: set[str] = set()
        scan = vault.__dict__.get("_scan")  # (the listing of this vault's very names)
        # by the folders, a few dozen, not each of 10,000 paths (a commit hook's cost): the
        # folders the listing walked when there is one (every note's and maybe a few more:
        # those are left out below), else the notes' folders
        parents = {place[1].rstrip("/") for place in scan.places.values() if place is not None} \
            if scan is not None else {path.rpartition("/")[0] for path in vault.note_paths()}
        for parent in parents:
            parts = parent.split("/", NESTED_DEPTH)[:NESTED_DEPTH] if parent else []
            for i in range(1, len(parts) + 1):
                folders.add("/".join(parts[:i]))
        root = str(vault.root)
        found = tuple(sorted(f for f in folders if not f.startswith("..")
                             and os.path.isdir(os.path.join(root, f, ".obsidian"))
                             and (scan is None or _holds_note(scan.paths(), f + "/"))))
        vault.__dict__["_nested_vaults"] = found
    return found


def _holds_note(paths: list[str], prefix: str) -> bool:
    """Whether a note lies below the folder of vault prefix ``prefix``, among the sorted
    ``paths`` (a folder walked may hold attachments only)."""
    from bisect import bisect_left

    for at in range(bisect_left(paths, prefix), len(paths)):
        path = paths[at]
        if not path.startswith(prefix):
            return False
        if path.lower().endswith(".md"):
            return True
    return False

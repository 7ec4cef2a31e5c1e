import re
from vaultkit.core.lazyre import lazy_re
from vaultkit.lint.rule import Rule
from vaultkit.lint.shared import journal_name_problem

_EXACT_DATE = lazy_re(r"^\d{4}-\d{2}-\d{2}$")
_JOURNAL_FOLDER = lazy_re(r"journal|daily|diary|日记|日志|дневник", re.IGNORECASE)
_LITERAL = lazy_re(r"^[^*?{}]+$")


def one_slip(name: str, target: str) -> bool:
    """True when ``name`` is ``target`` with one slip: other letter case, or (for names of
    four letters or more) one character added, dropped, changed or two swapped."""
    if name == target:
        return False
    a, b = name.casefold(), target.casefold()
    if a == b:
        return True
    if min(len(a), len(b)) < 4 or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        if len(diff) == 1:
            return True
        return (len(diff) == 2 and diff[1] == diff[0] + 1
                and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]])
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    i = 0
    while i < len(short) and short[i] == long_[i]:
        i += 1
    return short[i:] == long_[i + 1:]


_NAMES: dict[int, tuple] = {}


def _names(profile) -> dict[str, tuple[set[str], set[str]]]:
    """Parent folder -> (folder names, file names) the named layers and types spell out."""
    hit = _NAMES.get(id(profile))
    if hit is not None and hit[0] is profile:
        return hit[1]
    out: dict[str, tuple[set[str], set[str]]] = {}
    patterns = [profile.expand(spec.folder).strip("/") + "/*.md" for spec in profile.types.values()]
    for layer in profile.layers:
        if not layer.fallback:
            patterns += [profile.expand(p) for p in layer.paths]
    for pattern in patterns:
        parts = [p for p in pattern.split("/") if p]
        for depth, part in enumerate(parts):
            if not _LITERAL.match(part):
                break
            parent = "/".join(parts[:depth])
            folders, files = out.setdefault(parent, (set(), set()))
            (files if depth == len(parts) - 1 else folders).add(part)
    _NAMES.clear()  # one profile per run; no growth in long-lived processes
    _NAMES[id(profile)] = (profile, out)
    return out


def near_miss(profile, path: str) -> tuple[str, str] | None:
    """``(written, meant)`` when a folder or file name on ``path`` is one slip from a name a
    layer uses at the same place (``memory/decision/`` for ``memory/decisions/``)."""
    names = _names(profile)
    parts = path.split("/")
    for depth, part in enumerate(parts):
        parent = "/".join(parts[:depth])
        folders, files = names.get(parent, (set(), set()))
        known = files if depth == len(parts) - 1 else folders
        if part in known:
            continue
        if part.startswith("."):  # a tool's hidden folder (.agents/skills), not a slip
            return None
        for meant in sorted(known):
            if one_slip(part, meant):
                return part, meant
        return None
    return None


class UnknownLocation(Rule):
    """
    ## What it does
    Reports a Markdown file that looks misplaced: a folder or file name one slip away from
    a layer's (`memory/decision/` for `memory/decisions/`, `memory/Lessons/`, `AGENT.md`
    for `AGENTS.md`, a lower-case `memory.md`), a note in the memory tree whose `type:`
    belongs in another layer's folder (`type: decision` in `memory/research/`; a subfolder
    of its own folder, `memory/decisions/2026/`, is its place too), or a
    journal-shaped file (`2026-03-01.md`) outside the memory tree, at the workspace root or
    in a journal-like folder there (`daily/`, `journal/`), where the runtime never loads it.
    A dated series deeper in a folder of its own (`content/python/daily-notes/2026-03-01.md`,
    a study log) is kept there on purpose and is not reported.

    Not reported: Obsidian daily notes in the folder `.obsidian/daily-notes.json` names
    (`Daily/2026-03-19.md`), a tool's hidden folder (`.agents/skills/` is no slip of
    `agents/`), the workspace folders OpenClaw defines (`skills/`, `canvas/`, `hooks/`),
    the rest of the workspace, which is the agent's working area (`scripts/`, `docs/`,
    `projects/`, root notes), and topical folders inside the memory tree (`research/`,
    `learning/`, `schedules/`, per-agent folders), which hold knowledge notes. With
    `strict-placement = true` in `vaultkit.toml`, every file no named layer claims is
    reported. Files directly in the memory folder that try to be a journal are left to
    `journal-filename`, which says more.

    ## Why is this bad?
    The agent finds memory by layer: bootstrap files are injected, journals are read by
    date, typed notes through INDEX.md and their folder. A decision saved under
    `memory/decision/` is in no typed folder, so it is never listed, checked or found
    where the agent looks for decisions; a `MEMROY.md` is never injected.

    ## Example
    ```
    memory/decision/launch.md:1:1: VK101 unknown-location warning: folder 'decision' is one slip from 'decisions', a folder of profile 'openclaw'; move the file to memory/decisions/
    ```

    Move it where its layer lives, add a layer in `vaultkit.toml` (`[[layers]]`), or
    exclude it (`exclude = ["drafts/**"]`).
    """

    name = "unknown-location"
    code = "VK101"
    severity = "warning"

    def check(self, note, ctx):
        profile = ctx.profile
        if note.error or ctx.claimed(note):
            return
        prefix = profile.memory_prefix
        in_memory = note.path.startswith(prefix)
        rest = note.path[len(prefix):] if in_memory else None
        if in_memory and "/" not in rest and journal_name_problem(note.name, prefix):
            return  # journal-filename's ground
        message = self._why(note, ctx, prefix, in_memory)
        if message is None and profile.strict_placement:
            if not prefix and "/" not in note.path:
                return  # memory-only vault: the root holds the journals
            layer = ctx.layer_of(note)
            spec = profile.layer(layer) if layer else None
            where = f" ({spec.description})" if spec and spec.description else ""
            message = (f"no named layer of profile '{profile.name}' claims this file, only "
                       f"the fallback '{layer}'{where}; strict-placement reports it: move it into a "
                       "layer's folder, or add a layer or an exclude in vaultkit.toml"
                       if layer else
                       f"no layer of profile '{profile.name}' claims this file "
                       "(strict-placement); move it into a layer's folder, or add a layer or "
                       "an exclude in vaultkit.toml")
        if message:
            yield self.diag(note.path, 1, 1, message)

    @staticmethod
    def _why(note, ctx, prefix, in_memory) -> str | None:
        profile = ctx.profile
        slip = near_miss(profile, note.path)
        if slip:
            written, meant = slip
            parts = note.path.split("/")
            depth = parts.index(written)
            if depth == len(parts) - 1:
                where = "/".join(parts[:-1] + [meant])
                return (f"file name '{written}' is one slip from '{meant}', a file of profile "
                        f"'{profile.name}'; rename it to {where}")
            where = "/".join(parts[:depth] + [meant]) + "/"
            return (f"folder '{written}' is one slip from '{meant}', a folder of profile "
                    f"'{profile.name}'; move the file to {where}")
        if in_memory and prefix:
            type_name = _declared_type(note, profile)
            spec = profile.types.get(type_name) if type_name else None
            folder = profile.expand(spec.folder).strip("/") if spec is not None else None
            if folder and not (note.folder + "/").startswith(folder + "/"):
                # (a subfolder of the type's own folder, decisions/2026/, is its place too)
                return (f"'{type_name}' notes live in {folder}/, but this one is in "
                        f"{note.folder or 'the vault root'}/; move it there")
        if not in_memory and _EXACT_DATE.match(note.name):
            folder = note.folder
            daily = ctx.daily_notes_folder
            if daily is not None and (folder == daily or daily and folder.startswith(daily + "/")):
                return None  # an Obsidian daily note, where its own settings put it
            # at the root, or in a journal-like folder there (daily/, journal/): a journal
            # that missed memory/; a dated series deeper down (content/<topic>/daily-notes/)
            # is kept there on purpose
            if not folder or ("/" not in folder and _JOURNAL_FOLDER.search(folder)):
                journal = profile.expand("{memory}/" + note.name + ".md")
                return (f"'{note.path}' is named like a daily journal but sits outside the "
                        f"memory folder, where the runtime never loads it; append it to "
                        f"{journal}")
        return None


def _declared_type(note, profile) -> str | None:
    """The profile type a note's frontmatter names (``type:`` or one of its aliases)."""
    fm = note.frontmatter
    if not fm:
        return None
    for key in ["type"] + list(profile.property_aliases.get("type", [])):
        value = fm.get(key)
        if isinstance(value, str) and value.strip():
            value = value.strip()
            if value in profile.types:
                return value
            if value.lower() in profile.types:
                return value.lower()
            return None
    return None


RULE = UnknownLocation

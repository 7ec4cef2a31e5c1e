"""Rule packs (``rules/*.yaml``) and ``vaultkit.toml``, validated with pydantic.

A profile says where each layer lives, what each note type's frontmatter must
hold, the budgets and the phrase lists. ``vaultkit.toml`` picks a profile and
adjusts it: rule selection, severities, per-file ignores, excludes, budget
overrides, extra phrases, extra layers and types. Anything malformed raises
:class:`ConfigError` with one line naming the file and the field.
"""

from __future__ import annotations

import datetime as _dt
import fnmatch
import os
import re
import sys
from functools import cached_property
from pathlib import Path

from vaultkit import __version__
from vaultkit.core.bounded import MAX_CONFIG_BYTES  # (vaultkit.toml and rule packs)
from vaultkit.core.digests import sha1
from vaultkit.core.lazyre import lazy_re
from vaultkit.core.plain import Declared, Factory, asdict, fields, made
from vaultkit.vault.scan import in_skipped_folder  # (per path: imported once, here)

CONFIG_NAME = "vaultkit.toml"
MAX_DAYS = 100_000  # day counts in settings: dates end at year 9999
_SEVERITY = ("error", "warning", "info")  # a rule's level (``Severity``)
TYPE_CHECKING = False  # (typing's own flag costs importing typing)
if TYPE_CHECKING:  # (the annotations are read as text where settings are rebuilt, and
    # evaluated with these names, _annotation_names, only where they are validated)
    from typing import Any, Literal

    Severity = Literal["error", "warning", "info"]
# Models are plain classes (vaultkit.core.plain.Declared): pydantic validates their
# dataclass twins (``_validate``) only when a profile or config is read afresh, and the
# plain objects are built from the data validated; a run whose files are unchanged
# rebuilds them from the settings cache without importing pydantic or dataclasses at all.
_STRICT = {"extra": "forbid"}


class ConfigError(Exception):
    """A profile or config file that cannot be used. The message is one line."""


_SEP = "\x1f"  # separates a field name from its message in __post_init__ errors


def _invalid(name: str, message: str) -> ValueError:
    """An error about one field, found in ``__post_init__`` (reported as ``parent.name``)."""
    return ValueError(f"{name}{_SEP}{message}")


def _in_vault(value: str, name: str) -> str:
    """A vault-relative path or pattern: nothing absolute, no '..' (config stays in the vault)."""
    if value.startswith(("/", "~")) or "\\" in value or re.match(r"^[A-Za-z]:", value) \
            or ".." in value.split("/"):
        raise _invalid(name, f"path {value!r} leaves the vault; give a path relative to the "
                             "vault root without '..'")
    from vaultkit.core.confine import protected_part

    part = protected_part(value)
    if part is not None:  # (vaultkit never writes there, and never reads notes from there)
        raise _invalid(name, f"path {value!r} lies in {part}/, where vaultkit never reads "
                             "notes or writes; choose a path outside it")
    return value


class PropertySpec(Declared):
    """What a frontmatter property of a note type holds."""

    __pydantic_config__ = _STRICT
    type: Literal["string", "date", "list", "number", "boolean", "any"] = "any"
    items: Literal["string", "date", "number", "any"] = "any"
    required: bool = False
    enum: list[str] | None = None


class TypeSpec(Declared):
    """A note type: its folder, properties and required sections."""

    __pydantic_config__ = _STRICT
    folder: str
    properties: dict[str, PropertySpec] = Factory(dict)
    sections: list[str] = Factory(list)  # required `## ` sections
    optional_sections: list[str] = Factory(list)
    entry_level: int | None = None  # heading level of entries (lessons: 2)
    # other names a required section goes by (other languages, other wording):
    # {"Context": ["Background", "背景", "Контекст"]}
    section_aliases: dict[str, list[str]] = Factory(dict)

    def __post_init__(self):
        _in_vault(self.folder, "folder")


class LayerSpec(Declared):
    """Where one layer lives.

    ``paths`` claim files by path pattern, minus ``exclude``. A layer with ``header``
    claims only the files among them whose opening lines (blank lines and HTML comments
    skipped) match those regexes in order: the session-memory transcripts are known by
    their ``# Session:`` header, not by their name. A ``fallback`` layer claims what no
    other layer does (topical folders in the memory tree, the agent's working area);
    placement rules treat its files as unclaimed and report them only under
    ``strict-placement``. ``entry_level`` is a heading level or ``auto`` (found per file).
    """

    __pydantic_config__ = _STRICT
    name: str
    paths: list[str]
    description: str = ""
    entry_level: int | str | None = None
    exclude: list[str] = Factory(list)
    header: list[str] = Factory(list)
    fallback: bool = False

    def __post_init__(self):
        for p in self.paths + self.exclude:
            _in_vault(p, "paths")
        if isinstance(self.entry_level, str) and self.entry_level != "auto":
            raise _invalid("entry_level", f"must be a heading level (1-6) or 'auto', got "
                                          f"{self.entry_level!r}")
        for regex in self.header:
            try:
                re.compile(regex)
            except re.error as exc:
                raise _invalid("header", f"regex {regex!r} does not compile: {exc}") from None


def _at_least(obj, low: float, *names: str) -> None:
    for name in names:
        if getattr(obj, name) < low:
            raise _invalid(name, f"must be at least {low:g}")


class Budgets(Declared):
    """The size and count limits of a profile (`budgets:`)."""

    __pydantic_config__ = _STRICT
    memory_md_bytes: int = 10240
    # the design notes' "bootstrap layer < 20KB": a guideline on what OpenClaw injects,
    # counted as the runtime counts (UTF-16 units), not a runtime limit. The old name
    # bootstrap-total-bytes is read as this one.
    bootstrap_guideline_chars: int = 20480
    # the seeds' "a typical session loads ~15KB": OpenClaw's injected bootstrap files plus
    # today's and yesterday's journal, in UTF-16 units (old name: session-footprint-bytes)
    session_guideline_chars: int = 15360
    index_bytes: int = 8192
    entry_min_lines: int = 3
    entry_max_lines: int = 15
    # an entry under entry_min_lines is still fine when its text (heading words and body)
    # is this long: one line can say what happened; a CJK character counts as three
    entry_min_chars: int = 100
    max_file_bytes: int = 10 * 1024 * 1024
    journal_keep_days: int = 30  # `vaultkit archive` moves older journals into the archive

    def __post_init__(self):
        _at_least(self, 0, "memory_md_bytes", "bootstrap_guideline_chars",
                  "session_guideline_chars", "index_bytes",
                  "entry_min_lines", "entry_min_chars", "journal_keep_days")
        _at_least(self, 1, "entry_max_lines", "max_file_bytes")


class Phrases(Declared):
    """The phrase lists the rules match (`phrases:`)."""

    __pydantic_config__ = _STRICT
    lesson: list[str] = Factory(list)
    filler: list[str] = Factory(list)
    decision: list[str] = Factory(list)
    preference: list[str] = Factory(list)
    stale: list[str] = Factory(list)  # time-bound wording in MEMORY.md (`distill`)
    # bold labels that date a lesson or decision entry: **Date:**, **发生时间：**, **Дата:**
    date_label: list[str] = Factory(list)
    # `[[...]]` that are not links: runtime directives, scraped text, JSON arrays
    not_link: list[str] = Factory(list)
    # journal sections the runtime writes (dreaming's `## Light Sleep`): not entries
    runtime_section: list[str] = Factory(list)
    # journal sections about the day, not events in it (## Next Step, ## 遗留问题): not entries
    topic_section: list[str] = Factory(list)
    # `[text](url)` targets that are placeholders, never files: url, link, path, ...
    placeholder_link: list[str] = Factory(list)
    # labels before a date that stamp a file, not record a day: last updated, archived at
    stamp_label: list[str] = Factory(list)

    def __post_init__(self):
        for name in ("lesson", "filler", "decision", "preference", "stale", "date_label",
                     "not_link", "runtime_section", "topic_section", "placeholder_link",
                     "stamp_label"):
            for phrase in getattr(self, name):
                if phrase.startswith("re:"):
                    try:
                        re.compile(phrase[3:])
                    except re.error as exc:
                        raise _invalid(name, f"regex {phrase[3:]!r} does not compile: "
                                             f"{exc}") from None
                    from vaultkit.core.bounded import regex_problem

                    # run on every note and every logged entry: no exponential backtracking
                    slow = regex_problem(phrase[3:], re.IGNORECASE)
                    if slow:
                        raise _invalid(name, f"regex {phrase[3:]!r} can take exponential time: "
                                             f"{slow}")


class IndexSettings(Declared):
    """Where INDEX.md is and how it is ordered (`index:`)."""

    __pydantic_config__ = _STRICT
    path: str = "{memory}/INDEX.md"
    order: list[str] = Factory(lambda: [
        "decision", "lesson", "person", "project", "preference", "knowledge"])
    recent_days: int = 7
    most_linked: int = 10

    def __post_init__(self):
        _in_vault(self.path, "path")
        _at_least(self, 0, "recent_days", "most_linked")
        if self.recent_days > MAX_DAYS:
            raise _invalid("recent_days", f"must be at most {MAX_DAYS:,}")


class LinkSettings(Declared):
    """How ``broken-link`` judges links.

    ``forward_links``: ``report`` (a link to a note that does not exist yet is reported)
    or ``allow`` (it is a deliberate forward link, as Obsidian shows it grey; a missing
    heading, block or attachment is still reported). ``exclude``: globs of notes whose
    links are not checked (vendored packages and generated sites copied into the vault).
    """

    __pydantic_config__ = _STRICT
    forward_links: Literal["report", "allow"] = "report"
    exclude: list[str] = Factory(list)

    def __post_init__(self):
        for p in self.exclude:
            _in_vault(p, "exclude")

    @cached_property
    def exclude_patterns(self) -> list[re.Pattern]:
        return [re.compile(fnmatch.translate(p)) for p in self.exclude]

    def excluded(self, path: str) -> bool:
        """True for a note whose links are not checked: it matches a glob (``tmp/**``
        covers ``tmp/pkg/README.md``, ``**/vendor/**`` covers ``vendor/a.md`` too)."""
        pats = self.exclude_patterns
        if not pats:
            return False
        # '**/' also matches no folder at all: **/vendor/** covers vendor/a.md
        return any(p.match(path) or p.match("/" + path) for p in pats)


class GitSettings(Declared):
    """The git rules' thresholds (`git:`)."""

    __pydantic_config__ = _STRICT
    mass_deletion_ratio: float = 0.5
    # the share of MEMORY.md's durable non-blank lines one cut may drop (not moved into
    # another note) and pass as pruning; openclaw.json's maxPriorEntryLossFraction, when
    # set, comes before it (vaultkit.vault.loss.prune_setting; docs/snapshots.md)
    memory_md_prune_ratio: float = 0.25
    churn_days: int = 14
    backup_max_age_hours: float = 36
    # memory files rewritten or deleted by design; mass-deletion leaves them alone
    mass_deletion_exempt: list[str] = Factory(list)

    def __post_init__(self):
        if not 0 < self.mass_deletion_ratio <= 1:
            raise _invalid("mass_deletion_ratio", "must be greater than 0 and at most 1")
        if not 0 <= self.memory_md_prune_ratio <= 1:
            raise _invalid("memory_md_prune_ratio", "must be at least 0 and at most 1")
        _at_least(self, 1, "churn_days")
        if self.churn_days > MAX_DAYS:  # git's --since and Python's dates end at year 1
            raise _invalid("churn_days", f"must be at most {MAX_DAYS:,}")
        if not 0 < self.backup_max_age_hours < float("inf"):
            raise _invalid("backup_max_age_hours", "must be a positive number of hours")


# (vaultkit.vault.runtimes.registry maps each to its module; tests/test_context.py checks
# that the two agree)
RUNTIME_LOADERS = ("workspace-set", "claude-memory", "project-docs", "entry-store",
                   "memory-summary", "context-md")
RUNTIME_UNITS = ("utf16", "bytes", "codepoints")


class RuntimeSpec(Declared):
    """How one agent runtime loads files from the vault at session start (``runtimes:``).

    ``loader`` names the loading algorithm (``workspace-set``: OpenClaw's bootstrap files;
    ``claude-memory``: Claude Code's CLAUDE.md tree, imports, rules and auto memory;
    ``project-docs``: Codex's AGENTS.md from the repository root down; ``entry-store``:
    Hermes Agent's MEMORY.md and USER.md, entries under a usage header; ``memory-summary``:
    Codex's memories/memory_summary.md; ``context-md``: Gemini CLI's GEMINI.md files and
    their ``@file`` imports). Everything else is
    data: file names and their order, limits and their unit, how a file is cut and the
    marker written there, the sets each session type gets. A new runtime that loads like
    one of these, or a changed limit, is an edit here or in ``vaultkit.toml``
    (``[runtime.NAME]``), not code. See docs/context.md for each field's source.
    """

    __pydantic_config__ = _STRICT
    loader: Literal["workspace-set", "claude-memory", "project-docs", "entry-store",
                    "memory-summary", "context-md"]
    label: str = ""
    # the runtime applies when one of these exists in the workspace (or, for openclaw.json,
    # where OpenClaw looks for its config); vaultkit.toml `runtimes = [...]` overrides
    detect: list[str] = Factory(list)
    unit: Literal["utf16", "bytes", "codepoints"] = "utf16"  # codepoints: Python's len()
    files: list[str] = Factory(list)  # in load order
    optional: list[str] = Factory(list)  # skipped, not marked, when missing
    per_file_max: int | None = None
    total_max: int | None = None
    min_file_budget: int = 0  # with less than this left of the total, later files are dropped
    head_ratio: float = 0.75  # of a cut file's kept content, the share from its head
    marker: str = ""  # written where a file is cut: {name} {head} {tail} {length}
    compact_marker: str = ""  # when the full marker leaves under 16 units of content
    missing_marker: str = ""  # injected for a listed file that does not exist: {path}
    # a file cut with a digest of its policy lines between head and tail (OpenClaw's AGENTS.md)
    digest_file: str = ""
    digest_ratios: list[float] = Factory(lambda: [0.45, 0.35, 0.15])
    digest_line_max: int = 240
    digest_marker: str = ""
    digest_header: str = ""
    digest_omitted: str = ""
    digest_summary: str = ""
    digest_candidate: list[str] = Factory(list)  # regexes: a policy line
    digest_priority: str = ""  # regex: a policy line taken first
    sessions: dict[str, list[str]] = Factory(dict)  # session -> files it gets
    joiner: str = ""  # between files, when the runtime joins them into one text
    import_max_depth: int = 0  # @path imports: hops followed (0: no imports)
    rules_dir: str = ""  # folder of always-loaded rule files (Claude Code's .claude/rules)
    auto_memory: str = ""  # the auto-memory index file name (Claude Code's MEMORY.md)
    auto_memory_dir: str = ""  # vault-relative folder holding it, when it lives in the vault
    auto_memory_lines: int | None = None
    auto_memory_max: int | None = None
    auto_memory_marker: str = ""
    context_window_tokens: int = 200000
    # entry-store (Hermes): a limit and a header per file name, the entry separator, the block
    # each file becomes ({header} {content}), the flag of a file over its limit, and the
    # cut of a file past max(limit * render_cap[0], render_cap[1]): head and tail shares
    file_limits: dict[str, int] = Factory(dict)
    file_headers: dict[str, str] = Factory(dict)
    entry_separator: str = ""
    block_template: str = ""
    over_flag: str = ""
    render_cap: list[int] = Factory(list)
    render_ratios: list[float] = Factory(list)
    # OpenClaw: MEMORY.md is not injected when the harness is one of these and memory tools
    # are on (the Codex harness routes it to memory_search / memory_get)
    memory_tool_harnesses: list[str] = Factory(list)
    # context-md (Gemini CLI): a JSON settings file in the workspace whose dotted key
    # renames the context file (context.fileName: a name or a list of names)
    settings_file: str = ""
    settings_key: str = ""
    # the skills the runtime ships; a workspace skill of the same `name` replaces one
    bundled_skills: list[str] = Factory(list)

    def __post_init__(self):
        for name in ("per_file_max", "total_max", "auto_memory_lines", "auto_memory_max"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise _invalid(name, "must be at least 0")
        _at_least(self, 0, "min_file_budget", "import_max_depth", "digest_line_max")
        _at_least(self, 1, "context_window_tokens")
        if not 0 <= self.head_ratio <= 1:
            raise _invalid("head_ratio", "must be between 0 and 1")
        if len(self.digest_ratios) != 3 or any(not 0 <= r <= 1 for r in self.digest_ratios):
            raise _invalid("digest_ratios", "must be three shares (head, digest, tail) "
                                            "between 0 and 1")
        for regex in self.digest_candidate + ([self.digest_priority] if self.digest_priority else []):
            try:
                re.compile(regex)
            except re.error as exc:
                raise _invalid("digest_candidate", f"regex {regex!r} does not compile: "
                                                   f"{exc}") from None
        for name, limit in self.file_limits.items():
            if limit < 0:
                raise _invalid(f"file_limits.{name}", "must be at least 0")
        if self.render_cap and (len(self.render_cap) != 2 or min(self.render_cap) < 0):
            raise _invalid("render_cap", "must be [factor, minimum], both at least 0")
        if self.render_ratios and (len(self.render_ratios) != 2
                                   or any(not 0 <= r <= 1 for r in self.render_ratios)):
            raise _invalid("render_ratios", "must be two shares (head, tail) between 0 and 1")
        for name in (self.files + self.optional
                     + [self.rules_dir, self.auto_memory_dir, self.settings_file]):
            if name:
                _in_vault(name, "files")
        for session, names in self.sessions.items():
            unknown = [n for n in names if n != "*" and n not in self.files]
            if unknown:
                raise _invalid(f"sessions.{session}", f"{', '.join(unknown)} not in files")


class Profile(Declared):
    """A rule pack: the layers of a vault, its note types, budgets and phrases."""

    __pydantic_config__ = _STRICT
    name: str
    layers: list[LayerSpec]
    description: str = ""
    memory_dir: str = "memory"
    bootstrap_files: list[str] = Factory(list)
    common_properties: dict[str, PropertySpec] = Factory(dict)
    types: dict[str, TypeSpec] = Factory(dict)
    budgets: Budgets = Factory(Budgets)
    phrases: Phrases = Factory(Phrases)
    colors: dict[str, str] = Factory(dict)
    index: IndexSettings = Factory(IndexSettings)
    git: GitSettings = Factory(GitSettings)
    links: LinkSettings = Factory(LinkSettings)
    # report every file no named layer claims (fallback layers included) as unknown-location
    strict_placement: bool = False
    # folders (vault-relative paths, no wildcards) never read: whole-workspace backup
    # copies inside the workspace, vendored trees
    skip_folders: list[str] = Factory(list)
    # folders of skip_folders whose Markdown files secret-in-memory still reads: a backup
    # copy of memory holds its credentials too, and is pushed with it
    secret_scan_folders: list[str] = Factory(list)
    # frontmatter keys read as another when it is absent: {"type": ["category"]}
    property_aliases: dict[str, list[str]] = Factory(dict)
    # the agent runtimes that load this vault and how (vaultkit.vault.runtimes)
    runtimes: dict[str, RuntimeSpec] = Factory(dict)
    # which runtimes apply; None: detected from the files present
    runtimes_enabled: list[str] | None = None

    def __post_init__(self):
        if self.runtimes_enabled is not None:
            unknown = [n for n in self.runtimes_enabled if n not in self.runtimes]
            if unknown:
                raise _invalid("runtimes", f"unknown runtime {unknown[0]!r} (known: "
                                           f"{', '.join(self.runtimes) or 'none'})")
        for name in self.bootstrap_files:
            if not name or "/" in name or "\\" in name or name in (".", ".."):
                raise _invalid("bootstrap_files", f"{name!r} must be a plain file name "
                                                  "(the files sit in the workspace folder)")
        for key, colour in self.colors.items():
            if not re.fullmatch(r"#[0-9a-fA-F]{6}", colour):
                raise _invalid(f"colors.{key}", f"must be '#rrggbb', got {colour!r}")
        _in_vault(self.memory_dir, "memory_dir")
        for folder in self.skip_folders:
            _in_vault(folder, "skip_folders")
            if any(c in folder for c in "*?[") or not folder.strip("/"):
                raise _invalid("skip_folders", f"{folder!r} must be a folder path without "
                                               "wildcards (use exclude in vaultkit.toml for "
                                               "patterns)")
        skipped = {f.strip("/") for f in self.skip_folders}
        for folder in self.secret_scan_folders:
            if folder.strip("/") not in skipped:
                raise _invalid("secret_scan_folders", f"{folder!r} is not one of skip_folders "
                                                      f"({', '.join(sorted(skipped)) or 'none'})")

    # -- derived ---------------------------------------------------------------

    def expand(self, pattern: str) -> str:
        """Put ``memory_dir`` into a pattern and normalise it."""
        mem = self.memory_dir.strip("/")
        out = pattern.replace("{memory}/", "" if mem in ("", ".") else mem + "/")
        return out.replace("{memory}", "" if mem in ("", ".") else mem)

    @cached_property
    def layer_matchers(self) -> list[tuple[LayerSpec, frozenset[str], list[tuple[str, re.Pattern]],
                                           list[re.Pattern], list[re.Pattern]]]:
        """``(layer, literal paths, (literal prefix, pattern) pairs, excludes, header
        regexes)``: named layers first, fallbacks last. A path without wildcards is a set
        lookup; a pattern's literal start rules most paths out before its regex runs."""
        ordered = [x for x in self.layers if not x.fallback] + [x for x in self.layers if x.fallback]
        out = []
        for layer in ordered:
            literals, patterns = set(), []
            for p in layer.paths:
                full = self.expand(p)
                prefix = _literal_prefix(full)
                if prefix == full:
                    literals.add(full)
                else:
                    patterns.append((prefix, _lazy_pattern(full)))
            out.append((layer, frozenset(literals), patterns,
                        [_lazy_pattern(self.expand(p)) for p in layer.exclude],
                        [lazy_re(h, listed=False) for h in layer.header]))
        return out

    @cached_property
    def fallback_layers(self) -> frozenset[str]:
        return frozenset(x.name for x in self.layers if x.fallback)

    @cached_property
    def header_lines(self) -> int:
        """How many opening lines a header layer looks at (0: no layer needs content)."""
        return max((len(x.header) for x in self.layers), default=0)

    @cached_property
    def type_folders(self) -> dict[str, str]:
        """Vault-relative folder -> type name."""
        return {self.expand(spec.folder).strip("/"): name for name, spec in self.types.items()}

    @property
    def memory_prefix(self) -> str:
        mem = self.memory_dir.strip("/")
        return "" if mem in ("", ".") else mem + "/"

    def layer_of(self, path: str, opening=None) -> str | None:
        """The layer claiming ``path``. Layers known by a header need ``opening``, a callable
        giving the note's first content lines; without it (a path alone) they are skipped."""
        for name, header in self._path_layers(path):
            if header:
                if opening is None or not _opens_with(header, opening()):
                    continue
            return name
        return None

    @cached_property
    def _path_memo(self) -> dict[str, tuple]:
        return {}

    def _path_layers(self, path: str) -> tuple:
        """``(layer name, header regexes)`` of the layers whose paths claim ``path``, in
        order, up to the first that needs no header; memoised (a run asks more than once)."""
        memo = self._path_memo
        hit = memo.get(path)
        if hit is not None:
            return hit
        if in_skipped_folder(path):  # never read (.git/, .dreams/, ...): of no layer, so
            memo[path] = ()          # no git rule or history judges a change there
            return ()
        folder = path[:path.rfind("/") + 1]
        plan = self._folder_plans.get(folder)
        if plan is None:
            plan = self._folder_plans[folder] = self._folder_plan(folder)
        out = []
        for layer, literals, patterns, excludes, header in plan:
            found = path in literals
            if not found:
                for prefix, pattern in patterns:
                    if (prefix is None or path.startswith(prefix)) and pattern.match(path) \
                            and _dates_real(pattern, path):
                        found = True
                        break
            if not found:
                continue
            if excludes and any(x.match(path) and _dates_real(x, path) for x in excludes):
                continue
            out.append((layer.name, header))
            if not header:
                break
        memo[path] = hit = tuple(out)
        return hit

    @cached_property
    def _folder_plans(self) -> dict[str, list]:
        return {}

    def _folder_plan(self, folder: str) -> list:
        """:attr:`layer_matchers` narrowed to what can claim a path in ``folder`` (``""``
        or ending in ``/``), in the same order: the literal paths in that folder, and the
        patterns whose literal start the folder decides (kept with ``None`` for a prefix
        the folder starts with, left out when it does not) or that reach into the file
        name (kept with their prefix); a layer with neither is left out. A cold check asks
        for 10,000 paths in a few dozen folders, each once."""
        plan = []
        for layer, literals, patterns, excludes, header in self.layer_matchers:
            here = frozenset(x for x in literals if x[:x.rfind("/") + 1] == folder)
            kept = []
            for prefix, pattern in patterns:
                if len(prefix) > len(folder):
                    kept.append((prefix, pattern))
                elif folder.startswith(prefix):
                    kept.append((None, pattern))
            if here or kept:
                plan.append((layer, here, kept, excludes, header))
        return plan

    def claims(self, path: str, layer: str | None) -> bool:
        """True when ``layer`` is a named layer (not a fallback, not None)."""
        return layer is not None and layer not in self.fallback_layers

    def type_of(self, path: str) -> str | None:
        folder = path.rsplit("/", 1)[0] if "/" in path else ""
        return self.type_folders.get(folder)

    def property_key(self, frontmatter: dict, key: str) -> str | None:
        """The key ``frontmatter`` gives ``key``'s value under: ``key`` itself, else the
        first of its ``property_aliases`` present (``category`` for ``type``), else None."""
        if key in frontmatter:
            return key
        for alias in self.property_aliases.get(key, ()):
            if alias in frontmatter:
                return alias
        return None

    def layer(self, name: str) -> LayerSpec | None:
        for layer in self.layers:
            if layer.name == name:
                return layer
        return None


_DATE_RE = r"(?P<date{n}>\d{{4}}-\d{{2}}-\d{{2}})"


def _literal_prefix(pattern: str) -> str:
    """The part of a layer path pattern before its first wildcard or token."""
    cut = len(pattern)
    for token in ("*", "?", "{date}", "{time}"):
        at = pattern.find(token)
        if at >= 0:
            cut = min(cut, at)
    return pattern[:cut]


def _opens_with(header: list[re.Pattern], lines: list[str]) -> bool:
    if len(lines) < len(header):
        return False
    return all(regex.search(line) for regex, line in zip(header, lines))


# Layer path patterns: the one place their syntax is read.
_TOKEN = lazy_re(r"\*\*/|\*\*|\*|\?|\{date\}|\{time\}|.", re.S)


def pattern_tokens(pattern: str) -> list[str]:
    """Split a layer path pattern into ``**/``, ``**``, ``*``, ``?``, ``{date}``, ``{time}`` and single
    literal characters; :func:`compile_pattern` and the Obsidian graph queries render them."""
    return _TOKEN.findall(pattern)


def compile_pattern(pattern: str) -> re.Pattern:
    """Compile a layer path pattern: ``*``, ``**``, ``?``, ``{date}`` and ``{time}`` (a clock
    time written HHMM); case-sensitive."""
    return re.compile(_pattern_regex(pattern))


def _lazy_pattern(pattern: str):
    """:func:`compile_pattern`, compiled when first matched: a profile has some thirty
    layer patterns (~0.4 M instructions each to compile) and a commit hook's few paths
    reach only those whose literal start their folders allow (:meth:`Profile._folder_plan`)."""
    return lazy_re(_pattern_regex(pattern), listed=False)


def _pattern_regex(pattern: str) -> str:
    out = []
    dates = 0
    for token in pattern_tokens(pattern):
        if token == "{date}":
            out.append(_DATE_RE.format(n=dates))
            dates += 1
        else:
            out.append(_PY_REGEX.get(token) or re.escape(token))
    return "".join(out) + r"\Z"


_PY_REGEX = {"**/": r"(?:[^/]+/)*", "**": r".*", "*": r"[^/]*", "?": r"[^/]",
             "{time}": r"(?:[01]\d|2[0-3])[0-5]\d"}


def _dates_real(pattern: re.Pattern, path: str) -> bool:
    if "date0" not in pattern.groupindex:
        return True
    m = pattern.match(path)
    for name in pattern.groupindex:
        if name.startswith("date"):
            try:
                _dt.date.fromisoformat(m.group(name))
            except ValueError:
                return False
    return True


# -- vaultkit.toml ----------------------------------------------------------------

class ConfigFile(Declared):
    """The keys ``vaultkit.toml`` accepts (kebab-case, like ruff's)."""

    __pydantic_config__ = _STRICT
    # a bundled pack or a path; None: chosen by what the folder is (detect_profile)
    profile: str | None = None
    required_version: str | None = None  # e.g. ">=0.1.0" or ">=0.1,<0.3" (like ruff's)
    memory_dir: str | None = None
    select: list[str] | None = None
    ignore: list[str] = Factory(list)
    extend_select: list[str] = Factory(list)
    per_file_ignores: dict[str, list[str]] = Factory(dict)
    exclude: list[str] = Factory(list)
    fail_on: Literal["error", "warning"] = "error"
    timezone: str | None = None
    baseline: str | None = None  # the baseline file, vault-relative (vaultkit-baseline.json)
    severity: dict[str, Severity] = Factory(dict)
    budgets: dict[str, int] = Factory(dict)
    phrases: dict[str, list[str]] = Factory(dict)
    layers: list[LayerSpec] = Factory(list)
    types: dict[str, TypeSpec] = Factory(dict)
    colors: dict[str, str] = Factory(dict)
    git: dict[str, float] = Factory(dict)
    # snapshots between commits (keep-days, interval): read by vaultkit.vault.snapshots
    snapshots: dict[str, Any] = Factory(dict)
    index: dict[str, Any] = Factory(dict)
    # [links] forward-links = "allow" | "report"; exclude = [...] (added to the profile's)
    links: dict[str, Any] = Factory(dict)
    strict_placement: bool | None = None
    property_aliases: dict[str, list[str]] = Factory(dict)
    runtimes: list[str] | None = None  # which runtimes apply (default: detected)
    runtime: dict[str, dict[str, Any]] = Factory(dict)  # [runtime.NAME] overrides

    def __post_init__(self):
        if self.timezone:  # checked with the rest, not first by the command that uses it
            _check_timezone(self.timezone)
        if self.baseline is not None:  # written by `check`: confined like every write
            _in_vault(self.baseline, "baseline")
            if not self.baseline.strip("/. "):
                raise _invalid("baseline", f"path {self.baseline!r} names no file; give a "
                                           "file such as vaultkit-baseline.json")


def _check_timezone(name: str) -> None:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise _invalid("timezone", f"unknown time zone {name!r} (use an IANA name such as "
                                   "'Asia/Shanghai')") from None


# vaultkit.toml spells multi-word keys in kebab-case
_KEBAB = {f.replace("_", "-"): f for f in ("memory_dir", "extend_select", "per_file_ignores",
                                            "fail_on", "required_version", "strict_placement",
                                            "property_aliases")}


def check_required_version(spec: str, version: str = __version__) -> str | None:
    """Why ``version`` does not satisfy ``spec`` (``==X``, ``>=X``, ``<X``, comma-joined), or None."""
    if len(spec) > 200:  # (Python will not even convert an integer of 4,300 digits)
        raise ConfigError(f"{CONFIG_NAME}: required-version: {len(spec):,} characters; "
                          "a version specifier is short (e.g. \">=0.1.0\")")

    def parts(v: str) -> tuple[int, ...]:
        nums = re.findall(r"\d+", v)
        if not nums:
            raise ConfigError(f"{CONFIG_NAME}: required-version: {spec!r} is not a version "
                              "specifier (e.g. \">=0.1.0\")")
        out = tuple(int(n) for n in nums[:3])
        return out + (0,) * (3 - len(out))

    have = parts(version)
    for clause in (c.strip() for c in spec.split(",") if c.strip()):
        m = re.fullmatch(r"(==|>=|<=|!=|>|<|~=)?\s*v?([\d.]+)", clause)
        if not m:
            raise ConfigError(f"{CONFIG_NAME}: required-version: {clause!r} is not a version "
                              "specifier (e.g. \">=0.1.0\")")
        op, want = m.group(1) or "==", parts(m.group(2))
        # ~=X.Y means >=X.Y, ==X.*; ~=X.Y.Z means >=X.Y.Z, ==X.Y.* (PEP 440)
        fixed = max(1, len([p for p in m.group(2).split(".") if p]) - 1)
        ok = {"==": have == want, ">=": have >= want, "<=": have <= want, "!=": have != want,
              ">": have > want, "<": have < want,
              "~=": have >= want and have[:fixed] == want[:fixed]}[op]
        if not ok:
            return (f"{CONFIG_NAME} requires vaultkit {spec}, but this is vaultkit {version}; "
                    "install a matching version (pip install 'vaultkit-lint" + spec.replace(" ", "")
                    + "')")
    return None


class Settings:
    """A profile with a vault's ``vaultkit.toml`` applied: everything a run needs."""

    def __init__(self, profile: Profile, config: ConfigFile, fingerprint: str,
                 config_path: Path | None = None):
        self.profile = profile
        self.config = config
        self.fingerprint = fingerprint
        self.config_path = config_path

    @cached_property
    def exclude_patterns(self) -> list[re.Pattern]:
        return [re.compile(fnmatch.translate(p.rstrip("/"))) for p in self.config.exclude]

    @cached_property
    def skip_folders(self) -> frozenset[str]:
        return frozenset(p.strip("/") for p in self.profile.skip_folders)

    @cached_property
    def _nested_skip(self) -> bool:
        return any("/" in p for p in self.skip_folders)

    @property
    def excludes_anything(self) -> bool:
        return bool(self.config.exclude or self.profile.skip_folders)

    def is_excluded(self, rel: str) -> bool:
        skip = self.skip_folders
        if skip:  # the walker asks per folder, so one or two set lookups do
            if rel in skip or rel.partition("/")[0] in skip:
                return True
            if self._nested_skip and any(rel[:i] in skip for i in _slash_positions(rel)):
                return True
        for pattern in self.exclude_patterns:
            if pattern.match(rel) or any(pattern.match(rel[:i]) for i in _slash_positions(rel)):
                return True
        return False

    def is_excluded_file(self, rel: str) -> bool:
        """:meth:`is_excluded` of a file in a folder the walk entered: neither that folder
        nor one above it is excluded (each was asked when it was entered), so the file's
        own path alone decides. (The walk asks this for each of 10,000 files.)"""
        if rel in self.skip_folders:
            return True
        for pattern in self.exclude_patterns:
            if pattern.match(rel):
                return True
        return False

    @property
    def file_excluder(self):
        """:meth:`is_excluded_file` as the walk asks it of each file: without ``exclude``
        patterns, the skip folders' set's own ``__contains__`` (a lookup in C, not a call
        into Python for each of 10,000 files: ~1 M instructions a thousand files)."""
        if self.config.exclude:
            return self.is_excluded_file
        return self.skip_folders.__contains__


def _slash_positions(rel: str):
    i = rel.find("/")
    while i >= 0:
        yield i
        i = rel.find("/", i + 1)


def _validate(cls, data, source: str):
    """Validate plain data into settings class ``cls`` with pydantic (imported only here):
    pydantic validates the class's dataclass twin (:func:`_twins`), and the plain object
    is built from the data it validated, as one read from the settings cache is."""
    import dataclasses

    from pydantic import TypeAdapter, ValidationError

    adapter, twin = _adapter(cls, TypeAdapter)
    try:
        validated = adapter.validate_python(data)
    except ValidationError as exc:
        raise ConfigError(_format_validation(source, exc, twin)) from None
    return _build(cls, dataclasses.asdict(validated))


# the settings classes, each after those its fields hold (their twins are made in order)
_SETTINGS_CLASSES = ("PropertySpec", "TypeSpec", "LayerSpec", "Budgets", "Phrases",
                     "IndexSettings", "LinkSettings", "GitSettings", "RuntimeSpec", "Profile",
                     "ConfigFile")


def _twins() -> dict:
    """Every settings class's dataclass twin, by name, for pydantic to validate: the same
    name, fields, annotations (a settings class in them named by its twin), defaults,
    ``__post_init__`` and pydantic config. Made only when settings are validated (a
    vault whose config changed); nothing else imports ``dataclasses``."""
    import dataclasses

    module = {**globals(), **_annotation_names()}
    twins: dict = {}
    for name in _SETTINGS_CLASSES:
        cls = module[name]
        namespace = {"__module__": cls.__module__, "__qualname__": cls.__qualname__,
                     "__doc__": cls.__doc__, "__annotations__": {},
                     "__pydantic_config__": cls.__pydantic_config__}
        if "__post_init__" in vars(cls):
            namespace["__post_init__"] = cls.__post_init__
        for field_name in fields(cls):
            namespace["__annotations__"][field_name] = eval(  # noqa: S307 (our own annotations)
                cls.__annotations__[field_name], module, twins)
            default = vars(cls).get(field_name, _NONE)
            if type(default) is Factory:
                namespace[field_name] = dataclasses.field(default_factory=default.make)
            elif default is not _NONE:
                namespace[field_name] = default
        twins[name] = dataclasses.dataclass(repr=False, eq=False)(type(name, (), namespace))
    return twins


_NONE = object()  # (a field without a default)


_ADAPTERS: dict = {}


def _adapter(cls, factory):
    """The pydantic adapter of ``cls``'s twin, and the twin (made once per process)."""
    if cls not in _ADAPTERS:
        twin = _twins()[cls.__name__]
        _ADAPTERS[cls] = (factory(twin), twin)
    return _ADAPTERS[cls]


def _did_you_mean(cls, loc, kebab: bool) -> str:
    """`` (did you mean 'x'?)`` for an unknown key close to one the dataclass at ``loc``
    knows (a misspelt ``[chek]`` or ``ignroe``), else ``""``: the keys are read from the
    dataclasses themselves, so the hint never names a key that does not exist."""
    import difflib

    known = _known_keys(cls, list(loc[:-1])) if cls is not None and loc else []
    if not known:
        return ""
    show = [k.replace("_", "-") if kebab else k for k in known]
    typed = str(loc[-1]).replace("_", "-") if kebab else str(loc[-1])
    close = difflib.get_close_matches(typed, show, n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _known_keys(cls, path: list) -> list[str]:
    """The field names of the dataclass reached from ``cls`` along ``path`` (field
    names, list indexes and mapping keys, as pydantic reports a location)."""
    import dataclasses
    import typing

    hint = cls
    for step in path:
        hint = _dataclass_in(hint)
        if hint is None:
            return []
        if isinstance(step, int) or step not in {f.name for f in dataclasses.fields(hint)}:
            # an index or a mapping key: step into the container's element type
            continue
        hint = typing.get_type_hints(hint, include_extras=False).get(step)
    found = _dataclass_in(hint)
    return [f.name for f in dataclasses.fields(found)] if found is not None else []


def _dataclass_in(hint):
    """The dataclass ``hint`` names, directly or as the element of a list, mapping or
    optional (``list[LayerSpec]``, ``dict[str, TypeSpec]``, ``Budgets | None``)."""
    import dataclasses
    import typing

    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return hint
    for arg in reversed(typing.get_args(hint)):
        found = _dataclass_in(arg)
        if found is not None:
            return found
    return None


def _format_validation(source: str, exc, cls=None) -> str:
    err = exc.errors()[0]
    # name keys as the user writes them: kebab-case in vaultkit.toml
    kebab = source.endswith(".toml")
    where = ".".join(str(p).replace("_", "-") if kebab and isinstance(p, str) else str(p)
                     for p in err["loc"]) or "(top level)"
    if err["type"] in ("extra_forbidden", "unexpected_keyword_argument"):
        return f"{source}: unknown key '{where}'{_did_you_mean(cls, err['loc'], kebab)}"
    if err["type"] == "missing_argument":
        return f"{source}: {where}: required key missing"
    msg = err["msg"]
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, "):]
    if _SEP in msg:
        name, msg = msg.split(_SEP, 1)
        name = name.replace("_", "-") if kebab else name
        where = f"{where}.{name}" if where != "(top level)" else name
    if where == "(top level)" and err["type"] in ("dataclass_type", "dataclass_args_type"):
        msg = "must be a mapping of keys"
    return f"{source}: {where}: {msg}"


def _annotation_names() -> dict:
    """What the settings classes' annotations name from ``typing`` (``Any``, ``Literal``,
    ``Severity``): for pydantic's twins and ``typing.get_type_hints``; imported only to
    validate, never to rebuild stored settings."""
    import typing

    return {"Any": typing.Any, "Literal": typing.Literal,
            "Severity": typing.Literal[_SEVERITY]}


def _build(cls, data):
    """Rebuild a tree of settings objects from data that was validated before (the
    settings cache, or pydantic just now: :func:`_validate`); their ``__post_init__``
    checks are not run again (:func:`vaultkit.core.plain.made`).

    Only a value that is a list or a mapping can hold a settings object to rebuild: its
    field's annotation, read as text (:func:`_shape`), says where; any other value (a
    scalar, None, a tuple) is the value itself. (Evaluating the annotations compiled each
    and imported ``typing``: most of a commit hook's settings once.)"""
    kwargs = {}
    for name in fields(cls):
        if name in data:
            value = data[name]
            kwargs[name] = _made(_field_shape(cls, name), value) \
                if isinstance(value, (list, dict)) else value
    return made(cls, kwargs)


_SHAPES: dict = {}


def _field_shape(cls, name: str):
    key = (cls, name)
    if key not in _SHAPES:
        owner = next(c for c in cls.__mro__ if name in c.__dict__.get("__annotations__", {}))
        _SHAPES[key] = _shape(owner.__dict__["__annotations__"][name])
    return _SHAPES[key]


def _shape(text: str):
    """Where a value annotated ``text`` holds settings objects to rebuild: a settings
    class, ``("list", item)``, ``("dict", value)``, or None (the value as it is). The
    annotations are this module's own, of a few forms: a name, ``X | None``,
    ``list[X]``, ``dict[K, V]``, ``Literal[...]`` (tests/test_hook_path.py compares each
    with what ``typing.get_type_hints`` gives)."""
    text = text.strip()
    if text.endswith("| None"):  # X | None: None stays None
        return _shape(text[:-len("| None")])
    for container in ("list", "dict"):
        if text.startswith(container + "[") and text.endswith("]"):
            inner = text[len(container) + 1:-1]
            if container == "dict":
                depth = 0
                for i, char in enumerate(inner):  # the comma between key and value
                    depth += (char == "[") - (char == "]")
                    if char == "," and depth == 0:
                        inner = inner[i + 1:]
                        break
            return container, _shape(inner)
    cls = globals().get(text)
    return cls if isinstance(cls, type) and issubclass(cls, Declared) else None


def _made(shape, value):
    """``value`` with the settings objects :func:`_shape` says it holds rebuilt, and the
    lists and mappings it names copied."""
    if value is None or shape is None:
        return value
    if isinstance(shape, tuple):
        kind, item = shape
        if kind == "list":
            return list(value) if item is None else [_made(item, v) for v in value]
        return dict(value) if item is None else {k: _made(item, v) for k, v in value.items()}
    return _build(shape, value)


def _read_yaml(path: Path) -> dict:
    import yaml

    from vaultkit.core.bounded import LimitError, load_yaml, read_text

    try:
        data = load_yaml(read_text(path))
    except FileNotFoundError:
        raise ConfigError(f"{path}: rule pack not found") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read rule pack: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: cannot read rule pack: {exc}") from None
    except LimitError as exc:
        raise ConfigError(f"{path}: rule pack not read: {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        raise ConfigError(f"{path}: not valid YAML{where}: "
                          f"{getattr(exc, 'problem', None) or exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a rule pack must be a mapping")
    return data


def find_profile(name: str, base: Path | None) -> Path:
    """A bundled pack by name, or a path relative to the vault root."""
    from vaultkit.core.resources import rules_dir

    if name.endswith((".yaml", ".yml")) or "/" in name:
        path = Path(name)
        if not path.is_absolute() and base is not None:
            path = base / path
        return path
    path = rules_dir() / f"{name}.yaml"
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in rules_dir().glob("*.yaml")))
        raise ConfigError(f"unknown profile '{name}' (bundled: {known})")
    return path


def load_profile(path: Path) -> Profile:
    data = _read_yaml(path)
    if "runtimes" not in data:
        # a pack written before runtimes were data (or a copy of one) gets the bundled
        # pack's; `runtimes: {}` says none
        from vaultkit.core.resources import rules_dir

        bundled = rules_dir() / "openclaw.yaml"
        if bundled.is_file() and bundled.resolve() != Path(path).resolve():
            data["runtimes"] = _read_yaml(bundled).get("runtimes", {})
    return _validate(Profile, data, str(path))


def _read_config(path: Path) -> dict:
    import tomllib

    from vaultkit.core.bounded import LimitError, load_toml, read_regular

    try:
        data = load_toml(read_regular(path, MAX_CONFIG_BYTES).decode("utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except LimitError as exc:
        raise ConfigError(f"{path}: not read: {exc}") from None
    out = {}
    for key, value in data.items():
        if key in _KEBAB:
            key = _KEBAB[key]
        elif "_" in key and key.replace("_", "-") in _KEBAB:
            raise ConfigError(f"{path.name}: unknown key '{key}' (did you mean "
                              f"'{key.replace('_', '-')}'?)")
        out[key] = value
    # the same spelling inside [[layers]] and [types.NAME] (entry-level, optional-sections)
    for layer in out.get("layers", []) if isinstance(out.get("layers"), list) else []:
        if isinstance(layer, dict):
            _snake_keys(layer)
    types = out.get("types")
    if isinstance(types, dict):
        for spec in types.values():
            if isinstance(spec, dict):
                _snake_keys(spec)
    return out


def _snake_keys(table: dict) -> None:
    for key in [k for k in table if isinstance(k, str) and "-" in k]:
        table[key.replace("-", "_")] = table.pop(key)


def load_config(path: Path) -> ConfigFile:
    return _validate(ConfigFile, _read_config(path), path.name)


def load_settings(root: Path, profile_override: str | None = None, *,
                  use_cache: bool = True) -> Settings:
    settings = _load_settings(root, profile_override, use_cache=use_cache)
    spec = settings.config.required_version
    if spec:
        problem = check_required_version(spec)
        if problem:
            raise ConfigError(problem)
    return settings


def _load_settings(root: Path, profile_override: str | None = None, *,
                   use_cache: bool = True) -> Settings:
    """Read ``vaultkit.toml`` (if any) at ``root`` and the profile it names.

    The validated result is cached under ``.vaultkit/`` keyed by vaultkit's version and
    the bytes of both files, so an unchanged configuration is not validated again.
    """
    config_path = root / CONFIG_NAME
    digest = sha1(__version__.encode())
    config_bytes = None
    if os.path.lexists(config_path):
        from vaultkit.core.bounded import read_regular

        try:  # (a FIFO or a device here would hang every command, not be "no config")
            config_bytes = read_regular(config_path, MAX_CONFIG_BYTES)
        except FileNotFoundError:
            pass  # a broken symlink: no config, as before
        except OSError as exc:
            raise ConfigError(f"{config_path}: cannot read: {exc.strerror or exc}") from None
        digest.update(config_bytes)
    # the pack a config names can only be known by reading the config: read it cheaply
    name = profile_override or _profile_name(config_path, config_bytes)
    try:
        profile_path = find_profile(name, root)
    except ConfigError as exc:
        if profile_override is not None:
            raise
        raise ConfigError(f"{CONFIG_NAME}: profile: {exc}") from None  # (where to fix it)
    if profile_override is None and (name.endswith((".yaml", ".yml")) or "/" in name):
        real, base = profile_path.resolve(), root.resolve()
        if real != base and base not in real.parents:
            raise ConfigError(f"{CONFIG_NAME}: profile: {name!r} leaves the vault; "
                              "keep the rule pack inside it (or pass --profile)")
    from vaultkit.core.bounded import read_regular

    try:
        digest.update(read_regular(profile_path, MAX_CONFIG_BYTES))
    except OSError as exc:
        raise ConfigError(f"{profile_path}: cannot read rule pack: {exc.strerror}") from None
    # the pack is known by its bytes, never by where it lies: two installs of one version
    # (pre-commit's environment, a pip install) share the cache. A pack without runtimes
    # takes the bundled openclaw pack's (load_profile), so those bytes count too.
    from vaultkit.core.resources import rules_dir

    bundled = rules_dir() / "openclaw.yaml"
    if profile_path != bundled:
        try:
            digest.update(b"\0runtimes\0" + read_regular(bundled, MAX_CONFIG_BYTES))
        except OSError:
            digest.update(b"\0no-runtimes\0")
    fingerprint = digest.hexdigest()[:16]
    # (a process that loads them again and again, the MCP server and the watcher's answering
    # process, builds them once per content: the same bytes give the same settings)
    known = (fingerprint, str(root), config_bytes is not None)
    built = _BUILT.get(known) if use_cache else None
    if built is not None:
        return built
    settings = _settings(root, fingerprint, config_path, config_bytes, profile_path, use_cache)
    if use_cache:
        _BUILT[known] = settings
        for old in list(_BUILT)[:-4]:  # (a server's threads may be here at once)
            _BUILT.pop(old, None)
    return settings


# the settings this process built, by (fingerprint, vault, has a config): see
# _load_settings
_BUILT: dict[tuple, Settings] = {}


def _settings(root: Path, fingerprint: str, config_path: Path, config_bytes: bytes | None,
              profile_path: Path, use_cache: bool) -> Settings:
    store = None
    if use_cache:
        from vaultkit.vault.store import Store

        # (its own short-lived connection: the vault's store is opened once the settings,
        # whose fingerprint keys the parse cache, are known)
        store = Store(root)
        try:
            fp, version, python, profile_data, config_data = store.get(SETTINGS_ENTRY)
            if version == __version__ and fp == fingerprint and python == sys.version \
                    and _zone_known(config_data.get("timezone")):
                return Settings(_build(Profile, profile_data), _build(ConfigFile, config_data),
                                fingerprint, config_path if config_bytes is not None else None)
        except (EOFError, ValueError, TypeError, KeyError, AttributeError):  # (none: TypeError)
            pass
        finally:
            store.close()
    if config_bytes is not None:
        config = load_config(config_path)
        profile = _apply(load_profile(profile_path), config, config_path.name)
    else:
        config, config_path = ConfigFile(), None
        profile = _validated_pack(profile_path)
        if profile is None:
            profile = _apply(load_profile(profile_path), config, CONFIG_NAME)
    if store is not None:
        _save_settings(store, fingerprint, profile, config)
    return Settings(profile, config, fingerprint, config_path)


def _profile_name(config_path: Path, config_bytes: bytes | None) -> str:
    """The pack the config names; a ``required-version`` it fails is reported first, before
    anything else in a config written for another vaultkit can fail."""
    if config_bytes is None:
        return detect_profile(config_path.parent)
    raw = _read_config(config_path)
    spec = raw.get("required_version")
    if isinstance(spec, str):
        problem = check_required_version(spec)
        if problem:
            raise ConfigError(problem)
    value = raw.get("profile")
    if value is None:
        return detect_profile(config_path.parent, raw.get("memory_dir") is not None)
    if not isinstance(value, str):
        raise ConfigError(f"{CONFIG_NAME}: profile: must be a pack name or a path")
    return value


def detect_profile(root: Path, memory_dir_set: bool = False) -> str:
    """The bundled pack for what the folder is: ``openclaw`` for an agent workspace (a
    bootstrap file such as AGENTS.md or MEMORY.md, a ``memory/`` folder, a ``memory-dir``
    in vaultkit.toml, or a ``memory/`` repo whose parent holds the bootstrap files),
    ``obsidian`` for any other folder of notes (a plain Obsidian vault)."""
    from vaultkit.vault.scan import is_workspace

    return "openclaw" if memory_dir_set or is_workspace(root) else "obsidian"


# The bundled packs as validated, shipped beside them: a vault without vaultkit.toml takes
# its pack from here without importing pydantic or building its schema (~0.13 s of every
# check that has no settings cache to read, `--no-cache` among them). An entry is keyed by
# the pack's bytes, the bundled runtimes' (load_profile adds them) and this module's source:
# an edited pack or schema is validated again, never answered from an entry made before.
# write_validated_packs() writes the file; tests/test_validated_packs.py checks it is current.
VALIDATED_PACKS = "validated.json"


def _validated_key(pack: bytes) -> str:
    from vaultkit.core.resources import rules_dir

    digest = sha1(Path(__file__).read_bytes())
    digest.update(b"\0pack\0" + pack)
    digest.update(b"\0runtimes\0" + (rules_dir() / "openclaw.yaml").read_bytes())
    return digest.hexdigest()


def _validated_pack(path: Path) -> Profile | None:
    """The bundled pack at ``path`` as validated (with no vaultkit.toml to apply), from
    :data:`VALIDATED_PACKS` when its entry is current, else None (validate it)."""
    import json

    from vaultkit.core.resources import rules_dir

    base = rules_dir()
    if path.parent != base:
        return None
    try:
        shipped = json.loads((base / VALIDATED_PACKS).read_bytes())
        data = shipped.get(path.name, {}).get(_validated_key(path.read_bytes()))
    except (OSError, ValueError, AttributeError):
        return None
    if not isinstance(data, dict):
        return None
    profile = _build(Profile, data)
    # (the entry was validated by whichever Python wrote the file: its checks run again
    # here, under this one; one failing is validated afresh, which reports it)
    try:
        _check_again(profile)
    except ValueError:
        return None
    return profile


def _check_again(obj) -> None:
    """Run the ``__post_init__`` checks of ``obj`` and the settings objects in it, which
    :func:`_build` does not run; a failing one raises ValueError as in validation."""
    for value in vars(obj).values():
        for item in (value.values() if isinstance(value, dict)
                     else value if isinstance(value, list) else (value,)):
            if isinstance(item, Declared):
                _check_again(item)
    post = getattr(type(obj), "__post_init__", None)
    if post is not None:
        post(obj)


def write_validated_packs() -> Path:
    """Write :data:`VALIDATED_PACKS` anew: every bundled pack validated as a vault without
    vaultkit.toml gets it. Run after changing a pack or this module."""
    import json

    from vaultkit.core.atomic import write_atomic
    from vaultkit.core.resources import rules_dir

    base = rules_dir()
    out = {}
    for path in sorted(base.glob("*.yaml")):
        profile = _apply(load_profile(path), ConfigFile(), CONFIG_NAME)
        out[path.name] = {_validated_key(path.read_bytes()): asdict(profile)}
    target = base / VALIDATED_PACKS
    write_atomic(target, (json.dumps(out, indent=1) + "\n").encode())
    return target


# the settings' entry in the vault's store: the last settings built, under their fingerprint
SETTINGS_ENTRY = "settings"


def _zone_known(name) -> bool:
    """Whether the stored settings' ``timezone`` (None: none set) still names a zone: the
    one check of theirs that reads the system (its time-zone data), not their bytes."""
    if not name:
        return True
    try:
        _check_timezone(name)
    except ValueError:
        return False  # (validated afresh, which reports it)
    return True


def _save_settings(store, fingerprint: str, profile: Profile, config: ConfigFile) -> None:
    import marshal

    # (keyed by the interpreter too: the settings were validated once, and a stored entry
    # is rebuilt without its checks, among them whether its regexes compile in this Python)
    try:
        data = marshal.dumps((fingerprint, __version__, sys.version, asdict(profile),
                              asdict(config)))
    except ValueError:  # a value marshal cannot store: validate again next time
        return
    store.put(SETTINGS_ENTRY, data)
    store.close()


# budgets that became a runtime's limits: [budgets] bootstrap-max-chars still sets them
_MOVED_BUDGETS = {"bootstrap_max_chars": ("openclaw", "per_file_max"),
                  "bootstrap_total_max_chars": ("openclaw", "total_max")}


def _apply(profile: Profile, config: ConfigFile, source: str) -> Profile:
    data = asdict(profile)
    if config.memory_dir is not None:
        data["memory_dir"] = config.memory_dir
    if config.strict_placement is not None:
        data["strict_placement"] = config.strict_placement
    for key, aliases in config.property_aliases.items():
        data["property_aliases"][key] = list(aliases)
    budget_names = list(fields(Budgets))
    for key, value in config.budgets.items():
        name = key.replace("-", "_")
        # the names before these guidelines were counted as the runtime counts
        name = {"bootstrap_total_bytes": "bootstrap_guideline_chars",
                "session_footprint_bytes": "session_guideline_chars"}.get(name, name)
        moved = _MOVED_BUDGETS.get(name)
        if moved and moved[0] in data["runtimes"]:  # now the OpenClaw runtime's limits
            data["runtimes"][moved[0]][moved[1]] = value
            continue
        if name not in budget_names:
            raise ConfigError(f"{source}: budgets: unknown budget '{key}' "
                              f"(known: {', '.join(f.replace('_', '-') for f in budget_names)})")
        data["budgets"][name] = value
    phrase_names = list(fields(Phrases))
    for key, values in config.phrases.items():
        name = key.replace("-", "_")
        if name not in phrase_names:
            raise ConfigError(f"{source}: phrases: unknown list '{key}' "
                              f"(known: {', '.join(phrase_names)})")
        data["phrases"][name] = list(data["phrases"][name]) + list(values)
    extra_names = {layer.name for layer in config.layers}
    data["layers"] = [asdict(layer) for layer in config.layers] + [
        layer for layer in data["layers"] if layer["name"] not in extra_names]
    for name, spec in config.types.items():
        data["types"][name] = asdict(spec)
    data["colors"].update(config.colors)
    for key, value in config.git.items():
        data["git"][key.replace("-", "_")] = value
    for key, value in config.index.items():
        data["index"][key.replace("-", "_")] = value
    for key, value in config.links.items():
        name = key.replace("-", "_")
        if name == "exclude" and isinstance(value, list):
            value = list(data["links"]["exclude"]) + value
        elif name not in ("forward_links",):
            raise ConfigError(f"{source}: links: unknown key '{key}' (known: forward-links, "
                              "exclude)")
        data["links"][name] = value
    if config.runtimes is not None:
        data["runtimes_enabled"] = list(config.runtimes)
    for name, table in config.runtime.items():
        if name not in data["runtimes"]:
            raise ConfigError(f"{source}: runtime: unknown runtime '{name}' (known: "
                              f"{', '.join(data['runtimes']) or 'none'})")
        if not isinstance(table, dict):
            raise ConfigError(f"{source}: runtime.{name}: must be a table of keys")
        for key, value in table.items():
            data["runtimes"][name][str(key).replace("-", "_")] = value
    return _validate(Profile, data, source)

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
import hashlib
import re
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from vaultkit import __version__

CONFIG_NAME = "vaultkit.toml"
Severity = Literal["error", "warning"]


class ConfigError(Exception):
    """A profile or config file that cannot be used. The message is one line."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


def _in_vault(value: str) -> str:
    """A vault-relative path or pattern: nothing absolute, no '..' (config stays in the vault)."""
    if value.startswith(("/", "~")) or "\\" in value or re.match(r"^[A-Za-z]:", value) \
            or ".." in value.split("/"):
        raise ValueError(f"path {value!r} leaves the vault; give a path relative to the vault "
                         "root without '..'")
    return value


class PropertySpec(_Strict):
    type: Literal["string", "date", "list", "number", "boolean", "any"] = "any"
    items: Literal["string", "date", "number", "any"] = "any"
    required: bool = False
    enum: list[str] | None = None


class TypeSpec(_Strict):
    folder: str
    properties: dict[str, PropertySpec] = {}
    sections: list[str] = []  # required `## ` sections
    optional_sections: list[str] = []
    entry_level: int | None = None  # heading level of entries (lessons: 2)

    @field_validator("folder")
    @classmethod
    def _folder_in_vault(cls, value: str) -> str:
        return _in_vault(value)


class LayerSpec(_Strict):
    name: str
    description: str = ""
    paths: list[str]
    entry_level: int | None = None

    @field_validator("paths")
    @classmethod
    def _paths_in_vault(cls, value: list[str]) -> list[str]:
        return [_in_vault(p) for p in value]


class Budgets(_Strict):
    memory_md_bytes: int = Field(10240, ge=0)
    bootstrap_total_bytes: int = Field(20480, ge=0)
    bootstrap_max_chars: int = Field(20000, ge=0)
    bootstrap_total_max_chars: int = Field(60000, ge=0)
    session_footprint_bytes: int = Field(15360, ge=0)
    index_bytes: int = Field(8192, ge=0)
    entry_min_lines: int = Field(3, ge=0)
    entry_max_lines: int = Field(15, ge=1)
    max_file_bytes: int = Field(10 * 1024 * 1024, ge=1)


class Phrases(_Strict):
    lesson: list[str] = []
    filler: list[str] = []
    decision: list[str] = []
    preference: list[str] = []
    stale: list[str] = []  # time-bound wording in MEMORY.md entries (`distill`)

    @field_validator("*")
    @classmethod
    def _compiles(cls, value: list[str]) -> list[str]:
        for phrase in value:
            if phrase.startswith("re:"):
                try:
                    re.compile(phrase[3:])
                except re.error as exc:
                    raise ValueError(f"regex {phrase[3:]!r} does not compile: {exc}") from None
        return value


class IndexSettings(_Strict):
    path: str = "{memory}/INDEX.md"
    order: list[str] = ["decision", "lesson", "person", "project", "preference", "knowledge"]
    recent_days: int = Field(7, ge=0)
    most_linked: int = Field(10, ge=0)

    @field_validator("path")
    @classmethod
    def _path_in_vault(cls, value: str) -> str:
        return _in_vault(value)


class GitSettings(_Strict):
    mass_deletion_ratio: float = Field(0.5, gt=0, le=1)
    churn_days: int = Field(14, ge=1)
    backup_max_age_hours: float = Field(36, gt=0)
    # memory files rewritten or deleted by design; mass-deletion leaves them alone
    mass_deletion_exempt: list[str] = []


class Profile(_Strict):
    name: str
    description: str = ""
    memory_dir: str = "memory"
    bootstrap_files: list[str] = []
    layers: list[LayerSpec]
    common_properties: dict[str, PropertySpec] = {}
    types: dict[str, TypeSpec] = {}
    budgets: Budgets = Budgets()
    phrases: Phrases = Phrases()
    colors: dict[str, str] = {}
    index: IndexSettings = IndexSettings()
    git: GitSettings = GitSettings()

    @field_validator("colors")
    @classmethod
    def _hex(cls, value: dict[str, str]) -> dict[str, str]:
        for key, colour in value.items():
            if not re.fullmatch(r"#[0-9a-fA-F]{6}", colour):
                raise ValueError(f"colour for {key!r} must be '#rrggbb', got {colour!r}")
        return value

    @field_validator("memory_dir")
    @classmethod
    def _memory_in_vault(cls, value: str) -> str:
        return _in_vault(value)

    # -- derived ---------------------------------------------------------------

    def expand(self, pattern: str) -> str:
        """Put ``memory_dir`` into a pattern and normalise it."""
        mem = self.memory_dir.strip("/")
        out = pattern.replace("{memory}/", "" if mem in ("", ".") else mem + "/")
        return out.replace("{memory}", "" if mem in ("", ".") else mem)

    @cached_property
    def layer_matchers(self) -> list[tuple[LayerSpec, list[re.Pattern]]]:
        return [(layer, [compile_pattern(self.expand(p)) for p in layer.paths])
                for layer in self.layers]

    @cached_property
    def type_folders(self) -> dict[str, str]:
        """Vault-relative folder -> type name."""
        return {self.expand(spec.folder).strip("/"): name for name, spec in self.types.items()}

    @property
    def memory_prefix(self) -> str:
        mem = self.memory_dir.strip("/")
        return "" if mem in ("", ".") else mem + "/"

    def layer_of(self, path: str) -> str | None:
        for layer, patterns in self.layer_matchers:
            for pattern in patterns:
                if pattern.match(path) and _dates_real(pattern, path):
                    return layer.name
        return None

    def type_of(self, path: str) -> str | None:
        folder = path.rsplit("/", 1)[0] if "/" in path else ""
        return self.type_folders.get(folder)

    def layer(self, name: str) -> LayerSpec | None:
        for layer in self.layers:
            if layer.name == name:
                return layer
        return None


_DATE_RE = r"(?P<date{n}>\d{{4}}-\d{{2}}-\d{{2}})"


def compile_pattern(pattern: str) -> re.Pattern:
    """Compile a layer path pattern: ``*``, ``**``, ``?`` and ``{date}``; case-sensitive."""
    out = []
    i = 0
    dates = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append(r"(?:[^/]+/)*")
            i += 3
        elif pattern.startswith("**", i):
            out.append(r".*")
            i += 2
        elif pattern[i] == "*":
            out.append(r"[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append(r"[^/]")
            i += 1
        elif pattern.startswith("{date}", i):
            out.append(_DATE_RE.format(n=dates))
            dates += 1
            i += 6
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


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

class ConfigFile(_Strict):
    """The keys ``vaultkit.toml`` accepts (kebab-case, like ruff's)."""

    profile: str = "openclaw"
    memory_dir: str | None = Field(None, alias="memory-dir")
    select: list[str] | None = None
    ignore: list[str] = []
    extend_select: list[str] = Field([], alias="extend-select")
    per_file_ignores: dict[str, list[str]] = Field({}, alias="per-file-ignores")
    exclude: list[str] = []
    fail_on: Severity = Field("error", alias="fail-on")
    timezone: str | None = None
    severity: dict[str, Severity] = {}
    budgets: dict[str, int] = {}
    phrases: dict[str, list[str]] = {}
    layers: list[LayerSpec] = []
    types: dict[str, TypeSpec] = {}
    colors: dict[str, str] = {}
    git: dict[str, float] = {}
    index: dict[str, Any] = {}


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

    def is_excluded(self, rel: str) -> bool:
        for pattern in self.exclude_patterns:
            if pattern.match(rel) or any(pattern.match(rel[:i]) for i in _slash_positions(rel)):
                return True
        return False


def _slash_positions(rel: str):
    i = rel.find("/")
    while i >= 0:
        yield i
        i = rel.find("/", i + 1)


def _format_validation(source: str, exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "(top level)"
    if err["type"] == "extra_forbidden":
        return f"{source}: unknown key '{where}'"
    msg = err["msg"]
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, "):]
    return f"{source}: {where}: {msg}"


def _read_yaml(path: Path) -> dict:
    import yaml

    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader",
                                                                            yaml.SafeLoader))
    except FileNotFoundError:
        raise ConfigError(f"{path}: rule pack not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read rule pack: {exc}") from None
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
    from vaultkit.resources import rules_dir

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
    try:
        return Profile.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_format_validation(str(path), exc)) from None


def load_config(path: Path) -> ConfigFile:
    import tomllib

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    try:
        return ConfigFile.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_format_validation(path.name, exc)) from None


def load_settings(root: Path, profile_override: str | None = None) -> Settings:
    """Read ``vaultkit.toml`` (if any) at ``root`` and the profile it names."""
    config_path = root / CONFIG_NAME
    digest = hashlib.sha1(__version__.encode())
    if config_path.is_file():
        config = load_config(config_path)
        digest.update(config_path.read_bytes())
    else:
        config, config_path = ConfigFile(), None
    profile_path = find_profile(profile_override or config.profile, root)
    if profile_override is None and (config.profile.endswith((".yaml", ".yml"))
                                     or "/" in config.profile):  # a path in the config
        real, base = profile_path.resolve(), root.resolve()
        if real != base and base not in real.parents:
            raise ConfigError(f"{CONFIG_NAME}: profile: {config.profile!r} leaves the vault; "
                              "keep the rule pack inside it (or pass --profile)")
    try:
        digest.update(profile_path.read_bytes())
    except OSError as exc:
        raise ConfigError(f"{profile_path}: cannot read rule pack: {exc.strerror}") from None
    profile = load_profile(profile_path)
    profile = _apply(profile, config, config_path.name if config_path else CONFIG_NAME)
    return Settings(profile, config, digest.hexdigest()[:16], config_path)


def _apply(profile: Profile, config: ConfigFile, source: str) -> Profile:
    data = profile.model_dump()
    if config.memory_dir is not None:
        data["memory_dir"] = config.memory_dir
    for key, value in config.budgets.items():
        field = key.replace("-", "_")
        if field not in Budgets.model_fields:
            raise ConfigError(f"{source}: budgets: unknown budget '{key}' "
                              f"(known: {', '.join(f.replace('_', '-') for f in Budgets.model_fields)})")
        data["budgets"][field] = value
    for key, values in config.phrases.items():
        field = key.replace("-", "_")
        if field not in Phrases.model_fields:
            raise ConfigError(f"{source}: phrases: unknown list '{key}' "
                              f"(known: {', '.join(Phrases.model_fields)})")
        data["phrases"][field] = list(data["phrases"][field]) + list(values)
    extra_names = {layer.name for layer in config.layers}
    data["layers"] = [layer.model_dump() for layer in config.layers] + [
        layer for layer in data["layers"] if layer["name"] not in extra_names]
    for name, spec in config.types.items():
        data["types"][name] = spec.model_dump()
    data["colors"].update(config.colors)
    for key, value in config.git.items():
        data["git"][key.replace("-", "_")] = value
    for key, value in config.index.items():
        data["index"][key.replace("-", "_")] = value
    try:
        return Profile.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_format_validation(source, exc)) from None

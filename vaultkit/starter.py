"""The starter vault: copy ``vault-template/`` without touching what exists."""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass, field
from pathlib import Path

from vaultkit import __version__
from vaultkit.atomic import write_atomic
from vaultkit.errors import VaultkitError
from vaultkit.resources import template_dir

# Placeholders the template files may hold.
_TOKENS = ("{{vaultkit_version}}", "{{today}}")


@dataclass
class InitResult:
    created: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def render_template(data: bytes, today: dt.date) -> bytes:
    text = data.decode("utf-8")
    text = text.replace("{{vaultkit_version}}", __version__).replace("{{today}}", today.isoformat())
    return text.encode("utf-8")


def init_vault(target: Path, *, git: bool = False, today: dt.date | None = None) -> InitResult:
    today = today or dt.date.today()
    if target.exists() and not target.is_dir():
        raise VaultkitError(f"{target}: exists and is not a folder")
    target.mkdir(parents=True, exist_ok=True)
    source = template_dir()
    result = InitResult()
    for folder, dirs, files in os.walk(source):
        dirs.sort()
        rel_folder = Path(folder).relative_to(source)
        for name in sorted(files):
            rel = rel_folder / name
            out_rel = Path(str(rel).replace("TODAY", today.isoformat()))
            dest = target / out_rel
            if dest.exists() or dest.is_symlink():
                result.skipped.append(out_rel.as_posix())
                continue
            dest.parent.mkdir(parents=True, exist_ok=True)
            data = (Path(folder) / name).read_bytes()
            if name.endswith((".md", ".json", ".yaml", ".toml")) or name.startswith("."):
                data = render_template(data, today)
            write_atomic(dest, data)
            result.created.append(out_rel.as_posix())
    return result

"""The audit check ``unclosed-work``: the unclosed-work list has nothing stale."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

from vaultkit.audit.context import FAIL, PASS, WARN, AuditContext, Check

STALE_DAYS = 7  # unclosed work older than this is listed


UNCLOSED_NAMES = ("unclosed_work.yaml", "unclosed_work.yml")


_LIST_KEYS = ("items", "unclosed", "unclosed_work", "open", "tasks", "work")


_DATE_KEYS = ("since", "date", "opened", "created", "started", "updated")


_TITLE_KEYS = ("title", "task", "item", "what", "name", "summary", "description")


_CLOSED = {"done", "closed", "resolved", "cancelled", "canceled", "complete", "completed"}


_LEADING_DATE = re.compile(r"^\s*(\d{4}-\d{2}-\d{2})\b")


def _as_date(value) -> dt.date | None:
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str):
        m = _LEADING_DATE.match(value)
        if m:
            try:
                return dt.date.fromisoformat(m.group(1))
            except ValueError:
                return None
    return None


def unclosed_items(data) -> list[tuple[str, dt.date | None]] | None:
    """``(title, date)`` for each open item, or None when the shape is not understood.

    Accepted shapes:

    * a list; each item a string (``"2026-02-10 finish the cron fix"``, a leading date is the
      item's date) or a mapping with a title (``title``/``task``/``item``/``what``/``name``/
      ``summary``/``description``) and a date (``since``/``date``/``opened``/``created``/
      ``started``/``updated``);
    * a mapping with such a list under ``items``, ``unclosed``, ``unclosed_work``, ``open``,
      ``tasks`` or ``work``;
    * a mapping of title -> date, or title -> mapping with a date key.

    Items whose ``status`` is done/closed/resolved/cancelled are not open and are left out.
    An empty file is no items.
    """
    if data is None:
        return []
    if isinstance(data, dict):
        for key in _LIST_KEYS:
            if isinstance(data.get(key), list):
                return unclosed_items(data[key])
            if key in data and data[key] is None and len(data) == 1:
                return []
        out = []
        for key, value in data.items():
            if isinstance(value, dict):
                if str(value.get("status", "")).strip().lower() in _CLOSED:
                    continue
                date = next((_as_date(value[k]) for k in _DATE_KEYS if k in value), None)
                out.append((str(key), date))
            else:
                out.append((str(key), _as_date(value)))
        return out
    if isinstance(data, list):
        out = []
        for item in data:
            if isinstance(item, str):
                out.append((_LEADING_DATE.sub("", item).strip() or item, _as_date(item)))
            elif isinstance(item, dict):
                if str(item.get("status", "")).strip().lower() in _CLOSED:
                    continue
                title = next((str(item[k]) for k in _TITLE_KEYS if k in item), None)
                date = next((_as_date(item[k]) for k in _DATE_KEYS if k in item), None)
                if title is None:
                    title = ", ".join(f"{k}: {v}" for k, v in item.items()
                                      if k not in _DATE_KEYS)[:80] or "(untitled)"
                out.append((title, date))
            elif isinstance(item, (dt.date, int, float)):
                out.append((str(item), _as_date(item)))
            else:
                return None
        return out
    return None


def find_unclosed(vault) -> Path | None:
    places = [vault.workspace, vault.root]
    if vault.profile.memory_prefix:
        places.append(vault.root / vault.profile.memory_prefix.rstrip("/"))
    for folder in dict.fromkeys(places):
        for name in UNCLOSED_NAMES:
            if (folder / name).is_file():
                return folder / name
    return None


def check_unclosed(ctx: AuditContext) -> Check:
    import yaml

    from vaultkit.core.bounded import LimitError, load_yaml, read_text

    path = find_unclosed(ctx.vault)
    if path is None:
        return Check("unclosed-work", PASS, "no unclosed_work.yaml (optional)")
    try:
        data = load_yaml(read_text(path))
    except LimitError as exc:
        return Check("unclosed-work", FAIL, f"{path} is not read: {exc}",
                     "write it as a plain list: `- {task: \"...\", since: YYYY-MM-DD}`")
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        return Check("unclosed-work", FAIL, f"{path} is not valid YAML{where}: "
                                            f"{getattr(exc, 'problem', None) or exc}",
                     f"fix the YAML in {path}" + (f" at line {mark.line + 1}" if mark else ""))
    except (OSError, UnicodeDecodeError) as exc:
        why = getattr(exc, "strerror", None) or exc
        return Check("unclosed-work", FAIL, f"{path} cannot be read: {why}",
                     f"rewrite {path} as UTF-8 text")
    items = unclosed_items(data)
    if items is None:
        return Check("unclosed-work", FAIL,
                     f"{path} is a {type(data).__name__}, not a list of items or a mapping",
                     "write it as a list: `- {task: \"...\", since: YYYY-MM-DD}`")
    old = [(t, d) for t, d in items if d is not None and (ctx.today - d).days > STALE_DAYS]
    undated = sum(1 for _, d in items if d is None)
    extra = f"; {undated} without a date" if undated else ""
    if old:
        old.sort(key=lambda td: td[1])
        listed = "; ".join(f"{t} (since {d}, {(ctx.today - d).days} days)" for t, d in old[:10])
        more = f"; +{len(old) - 10} more" if len(old) > 10 else ""
        return Check("unclosed-work", WARN,
                     f"{len(old)} of {len(items)} open item{'s' * (len(items) != 1)} in "
                     f"{path.name} older than {STALE_DAYS} days: {listed}{more}{extra}",
                     f"close them (remove from {path.name} and log the outcome in today's "
                     "journal) or split them into smaller items",
                     [{"item": t, "since": d.isoformat(), "days": (ctx.today - d).days}
                      for t, d in old])
    return Check("unclosed-work", PASS,
                 f"{path.name}: {len(items)} open item{'s' * (len(items) != 1)}, none older "
                 f"than {STALE_DAYS} days{extra}")

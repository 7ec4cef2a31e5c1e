"""The survival checklist: is this vault and its OpenClaw setup safe against memory loss?

Each check returns a :class:`Check` with an id, a status (``pass``, ``warn`` or ``fail``),
what it found, and a one-line hint saying how to fix it. :func:`run_audit` runs them all in
the order of :data:`CHECK_IDS`; :func:`render_text` and :func:`render_json` print them.

Token estimates (``bootstrap-footprint``): one token per CJK character (Han, kana, Hangul,
full-width forms) plus one token per 4 bytes of everything else (UTF-8). It is a rough,
tokenizer-free figure, in line with what OpenAI- and Anthropic-style tokenizers give for
English prose (about 4 characters a token) and Chinese (about one character a token).
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

PASS, WARN, FAIL = "pass", "warn", "fail"
_RANK = {PASS: 0, WARN: 1, FAIL: 2}

CHECK_IDS = ("memory-md", "memory-dir", "memory-flush", "reserve-floor", "agents-protocol",
             "heartbeat-distillation", "bootstrap-footprint", "bootstrap-truncation",
             "bootstrap-leftover", "index", "git-backup", "pre-commit", "obsidian", "unclosed-work",
             "baseline", "history", "secrets")

MIN_RESERVE_FLOOR = 40000  # the seeds' survival checklist: reserveTokensFloor >= 40000
STALE_DAYS = 7  # unclosed work older than this is listed
HOOK_IDS = ("vaultkit-check", "vaultkit-index", "vaultkit-colors", "vaultkit-append-only",
            "vaultkit-audit")
UNCLOSED_NAMES = ("unclosed_work.yaml", "unclosed_work.yml")


@dataclass
class Check:
    id: str
    status: str
    found: str
    hint: str = ""
    details: list[dict] = field(default_factory=list)

    def to_dict(self) -> dict:
        out = {"id": self.id, "status": self.status, "found": self.found, "hint": self.hint}
        if self.details:
            out["details"] = self.details
        return out


# -- token estimate ---------------------------------------------------------------------

_CJK = re.compile("[\u1100-\u11ff\u2e80-\u2fdf\u3000-\u303f\u3040-\u30ff\u3100-\u31ff"
                  "\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef"
                  "\U00020000-\U0003134f]")


def estimate_tokens(text: str) -> int:
    """One token per CJK character plus one per 4 bytes (UTF-8) of the rest."""
    cjk = _CJK.findall(text)
    rest = len(text.encode("utf-8")) - sum(len(c.encode("utf-8")) for c in cjk)
    return len(cjk) + math.ceil(rest / 4)


# -- the run's shared state -------------------------------------------------------------

class AuditContext:
    """Everything the checks read: the vault, the OpenClaw config, git, the clock."""

    def __init__(self, vault, *, openclaw_config: str | Path | None = None,
                 agent: str | None = None, backup_max_age_hours: float | None = None,
                 now: dt.datetime | None = None):
        from vaultkit.vault import openclaw

        self.vault = vault
        self.profile = vault.profile
        self.agent = agent
        self.now = now or dt.datetime.now().astimezone()
        self.today = self.now.date()
        self.backup_max_age_hours = (backup_max_age_hours if backup_max_age_hours is not None
                                     else self.profile.git.backup_max_age_hours)
        self.explicit_config = openclaw_config
        self.config_path, self.config_source = openclaw.find_config_with_source(
            vault, openclaw_config)
        self.config_data: dict | None = None
        self.config_error: tuple[str, int | None, int | None] | None = None
        if self.config_path is not None:
            self.config_data, self.config_error = openclaw.load_openclaw(self.config_path)
        self._git_top: Any = None
        self._git_top_done = False

    # -- bootstrap files ----------------------------------------------------------------

    def bootstrap(self) -> dict:
        """Bootstrap file name -> Note, in injection order."""
        return {n.path.rsplit("/", 1)[-1]: n for n in self.vault.bootstrap()}

    def where_bootstrap(self) -> str:
        """Where the bootstrap files are expected, for messages."""
        return "the vault root" if self.profile.memory_prefix else \
            f"the workspace ({self.vault.workspace})"

    # -- openclaw.json ------------------------------------------------------------------

    def config_problem(self) -> Check | None:
        """A failed check when the config is unusable (does not parse, cannot be read)."""
        if self.config_error is None:
            return None
        message, line, col = self.config_error
        if line:
            at = f"line {line}" + (f", column {col}" if col else "")
            where = f"{self.config_path}:{line}" + (f":{col}" if col else "")
            return Check("", FAIL, f"{self.config_path} does not parse ({at}): {message}",
                         f"fix {where} (JSON5: comments, trailing commas and unquoted keys are "
                         "fine; strings need quotes)")
        if not self.config_path.exists():
            return Check("", FAIL, f"{self.config_path} (from {self.config_source}) does not exist",
                         f"create {self.config_path} or point {self.config_source} at the real "
                         "openclaw.json")
        return Check("", FAIL, f"{self.config_path} cannot be used: {message}",
                     f"rewrite {self.config_path} as a UTF-8 JSON5 object")

    def config_target(self) -> str:
        """Which file a hint should tell the user to edit."""
        if self.config_path is not None:
            return str(self.config_path)
        return "~/.openclaw/openclaw.json (or openclaw.json beside the workspace)"

    def setting(self, dotted: str):
        from vaultkit.vault.openclaw import setting

        return setting(self.config_data, dotted, self.agent)

    # -- git ------------------------------------------------------------------------------

    def git(self, *args: str) -> subprocess.CompletedProcess | None:
        """Run git in the vault root; None when git is not installed."""
        from vaultkit.core.gitenv import run_git

        try:  # (rev-parse --git-path hooks/...: where the hook really is; it runs nothing)
            return run_git(["-C", str(self.vault.root), *args], text=True, timeout=30,
                           keep_repo_env=False, env={"LC_ALL": "C"},
                           hooks_path_visible=args[:2] == ("rev-parse", "--git-path"))
        except (FileNotFoundError, PermissionError):
            return None
        except subprocess.TimeoutExpired:
            return subprocess.CompletedProcess(args, 124, "", "git timed out")

    def git_top(self) -> Path | None | bool:
        """The repository's top folder; None when not a repo; False when git is missing."""
        if not self._git_top_done:
            self._git_top_done = True
            proc = self.git("rev-parse", "--show-toplevel")
            if proc is None:
                self._git_top = False
            elif proc.returncode != 0 or not proc.stdout.strip():
                self._git_top = None
            else:
                self._git_top = Path(proc.stdout.strip())
        return self._git_top


# -- the checks ----------------------------------------------------------------------------

def _kb(n: int) -> str:
    return f"{n:,} bytes ({n / 1024:.1f} KB)"


def check_memory_md(ctx: AuditContext) -> Check:
    limit = ctx.profile.budgets.memory_md_bytes
    note = ctx.bootstrap().get("MEMORY.md")
    if note is None:
        return Check("memory-md", FAIL, f"no MEMORY.md in {ctx.where_bootstrap()}",
                     "create MEMORY.md with `## bootstrap_system_principles` and "
                     "`## approved_durable_entries` sections (`vaultkit init` writes a starter one)")
    if note.size > limit:
        return Check("memory-md", FAIL,
                     f"{note.path} is {_kb(note.size)}, over the {limit:,}-byte budget: the "
                     "agent pays for every byte in every session, and past the runtime's "
                     "limit its middle is cut",
                     f"move entries not needed every session from {note.path} to "
                     "memory/semantic/ or memory/lessons/ until it is under "
                     f"{limit / 1024:.0f} KB")
    return Check("memory-md", PASS, f"{note.path} is {_kb(note.size)}, budget {limit:,}")


def check_memory_dir(ctx: AuditContext) -> Check:
    prefix = ctx.profile.memory_prefix
    if not prefix:
        return Check("memory-dir", PASS, f"the vault is the memory folder itself ({ctx.vault.root})")
    folder = ctx.vault.root / prefix.rstrip("/")
    if folder.is_dir():
        journals = sum(1 for p in ctx.vault.notes if ctx.vault.layers.get(p) == "journal")
        return Check("memory-dir", PASS, f"{prefix} exists ({journals} daily journal"
                                          f"{'s' * (journals != 1)})")
    root = ctx.vault.root
    journals_here = any(re.fullmatch(r"\d{4}-\d{2}-\d{2}\.md", p) for p in ctx.vault.notes)
    bootstrap_above = any((root.parent / name).is_file() for name in ("MEMORY.md", "AGENTS.md"))
    if journals_here and bootstrap_above:
        return Check("memory-dir", FAIL,
                     f"no {prefix} folder, but this looks like a repo that is only memory/ "
                     "(journals here, bootstrap files in the folder above)",
                     f"add `memory-dir = \".\"` to {root / 'vaultkit.toml'} so the audit reads "
                     "the bootstrap files from the folder above")
    if folder.exists():
        return Check("memory-dir", FAIL, f"{prefix.rstrip('/')} exists but is not a folder",
                     f"rename the file {prefix.rstrip('/')} and create the folder "
                     f"(mkdir {prefix.rstrip('/')})")
    return Check("memory-dir", FAIL, f"no {prefix} folder in {root}",
                 f"mkdir {root / prefix.rstrip('/')} (or run `vaultkit init {root}` to add the "
                 "whole layout without touching existing files)")


def check_memory_flush(ctx: AuditContext) -> Check:
    problem = ctx.config_problem()
    if problem:
        problem.id = "memory-flush"
        return problem
    key = "compaction.memoryFlush.enabled"
    value, where = ctx.setting(key)
    target = ctx.config_target()
    if ctx.config_path is None:
        return Check("memory-flush", WARN,
                     "no openclaw.json found, so memoryFlush.enabled is only the runtime default "
                     "(true), not set",
                     f"create {target} with agents.defaults.compaction.memoryFlush.enabled: true "
                     "(`vaultkit init` prints the snippet)")
    if where is None:
        return Check("memory-flush", WARN,
                     f"memoryFlush.enabled is only the runtime default (true), not set in "
                     f"{ctx.config_path}",
                     f"set agents.defaults.compaction.memoryFlush.enabled: true in {target}, so "
                     "a runtime upgrade or a copied config cannot turn it off unseen")
    if value is True:
        return Check("memory-flush", PASS, f"{where} is true ({ctx.config_path})")
    return Check("memory-flush", FAIL,
                 f"{where} is {json.dumps(value)} ({ctx.config_path}): nothing is written to "
                 "memory before compaction wipes the context",
                 f"set {where} to true in {target}")


def check_reserve_floor(ctx: AuditContext) -> Check:
    problem = ctx.config_problem()
    if problem:
        problem.id = "reserve-floor"
        return problem
    value, where = ctx.setting("compaction.reserveTokensFloor")
    target = ctx.config_target()
    key = where or "agents.defaults.compaction.reserveTokensFloor"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return Check("reserve-floor", FAIL,
                     f"{where} is {json.dumps(value)}, not a number ({ctx.config_path})",
                     f"set {key} to {MIN_RESERVE_FLOOR} in {target}")
    if where is None:
        source = ("no openclaw.json found" if ctx.config_path is None
                  else f"not set in {ctx.config_path}")
        return Check("reserve-floor", FAIL,
                     f"reserveTokensFloor is only the runtime default {value:,} ({source}); "
                     f"the checklist needs at least {MIN_RESERVE_FLOOR:,} so the memory flush "
                     "has room to run before compaction",
                     f"set {key} to {MIN_RESERVE_FLOOR} in {target}")
    if value < MIN_RESERVE_FLOOR:
        return Check("reserve-floor", FAIL,
                     f"{where} is {value:,}, below {MIN_RESERVE_FLOOR:,} ({ctx.config_path}): "
                     "compaction can start before the memory flush has room to write",
                     f"set {key} to {MIN_RESERVE_FLOOR} in {target}")
    return Check("reserve-floor", PASS, f"{where} is {value:,} (≥ {MIN_RESERVE_FLOOR:,})")


_PROTOCOL_HEADING = re.compile(r"memory\s+protocol|记忆(?:协议|规则)", re.I)


def check_agents_protocol(ctx: AuditContext) -> Check:
    note = ctx.bootstrap().get("AGENTS.md")
    hint = ("add a `## Memory Protocol` section to AGENTS.md: \"- ALWAYS run memory_search "
            "before acting on past context\" and \"- Do NOT guess from conversation history "
            "alone\"")
    if note is None:
        return Check("agents-protocol", FAIL, f"no AGENTS.md in {ctx.where_bootstrap()}",
                     "create AGENTS.md with a `## Memory Protocol` section: \"- ALWAYS run "
                     "memory_search before acting on past context\" (`vaultkit init` writes one)")
    if note.error:
        return Check("agents-protocol", FAIL, f"{note.path} cannot be read: {note.error}",
                     f"rewrite {note.path} as UTF-8 text")
    lines = note.lines
    hits = [i for i, line in enumerate(lines, 1) if "memory_search" in line.lower()]
    heading = next((h for h in note.headings if _PROTOCOL_HEADING.search(h.text)), None)
    if not hits:
        found = (f"{note.path} has a '{heading.text}' heading (line {heading.line}) but never "
                 "tells the agent to run memory_search" if heading else
                 f"{note.path} holds no memory protocol (no mention of memory_search)")
        return Check("agents-protocol", FAIL, found, hint)
    where = f"'{heading.text}' (line {heading.line})" if heading else f"line {hits[0]}"
    return Check("agents-protocol", PASS,
                 f"{note.path} tells the agent to run memory_search: {where}")


# Words that show each part of the weekly distillation (lower-cased text, English and Chinese).
_DISTIL_PARTS = (
    ("weekly schedule", ("weekly", "every week", "each week", "once a week", "per week",
                         "every sunday", "every monday", "每周", "每週", "每星期")),
    ("review the daily logs", ("review", "re-read", "reread", "go through", "回顾", "复盘",
                               "检查日志", "浏览")),
    ("promote to MEMORY.md", ("promote", "distil", "distill", "提炼", "蒸馏", "沉淀")),
    ("prune stale entries", ("prune", "stale", "remove outdated", "clean up", "cleanup",
                             "清理", "删除过时", "过时")),
)


def _effectively_empty(note) -> bool:
    for i, line in enumerate(note.lines, 1):
        s = line.strip()
        if not s or s.startswith("#") and re.match(r"#{1,6}(\s|$)", s):
            continue
        if note.fm_span and note.fm_span[0] <= i <= note.fm_span[1]:
            continue
        return False
    return True


def check_heartbeat(ctx: AuditContext) -> Check:
    from vaultkit.vault.openclaw import parse_duration

    cid = "heartbeat-distillation"
    note = ctx.bootstrap().get("HEARTBEAT.md")
    if note is None:
        return Check(cid, FAIL, f"no HEARTBEAT.md in {ctx.where_bootstrap()}",
                     "create HEARTBEAT.md with a weekly task: review the daily logs, promote "
                     "what lasts to MEMORY.md, prune stale entries (`vaultkit init` writes one)")
    if note.error:
        return Check(cid, FAIL, f"{note.path} cannot be read: {note.error}",
                     f"rewrite {note.path} as UTF-8 text")
    if _effectively_empty(note):
        return Check(cid, FAIL,
                     f"{note.path} holds only headings and blank lines, so the runtime skips "
                     "every heartbeat run",
                     f"add the hourly memory writes and the weekly distillation to {note.path}")
    problems: list[tuple[str, str, str]] = []  # (status, found, hint)
    if ctx.config_error is None:
        every, where = ctx.setting("heartbeat.every")
        minutes = parse_duration(every)
        key = where or "agents.defaults.heartbeat.every"
        if minutes == 0:
            problems.append((FAIL, f"the heartbeat is disabled ({key}: {json.dumps(every)})",
                             f"set {key} to \"1h\" in {ctx.config_target()}"))
        elif minutes is None:
            problems.append((WARN, f"{key} is {json.dumps(every)}, not a duration the audit "
                                   "understands", f"set {key} to a duration such as \"1h\""))
    text = note.text.lower()
    missing = [name for name, words in _DISTIL_PARTS if not any(w in text for w in words)]
    if missing:
        hard = {"weekly schedule", "promote to MEMORY.md"} & set(missing) or \
            "memory.md" not in text
        parts = ", ".join(missing)
        problems.append((FAIL if hard else WARN,
                         f"{note.path} does not schedule the weekly distillation in full "
                         f"(missing: {parts})",
                         f"add to {note.path}: \"## Weekly (distillation)\" with \"- Review the "
                         "last 7 daily logs\", \"- Promote what lasts to MEMORY.md\", \"- Prune "
                         "stale entries\""))
    elif "memory.md" not in text:
        problems.append((FAIL, f"{note.path} never names MEMORY.md, where distilled memory goes",
                         f"say in {note.path} to promote mature patterns to MEMORY.md"))
    if problems:
        status = max((p[0] for p in problems), key=_RANK.get)
        return Check(cid, status, "; ".join(p[1] for p in problems),
                     "; ".join(dict.fromkeys(p[2] for p in problems)))
    every, where = ctx.setting("heartbeat.every") if ctx.config_error is None else ("?", None)
    cadence = f"every {every}" + ("" if where else " (runtime default)")
    return Check(cid, PASS, f"{note.path} schedules the weekly distillation; heartbeat {cadence}")


def _journal(ctx: AuditContext, day: dt.date):
    return ctx.vault.notes.get(f"{ctx.profile.memory_prefix}{day.isoformat()}.md")


def check_footprint(ctx: AuditContext) -> Check:
    budgets = ctx.profile.budgets
    soft, hard = budgets.session_footprint_bytes, budgets.bootstrap_total_bytes
    rows = []
    boot_bytes = 0
    for name, note in ctx.bootstrap().items():
        rows.append({"file": note.path, "bytes": note.size,
                     "tokens": estimate_tokens(note.text) if not note.error else None,
                     "kind": "bootstrap"})
        boot_bytes += note.size
    for label, day in (("today", ctx.today), ("yesterday", ctx.today - dt.timedelta(days=1))):
        note = _journal(ctx, day)
        if note is not None:
            rows.append({"file": note.path, "bytes": note.size,
                         "tokens": estimate_tokens(note.text) if not note.error else None,
                         "kind": label})
    total = sum(r["bytes"] for r in rows)
    tokens = sum(r["tokens"] or 0 for r in rows)
    n = len(rows)
    summary = (f"{n} file{'s' * (n != 1)} load every session: {_kb(total)}, ~{tokens:,} tokens "
               f"(bootstrap {boot_bytes:,} bytes)")
    if not rows:
        return Check("bootstrap-footprint", FAIL,
                     f"nothing loads every session: no bootstrap files in "
                     f"{ctx.where_bootstrap()}",
                     "create MEMORY.md, AGENTS.md, SOUL.md and USER.md (`vaultkit init`)")
    largest = max(rows, key=lambda r: r["bytes"])
    if boot_bytes > hard:
        return Check("bootstrap-footprint", FAIL,
                     f"{summary}; the bootstrap files alone pass the {hard:,}-byte budget",
                     f"shrink the bootstrap files by {boot_bytes - hard:,} bytes, starting with "
                     f"{largest['file']} ({largest['bytes']:,}): move what is not needed every "
                     "session into memory/semantic/ or memory/procedural/", rows)
    if total > soft:
        return Check("bootstrap-footprint", WARN,
                     f"{summary}, over the seed's ~{soft / 1024:.0f} KB per session",
                     f"trim {total - soft:,} bytes, starting with {largest['file']} "
                     f"({largest['bytes']:,}); keep journal entries 3–10 lines", rows)
    return Check("bootstrap-footprint", PASS, f"{summary}, within ~{soft / 1024:.0f} KB", "",
                 rows)


def check_truncation(ctx: AuditContext) -> Check:
    from vaultkit.vault.openclaw import bootstrap_limits
    from vaultkit.lint.rules.bootstrap_truncation import simulate

    per_file, total_limit, source = bootstrap_limits(ctx.vault, ctx.explicit_config, ctx.agent)
    # the very computation `check`'s bootstrap-truncation rule makes (UTF-16 units of the
    # right-trimmed text, injection order), so the two never disagree
    files = [note for note in ctx.bootstrap().values() if not note.error]
    plan = simulate(files, per_file, total_limit)
    over = [(note.path, length) for note, length, kept in plan if length > per_file]
    total = sum(length for _, length, _ in plan)
    cut_by_total = [note.path for note, length, kept in plan if kept < min(length, per_file)]
    found = []
    hints = []
    for path, chars in over:
        found.append(f"{path} is {chars:,} characters, over bootstrapMaxChars {per_file:,}: the "
                     f"agent silently loses about {chars - per_file:,} from its middle")
        hints.append(f"cut {path} below {per_file:,} characters")
    if cut_by_total:
        found.append(f"the bootstrap files total {total:,} characters, over "
                     f"bootstrapTotalMaxChars {total_limit:,}: the files injected last are cut "
                     f"({', '.join(cut_by_total)})")
        hints.append(f"bring the set below {total_limit:,} characters")
    if found:
        return Check("bootstrap-truncation", FAIL, "; ".join(found) + f"; limits from {source}",
                     "; ".join(hints) + " (move detail into memory/semantic/ or "
                     "memory/procedural/, which memory_search still finds)")
    return Check("bootstrap-truncation", PASS,
                 f"every bootstrap file is within {per_file:,} characters and the set "
                 f"({total:,}) within {total_limit:,}; limits from {source}")


def check_leftover(ctx: AuditContext) -> Check:
    note = ctx.bootstrap().get("BOOTSTRAP.md")
    if note is None:
        return Check("bootstrap-leftover", PASS, "no BOOTSTRAP.md (the first-run ritual is done)")
    return Check("bootstrap-leftover", WARN,
                 f"{note.path} is still there ({note.size:,} bytes injected into every session)",
                 f"delete {note.path} once the first-run ritual is done (git rm {note.path})")


def check_index(ctx: AuditContext) -> Check:
    rel = ctx.profile.expand(ctx.profile.index.path)
    note = ctx.vault.notes.get(rel)
    if note is None:
        return Check("index", FAIL, f"no {rel}: the agent has no entry point into its memory",
                     f"run `vaultkit index {ctx.vault.root}` to generate it")
    try:
        from vaultkit.links.indexgen import render_index
    except ImportError:
        return Check("index", PASS, f"{rel} exists ({note.size:,} bytes); this vaultkit cannot "
                                    "generate the index, so freshness was not checked")
    try:
        expected = render_index(ctx.vault)
    except Exception as exc:  # a bug in the generator must not stop the checklist
        return Check("index", WARN, f"{rel} exists, but its freshness could not be checked "
                                    f"({type(exc).__name__}: {exc})",
                     "run `vaultkit index` and report the error if it repeats")
    if expected != note.text:
        return Check("index", FAIL, f"{rel} is stale: it differs from what `vaultkit index` "
                                    "generates",
                     f"run `vaultkit index {ctx.vault.root}` (or let the vaultkit-index hook "
                     "do it on commit)")
    return Check("index", PASS, f"{rel} exists and is fresh")


def check_git_backup(ctx: AuditContext) -> Check:
    top = ctx.git_top()
    if top is False:
        return Check("git-backup", FAIL, "git is not installed, so nothing backs up the vault",
                     "install git, then `git init` the vault and commit nightly")
    if top is None:
        return Check("git-backup", FAIL, f"{ctx.vault.root} is not in a git repository: one bad "
                                         "write loses memory for good",
                     f"run `vaultkit init --git {ctx.vault.root}` or `git init && git add -A && "
                     "git commit -m \"backup: $(date +%F)\"` there, and schedule the nightly "
                     "backup")
    proc = ctx.git("log", "-1", "--format=%ct%x00%s")
    if proc is None or proc.returncode != 0 or not proc.stdout.strip():
        return Check("git-backup", FAIL, f"the repository at {top} has no commits yet",
                     "commit now: git add -A && git commit -m \"backup: $(date +%F)\"")
    stamp, _, subject = proc.stdout.strip().partition("\x00")
    when = dt.datetime.fromtimestamp(int(stamp), dt.timezone.utc)
    age_h = (ctx.now - when).total_seconds() / 3600
    age = _age(age_h)
    limit = ctx.backup_max_age_hours
    remotes = ctx.git("remote")
    names = remotes.stdout.split() if remotes is not None and remotes.returncode == 0 else []
    # (not into submodules: git would run there under their own, unchecked config)
    dirty = ctx.git("status", "--porcelain", "--untracked-files=normal", "--ignore-submodules=all")
    changes = len(dirty.stdout.splitlines()) if dirty is not None and dirty.returncode == 0 else 0
    pending = f"; {changes} uncommitted change{'s' * (changes != 1)}" if changes else ""
    found = f"last commit {age} ago ({when:%Y-%m-%d %H:%M} UTC, \"{subject[:60]}\"){pending}"
    if age_h > limit:
        return Check("git-backup", FAIL, f"{found}: older than {limit:g} h",
                     "commit now (git add -A && git commit -m \"backup: $(date +%F)\") and "
                     "schedule it nightly, e.g. cron `0 23 * * *`")
    if not names:
        return Check("git-backup", WARN, f"{found}; no remote, so a lost disk loses everything",
                     "add a private remote and push: git remote add origin URL && git push -u "
                     "origin HEAD")
    return Check("git-backup", PASS, f"{found}; remote {', '.join(names)}")


def _age(hours: float) -> str:
    if hours < 0:
        return "0 min (in the future)"
    if hours < 1:
        return f"{int(hours * 60)} min"
    if hours < 48:
        return f"{hours:.0f} h"
    return f"{hours / 24:.0f} days"


def check_pre_commit(ctx: AuditContext) -> Check:
    import yaml

    from vaultkit.core.bounded import MAX_CONFIG_BYTES, LimitError, load_yaml, read_regular, read_text

    top = ctx.git_top()
    base = top if isinstance(top, Path) else ctx.vault.root
    config = base / ".pre-commit-config.yaml"
    example = ("add the vaultkit hooks to .pre-commit-config.yaml (`vaultkit init` writes one "
               "pinned to this version), then run `pre-commit install`")
    if not config.is_file():
        return Check("pre-commit", FAIL, f"no .pre-commit-config.yaml in {base}", example)
    try:
        data = load_yaml(read_text(config))
    except LimitError as exc:
        return Check("pre-commit", FAIL, f"{config} is not read: {exc}",
                     f"rewrite {config} as a plain pre-commit configuration")
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        return Check("pre-commit", FAIL, f"{config} is not valid YAML{where}: "
                                         f"{getattr(exc, 'problem', None) or exc}",
                     f"fix the YAML in {config}")
    except (OSError, UnicodeDecodeError) as exc:
        why = getattr(exc, "strerror", None) or exc
        return Check("pre-commit", FAIL, f"{config} cannot be read: {why}",
                     f"rewrite {config} as UTF-8 text")
    ids = []
    revs = []
    local_entries = []  # (hook id, entry) of `repo: local` hooks pre-commit runs as commands
    repos = data.get("repos") if isinstance(data, dict) else None
    for repo in repos if isinstance(repos, list) else []:
        if not isinstance(repo, dict):
            continue
        for hook in repo.get("hooks") or []:
            if isinstance(hook, dict) and str(hook.get("id", "")).startswith("vaultkit-"):
                ids.append(str(hook["id"]))
                if repo.get("rev"):
                    revs.append(str(repo["rev"]))
                if repo.get("repo") == "local" and hook.get("language") in ("system", "script") \
                        and isinstance(hook.get("entry"), str):
                    local_entries.append((str(hook["id"]), hook["entry"], hook.get("language")))
    known = [i for i in dict.fromkeys(ids) if i in HOOK_IDS]
    if not known:
        return Check("pre-commit", FAIL, f"{config} uses no vaultkit hook",
                     "add a repo entry with the hooks vaultkit-check, vaultkit-index, "
                     "vaultkit-colors and vaultkit-append-only (and vaultkit-audit at pre-push)")
    used = ", ".join(known)
    if top is None or top is False:
        return Check("pre-commit", FAIL, f"{config} uses {used}, but the vault is not a git "
                                         "repository, so no hook can run",
                     f"git init {ctx.vault.root}, then run `pre-commit install` there")
    proc = ctx.git("rev-parse", "--git-path", "hooks/pre-commit")
    hook = None
    if proc is not None and proc.returncode == 0 and proc.stdout.strip():
        hook = Path(proc.stdout.strip())
        if not hook.is_absolute():
            hook = ctx.vault.root / hook
    installed = False
    if hook is not None and hook.is_file():
        try:
            installed = b"pre-commit" in read_regular(hook, MAX_CONFIG_BYTES)
        except OSError:
            installed = False
    pin = ""
    if revs:
        from vaultkit import __version__

        pinned = sorted(set(revs))
        pin = f"; pinned to {', '.join(pinned)}"
        if all(r.lstrip("v") != __version__ for r in pinned):
            pin += f" (this vaultkit is {__version__})"
    if not installed:
        return Check("pre-commit", FAIL,
                     f"{config.name} uses {used}{pin}, but the git hook is not installed "
                     f"({hook or '.git/hooks/pre-commit'} missing or not pre-commit's)",
                     f"run `pre-commit install` in {top}")
    unresolved, found_in = _hook_commands(local_entries, base)
    if unresolved:
        names = ", ".join(f"{hid} (`{cmd}`)" for hid, cmd in unresolved)
        return Check("pre-commit", FAIL,
                     f"{config.name}: {names} cannot run: not found on this PATH, so every "
                     "commit fails (a cron job's PATH is only /usr/bin:/bin)",
                     "put the folder that holds `vaultkit` on the PATH of whatever commits (in "
                     "crontab: PATH=/path/to/venv/bin:/usr/bin:/bin), or install vaultkit "
                     "with pipx so it is in ~/.local/bin")
    where = ""
    outside = sorted({d for d in found_in if d not in _STANDARD_BIN})
    if outside:
        where = (f"; hooks run {', '.join(outside)}/…, which a cron job or GUI git client only "
                 "finds with that folder on its PATH")
    return Check("pre-commit", PASS,
                 f"{config.name} uses {used}{pin}; the git hook is installed{where}")


_STANDARD_BIN = ("/usr/local/bin", "/usr/bin", "/bin", "/usr/local/sbin", "/usr/sbin", "/sbin")


def _hook_commands(entries, base: Path) -> tuple[list[tuple[str, str]], list[str]]:
    """Local hooks whose command does not resolve (``[(id, command)]``), and the folders
    of those that do. pre-commit runs a ``system`` hook's entry from the PATH and a
    ``script`` hook's from the repository."""
    import shlex
    import shutil

    unresolved, found_in = [], []
    for hook_id, entry, language in entries:
        try:
            words = shlex.split(entry)
        except ValueError:
            words = entry.split()
        if not words:
            continue
        command = words[0]
        if language == "script" or "/" in command:
            path = Path(command).expanduser()
            path = path if path.is_absolute() else base / path
            resolved = str(path) if path.is_file() and os.access(path, os.X_OK) else None
        else:
            resolved = shutil.which(command)
        if resolved is None:
            unresolved.append((hook_id, command))
        else:
            found_in.append(os.path.dirname(resolved))
    return unresolved, found_in


def check_obsidian(ctx: AuditContext) -> Check:
    obsidian_dir = ctx.vault.root / ".obsidian"
    graph = obsidian_dir / "graph.json"
    hint = f"run `vaultkit graph --write-colors {ctx.vault.root}` (merges, keeps your own groups)"
    if not obsidian_dir.is_dir():
        # most workspaces are never opened in Obsidian, and nothing is wrong with that: the
        # Obsidian checks apply only where Obsidian is used
        return Check("obsidian", PASS, f"no .obsidian/ in {ctx.vault.root}: not used as an "
                                       "Obsidian vault, so the graph colours are not checked")
    from vaultkit.links.obsidian import missing_colour_groups

    if os.path.lexists(graph):
        from vaultkit.core.bounded import LimitError, load_json, read_text

        try:
            load_json(read_text(graph))
        except OSError as exc:
            return Check("obsidian", WARN, f".obsidian/graph.json cannot be read: "
                                           f"{exc.strerror or exc}",
                         f"delete .obsidian/graph.json, then {hint}")
        except UnicodeDecodeError as exc:
            return Check("obsidian", WARN, f".obsidian/graph.json cannot be read: {exc}",
                         f"delete .obsidian/graph.json, then {hint}")
        except LimitError as exc:
            return Check("obsidian", WARN, f".obsidian/graph.json is not read: {exc}",
                         f"fix or delete .obsidian/graph.json, then {hint[0].lower()}{hint[1:]}")
        except ValueError as exc:
            at = (f" (line {exc.lineno}, column {exc.colno})"
                  if isinstance(exc, json.JSONDecodeError) else "")
            return Check("obsidian", WARN, f".obsidian/graph.json is not valid JSON{at}",
                         f"fix or delete .obsidian/graph.json, then {hint[0].lower()}{hint[1:]}")
    try:
        missing = list(missing_colour_groups(ctx.vault))
    except Exception as exc:  # an unreadable graph.json is a finding, not a crash
        return Check("obsidian", WARN, f"{graph} cannot be read: {exc}", hint)
    if missing:
        queries = ", ".join(str(g.get("query", g)) if isinstance(g, dict) else str(g)
                            for g in missing)
        what = "no .obsidian/graph.json" if not graph.exists() else \
            f".obsidian/graph.json lacks {len(missing)} colour group{'s' * (len(missing) != 1)}"
        return Check("obsidian", WARN, f"{what}: {queries}", hint)
    return Check("obsidian", PASS, ".obsidian/graph.json has the profile's colour groups")


# -- unclosed_work.yaml -------------------------------------------------------------------

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


def check_baseline(ctx: AuditContext) -> Check:
    """The baseline the hook reads: readable, committed, and not holding fixed findings."""
    from vaultkit.lint.baseline import Baseline, baseline_path
    from vaultkit.lint.engine import run_rules, select_rules
    from vaultkit.core.errors import VaultkitError
    from vaultkit.lint.rule import Context

    path = baseline_path(ctx.vault)
    rel = path.relative_to(ctx.vault.root).as_posix() if path.is_relative_to(ctx.vault.root) \
        else str(path)
    try:
        baseline = Baseline.load(path)
    except VaultkitError as exc:
        return Check("baseline", FAIL, f"the baseline cannot be read: {exc}",
                     "rewrite it with `vaultkit check --write-baseline`")
    if not baseline.exists:
        return Check("baseline", PASS, f"no baseline ({rel}): `vaultkit check` reports every "
                                       "finding")
    rules = select_rules(ctx.vault.settings)
    found = run_rules(Context(ctx.vault), rules)
    used = baseline.filter(found).used
    stale = baseline.stale(used, rules=[r.name for r in rules], paths=None)
    total, files = len(baseline), len({e.path for e in baseline.entries})
    held = f"{rel} accepts {total:,} finding{'s' * (total != 1)} in {files:,} " \
           f"file{'s' * (files != 1)}"
    if stale:
        return Check("baseline", WARN, f"{held}, but {stale:,} of them "
                                       f"{'is' if stale == 1 else 'are'} fixed",
                     f"run `vaultkit check {ctx.vault.root}` to shrink the baseline, then "
                     f"commit {rel}")
    if ctx.git_top():
        tracked = ctx.git("ls-files", "--error-unmatch", "--", str(path))
        if tracked is not None and tracked.returncode != 0:
            return Check("baseline", WARN, f"{held}, but it is not committed: the hook in "
                                           "another clone reports every one of them",
                         f"git add {rel} && git commit -m 'vaultkit baseline'")
    return Check("baseline", PASS, f"{held}; only new findings are reported")


def check_history(ctx: AuditContext) -> Check:
    from vaultkit.memory.history import audit_history

    return audit_history(ctx)


def _check_secrets(ctx: AuditContext) -> Check:
    from vaultkit.memory.secrethistory import check_secrets

    return check_secrets(ctx)


CHECKS: dict[str, Callable[[AuditContext], Check]] = {
    "memory-md": check_memory_md,
    "memory-dir": check_memory_dir,
    "memory-flush": check_memory_flush,
    "reserve-floor": check_reserve_floor,
    "agents-protocol": check_agents_protocol,
    "heartbeat-distillation": check_heartbeat,
    "bootstrap-footprint": check_footprint,
    "bootstrap-truncation": check_truncation,
    "bootstrap-leftover": check_leftover,
    "index": check_index,
    "git-backup": check_git_backup,
    "pre-commit": check_pre_commit,
    "obsidian": check_obsidian,
    "unclosed-work": check_unclosed,
    "baseline": check_baseline,
    "history": check_history,
    "secrets": _check_secrets,
}
assert tuple(CHECKS) == CHECK_IDS


def run_audit(vault, *, openclaw_config: str | Path | None = None, agent: str | None = None,
              backup_max_age_hours: float | None = None, now: dt.datetime | None = None,
              skip: set[str] | frozenset[str] = frozenset()) -> list[Check]:
    """Run every check (except those in ``skip``) in the checklist's order."""
    ctx = AuditContext(vault, openclaw_config=openclaw_config, agent=agent,
                       backup_max_age_hours=backup_max_age_hours, now=now)
    out = []
    for cid, fn in CHECKS.items():
        if cid in skip:
            continue
        try:
            check = fn(ctx)
        except Exception as exc:  # one broken check must not hide the others
            check = Check(cid, FAIL, f"the check itself failed: {type(exc).__name__}: {exc}",
                          "report this as a vaultkit bug (VAULTKIT_DEBUG=1 shows more)")
            if os.environ.get("VAULTKIT_DEBUG"):
                raise
        check.id = cid
        out.append(check)
    return out


# -- rendering ------------------------------------------------------------------------------

_SYMBOLS = {PASS: "✅", WARN: "⚠️ ", FAIL: "❌"}
_WORDS = {PASS: "PASS", WARN: "WARN", FAIL: "FAIL"}


def render_json(checks: list[Check]) -> str:
    return json.dumps([c.to_dict() for c in checks], indent=2, ensure_ascii=False) + "\n"


def render_text(checks: list[Check], *, symbols: bool = False, header: str = "") -> str:
    marks = _SYMBOLS if symbols else _WORDS
    width = max((len(c.id) for c in checks), default=0)
    lines = [header] if header else []
    for c in checks:
        lines.append(f"{marks[c.status]} {c.id.ljust(width)}  {c.found}")
        pad = " " * (3 if symbols else 5) + " " * width
        if c.status != PASS and c.hint:
            lines.append(f"{pad}  → {c.hint}")
        if c.id == "bootstrap-footprint" and c.details:
            lines.extend(pad + "  " + row for row in _table(c.details))
        if c.id == "secrets" and c.details:
            lines.extend(pad + "  " + (f"commit {d['commit'][:12]} ({d['date']}) added " if
                                       d.get("commit") else "now in ")
                         + f"{d['path']}:{d['line']} {d['found']}" for d in c.details)
    counts = {s: sum(1 for c in checks if c.status == s) for s in (PASS, WARN, FAIL)}
    lines.append("")
    lines.append(f"{len(checks)} checks: {counts[PASS]} passed, {counts[WARN]} "
                 f"warning{'s' * (counts[WARN] != 1)}, {counts[FAIL]} failed.")
    return "\n".join(lines) + "\n"


def _table(rows: list[dict]) -> list[str]:
    labels = [r["file"] + ("" if r["kind"] == "bootstrap" else f" ({r['kind']})") for r in rows]
    width = max(len("file"), len("total"), *(len(x) for x in labels))
    out = [f"{'file'.ljust(width)}  {'bytes':>7}  {'~tokens':>7}"]
    for label, r in zip(labels, rows):
        tok = "?" if r["tokens"] is None else f"{r['tokens']:,}"
        out.append(f"{label.ljust(width)}  {r['bytes']:>7,}  {tok:>7}")
    total_b = sum(r["bytes"] for r in rows)
    total_t = sum(r["tokens"] or 0 for r in rows)
    out.append(f"{'total'.ljust(width)}  {total_b:>7,}  {total_t:>7,}")
    return out

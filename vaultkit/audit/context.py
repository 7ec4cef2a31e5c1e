"""What every audit check reads and returns: :class:`AuditContext` (the vault, the OpenClaw
config, git, the clock) and :class:`Check` (id, status, what was found, a hint).

Token estimates (``bootstrap-footprint``): one token per CJK character (Han, kana, Hangul,
full-width forms) plus one token per 4 bytes of everything else (UTF-8). It is a rough,
tokenizer-free figure, in line with what OpenAI- and Anthropic-style tokenizers give for
English prose (about 4 characters a token) and Chinese (about one character a token).
"""

from __future__ import annotations

import datetime as dt
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vaultkit.vault.runtimes import estimate_tokens  # noqa: F401  (the one estimate, re-exported)

PASS, WARN, FAIL = "pass", "warn", "fail"
# what a check cannot judge because what it reads is not visible (no openclaw.json found):
# not wrong, and never a failed audit
UNKNOWN = "unknown"
# a recommendation: vaultkit's own tooling (the pre-commit hooks, snapshots, INDEX.md) not
# set up yet. Nothing is wrong without it, so it never fails an audit
TIP = "tip"
STATUSES = (PASS, WARN, FAIL, UNKNOWN, TIP)

RANK = {PASS: 0, TIP: 0, UNKNOWN: 1, WARN: 1, FAIL: 2}
# the checks that judge an agent's memory (bootstrap files, journals, the runtime's
# settings, vaultkit's guard for them): a plain Obsidian vault (a profile without bootstrap
# files) has none of it, so they do not apply there
AGENT_CHECKS = frozenset({
    "memory-md", "memory-dir", "memory-flush", "reserve-floor", "agents-protocol",
    "heartbeat-distillation", "bootstrap-footprint", "bootstrap-truncation",
    "bootstrap-leftover", "index", "unclosed-work", "snapshots"})


def counts(checks) -> dict[str, int]:
    """How many checks have each status: the one count the checklist, the JSON of MCP's
    ``vault_audit`` and the HTML report's tile all print."""
    return {s: sum(1 for c in checks if c.status == s) for s in STATUSES}


def counts_text(checks) -> str:
    """``18 checks: 13 passed, 1 warning, 0 failed, 2 unknown, 2 tips.``"""
    n = counts(checks)
    extra = "".join(f", {n[s]} {word}" for s, word in
                    ((UNKNOWN, "unknown"), (TIP, "tip" + "s" * (n[TIP] != 1))) if n[s])
    return (f"{len(checks)} checks: {n[PASS]} passed, {n[WARN]} "
            f"warning{'s' * (n[WARN] != 1)}, {n[FAIL]} failed{extra}.")


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
        self._runtimes: list | None = None
        # an agent's workspace (the profile names bootstrap files): the agent checks apply
        self.agent_vault = bool(self.profile.bootstrap_files)

    # -- bootstrap files ----------------------------------------------------------------

    def bootstrap(self) -> dict:
        """Bootstrap file name -> Note, in injection order."""
        return {n.path.rsplit("/", 1)[-1]: n for n in self.vault.bootstrap()}

    def runtimes(self) -> list:
        """What each runtime present loads at session start (vaultkit.vault.runtimes), with
        this audit's openclaw.json and agent; computed once."""
        if self._runtimes is None:
            from vaultkit.vault.runtimes import contexts

            self._runtimes = contexts(self.vault, None, None, openclaw_config=self.explicit_config,
                                      agent=self.agent)
        return self._runtimes

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

    def config_unknown(self, check_id: str, what: str, default: str) -> Check | None:
        """An ``unknown`` check when no openclaw.json is visible: where it was looked for,
        and how to point at it. None when there is a config to read."""
        if self.config_path is not None:
            return None
        from vaultkit.vault.openclaw import ENV_VAR, config_candidates

        places = ", ".join(f"{path} ({where})" for path, where in config_candidates(self.vault))
        return Check(check_id, UNKNOWN,
                     f"unknown: no openclaw.json found, so {what} cannot be read (looked for "
                     f"{places}; ${ENV_VAR} is not set); the runtime's default is {default}",
                     "point the audit at the config the agent runs with: vaultkit audit "
                     f"--openclaw-config PATH, or {ENV_VAR}=PATH; no config yet? `vaultkit "
                     "init --openclaw-snippet` prints the settings to put in one")

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


def size_text(n: int) -> str:
    return f"{n:,} bytes ({n / 1024:.1f} KB)"

"""The baseline: the findings a vault already had when vaultkit was adopted.

An agent's workspace that has been written for weeks has hundreds of findings on the first
run. Fixing them all before the hook can be turned on is a week of work, and turning the
hook off defeats it. A baseline (as in detekt, PHPStan or basedpyright) records today's
findings so that only new ones are reported: the hook blocks new problems from the first
day, and the old ones can be fixed at leisure.

The file is plain JSON at the vault root (``vaultkit-baseline.json``, or ``baseline`` in
``vaultkit.toml``), committed with the vault so every clone's hook and ``audit`` read the
same one. Each entry is a finding's *fingerprint*: its rule, its file and its message with
numbers blanked (the message names what is wrong: the link, the missing section), so that
lines moving (an entry added above, a heading renumbered) do not make an old finding look
new. The name of the journal or lessons entry a finding is about is blanked too: it says
where the problem is, not what it is, so renaming an entry's heading keeps its accepted
finding accepted. Identical fingerprints in one file are counted, so a file with two
accepted broken links reports a third, and a file with two accepted short entries a third.
Entries recorded before names were blanked still match by their old fingerprint.

A run never rewrites the committed file by itself (CI and hooks must not dirty the tree):
a whole-vault ``vaultkit check`` that no longer finds recorded findings says how many, and
``vaultkit check --shrink-baseline`` removes them; ``vaultkit check --write-baseline``
records the current findings again. Findings of the git rules (a journal edited, a mass deletion,
churn) describe a change being committed, not the vault, and are never baselined.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

from vaultkit.core.lazyre import lazy_re
from vaultkit.lint import BASELINE_NAME
from vaultkit.lint.diagnostics import Diagnostic
from vaultkit.core.errors import VaultkitError

DEFAULT_NAME = BASELINE_NAME
FORMAT = 1
NOT_BASELINED = frozenset({"journal-append-only", "mass-deletion", "memory-churn"})
MAX_BYTES = 16 * 1024 * 1024

_DIGITS = lazy_re(r"\d+")


def baseline_path(vault, override: str | None = None) -> Path:
    """The baseline file a run uses: ``--baseline``, else ``baseline`` in vaultkit.toml,
    else ``vaultkit-baseline.json`` at the vault root."""
    configured = override or vault.settings.config.baseline
    if configured:
        path = Path(configured)
        return path if path.is_absolute() or override else vault.root / path
    return vault.root / DEFAULT_NAME


# "entry '09:10 — Deploy' has 2 non-blank lines", "log item '…' has", "entry '## X' is dated":
# the entry's name, as the entry rules write it
_ENTRY_NAME = lazy_re(r"\b(?:entry|log item) '(.+?)' (?=has |holds |is dated )")


def fingerprint(d: Diagnostic) -> str:
    """Rule, file and the message without its numbers and without the name of the entry it
    is about: no line number, no heading, no file read (a hook with a baseline costs no
    more than one without)."""
    message = d.message
    m = _ENTRY_NAME.search(message)
    if m:  # every mention: "entry 'X' has no date; write it as 'X (YYYY-MM-DD)'"
        message = message.replace(m.group(1), "\x00name\x00")
    return _digest(d.rule, d.path, message)


def legacy_fingerprint(d: Diagnostic) -> str:
    """The fingerprint of baselines written before entry names were blanked."""
    return _digest(d.rule, d.path, d.message)


def _digest(rule: str, path: str, message: str) -> str:
    key = "\0".join((rule, path, _DIGITS.sub("#", message)))
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:20]


def _read_regular(path: Path) -> bytes:
    """The file's bytes: a regular file only (a FIFO would hang), at most MAX_BYTES."""
    import os
    import stat

    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise VaultkitError(f"{path}: the baseline is not a regular file")
        with os.fdopen(os.dup(fd), "rb") as fh:
            data = fh.read(MAX_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_BYTES:
        raise VaultkitError(f"{path}: the baseline is larger than {MAX_BYTES:,} bytes")
    return data


@dataclass
class Entry:
    path: str
    rule: str
    code: str
    fingerprint: str
    count: int
    message: str

    def to_dict(self) -> dict:
        return {"path": self.path, "rule": self.rule, "code": self.code,
                "fingerprint": self.fingerprint, "count": self.count, "message": self.message}


def _shown_paths(diags) -> dict[str, str]:
    return _shown_paths_of({d.path for d in diags})


def _shown_paths_of(paths) -> dict[str, str]:
    """Each path as the baseline records it (through the output boundary: a file name with
    a control character or a credential in it is recorded as printed); one pass for all."""
    from vaultkit.vault.outbound import clean_many

    paths = sorted(paths)
    return dict(zip(paths, clean_many(paths, one_line=True)))


_MAX_COUNT = 1 << 31  # more identical findings than any file holds


def _entry(path: Path, i: int, item) -> Entry:
    """One recorded finding, checked field by field (the file is committed: a clone may
    carry anything in it)."""
    def bad(what: str) -> VaultkitError:
        return VaultkitError(f"{path}: finding {i + 1} of the baseline {what}; rewrite it with "
                             "`vaultkit check --write-baseline`")

    if not isinstance(item, dict):
        raise bad("is not an object")
    fields = []
    for key in ("path", "rule", "code", "fingerprint"):
        value = item.get(key)
        if not isinstance(value, str) or not value:
            raise bad("lacks path, rule, code or fingerprint" if value is None
                      else f"has a {key} that is not a text")
        fields.append(value)
    count = item.get("count", 1)
    # (bool is an int in Python; Infinity and NaN are floats: json reads both)
    if isinstance(count, bool) or not isinstance(count, int) or not 0 < count <= _MAX_COUNT:
        raise bad("has a count that is not a whole number from 1 to 2^31")
    message = item.get("message", "")
    if not isinstance(message, str):
        raise bad("has a message that is not a text")
    return Entry(*fields, count, message)


@dataclass
class Filtered:
    """What a baseline did to one run's findings."""

    shown: list[Diagnostic]
    hidden: int = 0
    used: Counter = field(default_factory=Counter)  # (path, fingerprint) -> matched


@dataclass
class Baseline:
    path: Path
    entries: list[Entry] = field(default_factory=list)
    exists: bool = False
    root: Path | None = None  # the vault: where :meth:`save` may write

    @classmethod
    def load(cls, path: Path, root: Path | None = None) -> "Baseline":
        """Read a baseline; a missing file is an empty baseline, a broken one a clear error.

        ``root`` is the vault it belongs to: :meth:`save` writes only inside it."""
        try:
            data = _read_regular(path)
        except FileNotFoundError:
            return cls(path, root=root)
        except OSError as exc:
            raise VaultkitError(f"{path}: cannot read the baseline: {exc.strerror or exc}") \
                from None
        try:
            raw = json.loads(data.decode("utf-8-sig"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise VaultkitError(f"{path}: the baseline is not valid JSON ({exc}); rewrite it "
                                "with `vaultkit check --write-baseline`") from None
        except RecursionError:  # "[[[[…" nested deeper than the parser goes
            raise VaultkitError(f"{path}: the baseline is not valid JSON (nested too deeply); "
                                "rewrite it with `vaultkit check --write-baseline`") from None
        if not isinstance(raw, dict) or raw.get("vaultkit-baseline") != FORMAT \
                or not isinstance(raw.get("findings"), list):
            raise VaultkitError(f"{path}: not a vaultkit baseline (format {FORMAT}); rewrite it "
                                "with `vaultkit check --write-baseline`")
        entries = [_entry(path, i, item) for i, item in enumerate(raw["findings"])]
        return cls(path, entries, exists=True, root=root)

    def __len__(self) -> int:
        return sum(e.count for e in self.entries)

    def filter(self, diags: Sequence[Diagnostic]) -> Filtered:
        """Hide the findings the baseline records (each entry as often as its count)."""
        budget = Counter()
        for e in self.entries:
            budget[(e.path, e.fingerprint)] += e.count
        result = Filtered([])
        shown = _shown_paths(diags) if budget else {}
        for d in diags:
            if d.rule not in NOT_BASELINED and budget:
                key = (shown[d.path], fingerprint(d))
                if result.used[key] >= budget[key]:  # an entry of an older baseline?
                    old = (shown[d.path], legacy_fingerprint(d))
                    key = old if result.used[old] < budget[old] else key
                if result.used[key] < budget[key]:
                    result.used[key] += 1
                    result.hidden += 1
                    continue
            result.shown.append(d)
        return result

    def stale(self, used: Counter, *, rules: Iterable[str], paths: set[str] | None) -> int:
        """How many recorded findings a run that covered ``rules`` on ``paths`` no longer saw."""
        rules = set(rules)
        if paths is not None:
            paths = set(_shown_paths_of(paths).values())
        return sum(max(0, e.count - used[(e.path, e.fingerprint)]) for e in self._covered(
            rules, paths))

    def shrink(self, used: Counter, *, rules: Iterable[str], paths: set[str] | None) -> int:
        """Drop what a run covering ``rules`` on ``paths`` (None: all) no longer found."""
        rules = set(rules)
        covered = {id(e) for e in self._covered(rules, paths)}
        kept, removed = [], 0
        seen: Counter = Counter()
        for e in self.entries:
            if id(e) not in covered:
                kept.append(e)
                continue
            key = (e.path, e.fingerprint)
            left = max(0, used[key] - seen[key])
            keep = min(e.count, left)
            seen[key] += keep
            removed += e.count - keep
            if keep:
                kept.append(Entry(e.path, e.rule, e.code, e.fingerprint, keep, e.message))
        self.entries = kept
        return removed

    def _covered(self, rules: set[str], paths: set[str] | None) -> list[Entry]:
        return [e for e in self.entries
                if e.rule in rules and (paths is None or e.path in paths)]

    def record(self, diags: Sequence[Diagnostic], *, rules: Iterable[str]) -> None:
        """Replace the entries of ``rules`` with ``diags``; other rules' entries stay."""
        rules = set(rules)
        counts: Counter = Counter()
        first: dict[tuple, Diagnostic] = {}
        shown = _shown_paths(diags)
        for d in diags:
            if d.rule in NOT_BASELINED:
                continue
            key = (shown[d.path], d.rule, d.code, fingerprint(d))
            counts[key] += 1
            first.setdefault(key, d)
        kept = [e for e in self.entries if e.rule not in rules]
        kept += [Entry(p, r, c, f, n, first[(p, r, c, f)].message)
                 for (p, r, c, f), n in counts.items()]
        self.entries = kept

    def add(self, diags: Sequence[Diagnostic]) -> int:
        """Accept ``diags`` besides what is recorded: each one more of its fingerprint
        (an editor's "accept this finding"); how many were added (never a git rule's)."""
        shown = _shown_paths(diags)
        added = 0
        for d in diags:
            if d.rule in NOT_BASELINED:
                continue
            path, mark = shown[d.path], fingerprint(d)
            for e in self.entries:
                if (e.path, e.rule, e.fingerprint) == (path, d.rule, mark):
                    e.count += 1
                    break
            else:
                self.entries.append(Entry(path, d.rule, d.code, mark, 1, d.message))
            added += 1
        return added

    def to_json(self) -> str:
        """The file's text, through the output boundary: paths and messages hold no
        credential and no control character (the file is committed and shown in diffs)."""
        from vaultkit.vault.outbound import dumps

        entries = sorted(self.entries, key=lambda e: (e.path, e.code, e.fingerprint))
        doc = {
            "vaultkit-baseline": FORMAT,
            "about": "Findings accepted when vaultkit was adopted: `vaultkit check` does not "
                     "report them. Commit this file; it shrinks as they are fixed.",
            "findings": [e.to_dict() for e in entries],
        }
        return dumps(doc, indent=2) + "\n"

    def save(self) -> None:
        """Write the baseline atomically, confined to the vault like every other write
        (:mod:`vaultkit.core.confine`): never outside it, through a symlink, or into
        ``.git/``, ``.obsidian/`` or ``.vaultkit/``, wherever ``--baseline`` or a cloned
        ``vaultkit.toml`` points. Raises VaultkitError, writing nothing, otherwise."""
        from vaultkit.core.atomic import write_atomic

        if self.root is None:
            raise VaultkitError(f"{self.path}: the baseline's vault is not known; not written")
        write_atomic(self.path, self.to_json().encode("utf-8"), root=self.root)
        self.exists = True

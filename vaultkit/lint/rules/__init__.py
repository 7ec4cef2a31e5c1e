"""The rule registry: every module in this package defines exactly one rule.

Modules are discovered, so adding a rule is adding a file. Each module exposes its
rule class as ``RULE``.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from vaultkit.lint.rule import Rule


@lru_cache(maxsize=1)
def all_rules() -> tuple[Rule, ...]:
    rules = []
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        rules.append(module.RULE())
    rules.sort(key=lambda r: r.code)
    names = [r.name for r in rules]
    codes = [r.code for r in rules]
    assert len(set(names)) == len(names) and len(set(codes)) == len(codes), "duplicate rule"
    return tuple(rules)


def by_key() -> dict[str, Rule]:
    """Rules by name and by code."""
    out: dict[str, Rule] = {}
    for rule in all_rules():
        out[rule.name] = rule
        out[rule.code] = rule
    return out


def matches(rule: Rule, key: str) -> bool:
    """A selector matches a rule by name, code, code prefix (``VK5``) or ``ALL``."""
    key = key.strip()
    return (key == "ALL" or key == rule.name or key.upper() == rule.code
            or (len(key) >= 2 and key.upper().startswith("VK") and rule.code.startswith(key.upper())))


def known(key: str) -> bool:
    return any(matches(rule, key) for rule in all_rules())


def unknown_rule_message(key: str) -> str:
    """``unknown rule 'x'`` with the nearest rule names as a "did you mean"."""
    from vaultkit.vault.phrases import did_you_mean

    names = [r.name for r in all_rules()]
    hint = did_you_mean(key.lower().replace("_", "-"), names)
    return f"unknown rule '{key}'{hint} (see `vaultkit rules`)"

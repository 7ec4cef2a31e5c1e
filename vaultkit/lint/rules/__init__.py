"""The rule registry: every module in this package defines exactly one rule.

Modules are discovered, so adding a rule is adding a file (and running
``python -m vaultkit.lint.docsgen``). Each module exposes its rule class as ``RULE``.
``_index.py``, generated from the classes by docsgen, lists each rule's name, code and
flags, so that selecting rules (:func:`rule_refs`) imports no module until a rule runs;
tests/test_docs.py fails when it differs from what the classes say.
"""

from __future__ import annotations

import importlib
from functools import lru_cache

from vaultkit.lint.rule import Rule


def _module_names(path=None) -> set[str]:
    """The names of the rule modules in the package's folder (``path``), but ``_*``.

    What ``pkgutil.iter_modules`` finds, from one listing: when the folder holds only
    ``*.py`` files and ``__pycache__`` (as installed) their names are the modules, without
    pkgutil's import and its per-name checks (1-2 ms of CPU of every check); anything else there
    (a subpackage, a compiled or sourceless module, another file) is left to pkgutil."""
    import os

    path = __path__ if path is None else path
    names: set[str] = set()
    try:
        for folder in path:
            with os.scandir(folder) as it:
                for entry in it:
                    name = entry.name
                    if name == "__pycache__":
                        continue
                    if not name.endswith(".py") or not name[:-3].isidentifier() or \
                            not entry.is_file():
                        raise LookupError(name)  # (not a plain source module: pkgutil's)
                    if not name.startswith("_"):
                        names.add(name[:-3])
    except (OSError, LookupError):
        import pkgutil

        return {info.name for info in pkgutil.iter_modules(path)
                if not info.name.startswith("_")}
    return names


@lru_cache(maxsize=1)
def all_rules() -> tuple[Rule, ...]:
    rules = []
    for name in sorted(_module_names()):
        module = importlib.import_module(f"{__name__}.{name}")
        rules.append(module.RULE())
    rules.sort(key=lambda r: r.code)
    names = [r.name for r in rules]
    codes = [r.code for r in rules]
    assert len(set(names)) == len(names) and len(set(codes)) == len(codes), "duplicate rule"
    return tuple(rules)


class RuleRef:
    """A rule known by its entry in the index (``_index.py``): name, code, severity,
    fixable, scope and default are there at once; anything else (``check``,
    ``check_vault``, its docs) imports the rule's module and asks the rule itself."""

    __slots__ = ("code", "name", "module", "severity", "fixable", "scope", "default", "_rule")

    def __init__(self, code, name, module, severity, fixable, scope, default=True):
        self.code, self.name, self.module, self.severity = code, name, module, severity
        self.fixable, self.scope = fixable, scope
        self.default = default
        self._rule = None

    @property
    def rule(self) -> Rule:
        if self._rule is None:
            self._rule = importlib.import_module(f"{__name__}.{self.module}").RULE()
        return self._rule

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.rule, name)

    def __repr__(self) -> str:
        return f"<rule {self.code} {self.name}>"


@lru_cache(maxsize=1)
def rule_refs() -> tuple[Rule, ...]:
    """Every rule as the generated index lists them (in code order, as :func:`all_rules`),
    without importing a rule's module until the rule is run (:class:`RuleRef`)."""
    from vaultkit.lint.rules._index import OFF_BY_DEFAULT, RULES

    return tuple(RuleRef(*entry, default=entry[1] not in OFF_BY_DEFAULT) for entry in RULES)


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
    return any(matches(rule, key) for rule in rule_refs())


def unknown_rule_message(key: str) -> str:
    """``unknown rule 'x'`` with the nearest rule names as a "did you mean"."""
    from vaultkit.vault.phrases import did_you_mean

    names = [r.name for r in rule_refs()]
    hint = did_you_mean(key.lower().replace("_", "-"), names)
    return f"unknown rule '{key}'{hint} (see `vaultkit rules`)"

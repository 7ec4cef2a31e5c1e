"""``vaultkit rule NAME``: print one rule's documentation."""

from __future__ import annotations

HELP = "show a rule's documentation (by name or code)"


def add_arguments(p) -> None:
    p.add_argument("name", metavar="NAME", help="rule name or code, e.g. broken-link or VK501")


def run(args) -> int:
    from vaultkit.core.errors import VaultkitError
    from vaultkit.lint.rules import by_key

    rule = by_key().get(args.name) or by_key().get(args.name.upper())
    if rule is None:
        from vaultkit.lint.rules import unknown_rule_message

        raise VaultkitError(unknown_rule_message(args.name))
    print(f"# {rule.name} ({rule.code})\n")
    print(f"Default severity: {rule.severity}. Fix: {'available' if rule.fixable else 'none'}.\n")
    print(rule.doc())
    return 0

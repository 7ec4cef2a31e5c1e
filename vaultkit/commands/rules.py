"""``vaultkit rules``: list every rule."""

from __future__ import annotations

HELP = "list every rule with its code, severity and whether it can fix"


def add_arguments(p) -> None:
    p.add_argument("--format", choices=("text", "json", "markdown"), default="text")


def table_markdown() -> str:
    """The README's rule table, generated from the registry."""
    from vaultkit.rules import all_rules

    lines = ["| code | name | default | fix | what it reports |", "|---|---|---|---|---|"]
    for r in all_rules():
        lines.append(f"| {r.code} | `{r.name}` | {r.severity} | {'yes' if r.fixable else ''} | "
                     f"{r.summary()} |")
    return "\n".join(lines) + "\n"


def run(args) -> int:
    import json

    from vaultkit.rules import all_rules

    rules = all_rules()
    if args.format == "json":
        print(json.dumps([{"code": r.code, "name": r.name, "severity": r.severity,
                           "fixable": r.fixable, "summary": r.summary()} for r in rules], indent=2))
    elif args.format == "markdown":
        print(table_markdown(), end="")
    else:
        width = max(len(r.name) for r in rules)
        for r in rules:
            fix = "fix" if r.fixable else "   "
            print(f"{r.code}  {r.name:<{width}}  {r.severity:<7}  {fix}  {r.summary()}")
    return 0

"""``vaultkit rules``: list every rule."""

from __future__ import annotations

HELP = "list every rule with its code, severity and whether it can fix"
DESCRIPTION = (
    "List every rule: code, name, default severity, 'fix' when --fix can fix it, and its "
    "summary, cut to fit the terminal (80 columns when not a terminal). `vaultkit rule NAME` "
    "prints a rule's whole documentation; --format json and markdown give summaries whole.")


def add_arguments(p) -> None:
    p.add_argument("--format", choices=("text", "json", "markdown"), default="text",
                   help="text (default; one line a rule), json, or the Markdown table")


def table_markdown() -> str:
    """The README's rule table, generated from the registry."""
    from vaultkit.lint.rules import all_rules

    lines = ["| code | name | default | fix | what it reports |", "|---|---|---|---|---|"]
    for r in all_rules():
        lines.append(f"| {r.code} | `{r.name}` | {r.severity} | {'yes' if r.fixable else ''} | "
                     f"{r.summary()} |")
    return "\n".join(lines) + "\n"


def run(args) -> int:
    import json

    from vaultkit.lint.rules import all_rules

    rules = all_rules()
    if args.format == "json":
        print(json.dumps([{"code": r.code, "name": r.name, "severity": r.severity,
                           "fixable": r.fixable, "summary": r.summary()} for r in rules], indent=2))
    elif args.format == "markdown":
        print(table_markdown(), end="")
    else:
        import shutil
        import sys

        columns = shutil.get_terminal_size((80, 24)).columns if sys.stdout.isatty() else 80
        width = max(len(r.name) for r in rules)
        for r in rules:
            fix = "fix" if r.fixable else "   "
            line = f"{r.code}  {r.name:<{width}}  {r.severity:<7}  {fix}  {r.summary()}"
            print(_fit(line, max(columns, 40)))
    return 0


def _fit(line: str, columns: int) -> str:
    """``line`` cut at a word to ``columns`` characters, with an ellipsis when cut."""
    if len(line) <= columns:
        return line
    cut = line[:columns - 1]
    if " " in cut[columns // 2:]:
        cut = cut[:cut.rindex(" ")]
    return cut.rstrip(" ,;:") + "…"

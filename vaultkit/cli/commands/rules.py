"""``vaultkit rules``: list every rule."""

from __future__ import annotations

HELP = "list every rule with its code, severity and whether it can fix"
DESCRIPTION = (
    "List every rule: code, name, default severity, 'fix' when --fix can fix it, and its "
    "whole summary, wrapped to fit the terminal (80 columns when not a terminal). `vaultkit rule NAME` "
    "prints a rule's whole documentation; --format json and markdown give the same summaries unwrapped.")


def add_arguments(p) -> None:
    from vaultkit.cli import add_format_arguments, add_output_argument

    add_format_arguments(p, ("text", "json", "markdown"),
                         help="text (default; a rule per line, its summary wrapped), json, or "
                              "the Markdown table (`md` also works)")
    add_output_argument(p)


def table_markdown() -> str:
    """The rule table (`vaultkit rules --format markdown`), generated from the registry."""
    from vaultkit.lint.rules import all_rules

    lines = ["| code | name | default | fix | what it reports |", "|---|---|---|---|---|"]
    for r in all_rules():
        lines.append(f"| {r.code} | `{r.name}` | {r.default_label()} | "
                     f"{'yes' if r.fixable else ''} | "
                     f"{r.summary()} |")
    return "\n".join(lines) + "\n"


def run(args) -> int:
    import json

    from vaultkit.lint.rules import all_rules

    rules = all_rules()
    if args.format == "json":
        print(json.dumps([{"code": r.code, "name": r.name, "severity": r.severity,
                           "fixable": r.fixable, "default": r.default, "summary": r.summary()}
                          for r in rules], indent=2))
    elif args.format == "markdown":
        print(table_markdown(), end="")
    else:
        import shutil
        import sys

        columns = shutil.get_terminal_size((80, 24)).columns if sys.stdout.isatty() else 80
        width = max(len(r.name) for r in rules)
        for r in rules:
            fix = "fix" if r.fixable else "   "
            head = f"{r.code}  {r.name:<{width}}  {r.severity:<7}  {fix}  "
            summary = r.summary() if r.default else f"(off by default) {r.summary()}"
            print("\n".join(_wrapped(head, summary, max(columns, 40))))
    return 0


def _wrapped(head: str, summary: str, columns: int) -> list[str]:
    """``head`` and the whole ``summary``, wrapped at words to ``columns``: continuation
    lines are indented under the summary (never cut: a cut summary says nothing). When the
    summary column leaves too little room, the summary starts on the next line."""
    import textwrap

    indent = " " * len(head)
    room = columns - len(head)
    # a word that does not fit the summary column (a long config key) is never split: the
    # summary then starts on the next line, indented less
    if room < 30 or any(len(word) > room for word in summary.split()):
        indent = " " * 6
        return [head.rstrip()] + textwrap.wrap(summary, columns, initial_indent=indent,
                                               subsequent_indent=indent,
                                               break_on_hyphens=False, break_long_words=False)
    lines = textwrap.wrap(summary, columns, initial_indent=head, subsequent_indent=indent,
                          break_on_hyphens=False, break_long_words=False)
    return lines or [head.rstrip()]

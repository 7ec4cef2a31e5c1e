"""Regenerate the README's rule table from the registry: ``python tests/readme_table.py --write``.

``tests/test_readme.py`` fails when the table in README.md differs from this.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"
START, END = "<!-- rules-table:start -->", "<!-- rules-table:end -->"


def expected_readme() -> str:
    from vaultkit.commands.rules import table_markdown

    text = README.read_text(encoding="utf-8")
    pattern = re.compile(re.escape(START) + r".*?" + re.escape(END), re.S)
    return pattern.sub(lambda m: START + "\n" + table_markdown() + END, text)


if __name__ == "__main__":
    if "--write" in sys.argv:
        README.write_text(expected_readme(), encoding="utf-8")
    else:
        sys.stdout.write(expected_readme())

import re

from pathlib import Path

from vaultkit.lint.docsgen import RULES_PAGE, rules_page
from vaultkit.lint.rules import all_rules

README = Path(__file__).resolve().parent.parent / "README.md"


def test_rule_reference_matches_registry():
    assert RULES_PAGE.read_text(encoding="utf-8") == rules_page(), (
        "docs/rules.md is stale: run `python -m vaultkit.lint.docsgen`")


def test_rule_reference_documents_every_rule():
    page = RULES_PAGE.read_text(encoding="utf-8")
    for rule in all_rules():
        assert f"\n## {rule.name}\n" in page and f"Code `{rule.code}`" in page


def test_every_rule_has_ruff_style_docs():
    for rule in all_rules():
        doc = rule.doc()
        for heading in ("## What it does", "## Why is this bad?", "## Example"):
            assert heading in doc, f"{rule.name}: docstring lacks {heading!r}"
        assert re.fullmatch(r"[a-z]+(-[a-z]+)*", rule.name), rule.name
        assert re.fullmatch(r"VK\d{3}", rule.code), rule.code
        assert rule.severity in ("error", "warning")


def test_readme_names_both_setup_commands():
    text = README.read_text(encoding="utf-8")
    assert "pip install . && vaultkit init demo && vaultkit check demo" in text
    assert "pip install -e '.[test]' && python -m pytest" in text

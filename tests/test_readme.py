import re

from readme_table import README, expected_readme

from vaultkit.rules import all_rules


def test_rule_table_matches_registry():
    assert README.read_text(encoding="utf-8") == expected_readme(), (
        "README rule table is stale: run `python tests/readme_table.py --write`")


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

"""The documentation: the README stays a newcomer's page, the reference in docs/ builds as a
MkDocs site without a warning, and every link resolves."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parent.parent
README = PROJECT / "README.md"
DOCS = PROJECT / "docs"


def _links(text: str) -> list[str]:
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    text = re.sub(r"(`+).*?\1", "", text, flags=re.S)  # links shown as code are examples
    return re.findall(r"\]\(([^)\s]+)\)", text)


def test_readme_is_a_newcomers_page():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 300
    # the set-up commands come after the sentence about the virtual environment
    assert text.index("python -m venv .venv") < text.index("pip install . && vaultkit")


def test_readme_explains_layer_and_profile_before_using_them():
    text = README.read_text(encoding="utf-8")
    words = text.index("## Words used here")
    for word in ("layer", "profile"):
        first = re.search(rf"\b{word}\b", text, re.I)
        assert first and first.start() > words, f"'{word}' is used before it is explained"
        assert f"**{word.capitalize()}**" in text


@pytest.mark.parametrize("page", [README, *sorted(DOCS.rglob("*.md"))],
                         ids=lambda p: str(p.relative_to(PROJECT)))
def test_relative_links_resolve(page):
    for link in _links(page.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", link) or link.startswith("#"):
            continue
        target = (page.parent / link.split("#")[0]).resolve()
        assert target.exists(), f"{page.name}: link to missing {link}"


def test_every_docs_page_is_in_the_site_navigation():
    nav = (PROJECT / "mkdocs.yml").read_text(encoding="utf-8")
    for page in DOCS.rglob("*.md"):
        assert page.relative_to(DOCS).as_posix() in nav, f"{page} is not in mkdocs.yml's nav"


def test_rule_reference_is_current():
    proc = subprocess.run([sys.executable, "-m", "vaultkit.lint.docsgen", "--check"], cwd=PROJECT,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_docs_site_builds_strictly(tmp_path):
    pytest.importorskip("mkdocs", reason="mkdocs is in the test extra; install '.[test]'")
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q",
                           "-f", str(PROJECT / "mkdocs.yml"), "-d", str(tmp_path / "site")],
                          cwd=PROJECT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "site" / "rules" / "index.html").exists()


def test_every_rule_example_shows_a_severity_the_rule_reports():
    # a page that shows a warning as an error tells the user a commit is refused when it
    # is not: each example line of a rule's docstring shows the rule's default severity,
    # or one its module reports on purpose for that case (index-stale's suggestion)
    from vaultkit.lint.rules import all_rules

    for rule in all_rules():
        source = Path(sys.modules[type(rule).__module__].__file__).read_text(encoding="utf-8")
        for m in re.finditer(rf"\b{rule.code} {rule.name} (error|warning|info):", rule.doc()):
            shown = m.group(1)
            assert shown == rule.severity or f'"{shown}"' in source.split('"""', 2)[2], \
                f"{rule.name}: its example shows {shown!r}, its severity is {rule.severity!r}"

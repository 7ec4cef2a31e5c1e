"""The docs a newcomer follows in the first week say what is true: cross-references land on
sections that exist, the reference lists every command, index-stale says what its fix does."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import yaml

from vaultkit.cli import COMMANDS
from vaultkit.lint.rules import by_key

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def tracked_texts():
    names = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                           check=True).stdout.decode().split("\0")
    for name in names:
        path = ROOT / name
        if name and path.is_file() and path.suffix in (".md", ".py", ".yaml", ".yml", ".toml"):
            yield name, path.read_text(encoding="utf-8")


def test_every_readme_section_named_elsewhere_exists():
    headings = set(re.findall(r"^##+ (.+)$", README, re.M))
    named = re.compile(r"README(?:'s)?(?: section)?\s+[\"“]([^\"”]+)[\"”]|"
                       r"[\"“]([^\"”]+)[\"”] section of the README")
    missing = []
    for name, text in tracked_texts():
        if name.startswith("tests/"):
            continue
        for m in named.finditer(text.replace("#\n# ", " ")):
            title = m.group(1) or m.group(2)
            if title not in headings:
                missing.append(f"{name}: README section {title!r}")
    assert not missing, missing


def test_readme_anchors_land_on_headings():
    def slug(title):
        return re.sub(r"[^\w\- ]", "", title.lower()).strip().replace(" ", "-")

    slugs = {slug(h) for h in re.findall(r"^##+ (.+)$", README, re.M)}
    for anchor in re.findall(r"\]\(#([^)]+)\)", README):
        assert anchor in slugs, anchor


def test_docs_index_lists_every_command():
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    for command in COMMANDS:
        assert f"`vaultkit {command}" in index, command
    for page in ("commands/history.md#vaultkit-history", "commands/history.md#vaultkit-recover",
                 "commands/history.md#vaultkit-report", "ci.md"):
        assert f"]({page})" in index, page


def test_ci_page_is_in_the_nav():
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]
    assert any(isinstance(item, dict) and "ci.md" in item.values() for item in nav)


def test_index_stale_says_its_fix_keeps_a_hand_written_index():
    doc = by_key()["index-stale"].doc()
    assert "whole file" not in doc  # the fix never replaces the file
    assert "A hand-written INDEX.md without the markers is kept whole" in doc
    assert "appended" in doc

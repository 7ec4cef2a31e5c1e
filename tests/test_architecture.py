"""The package's architecture (docs/architecture.md) holds: the import-linter contracts in
pyproject.toml pass, and no import cycle exists, not even through imports inside functions."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "vaultkit"


def _lint_imports() -> list[str]:
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which(
        "lint-imports")
    assert exe, "import-linter is in the test extra: pip install -e '.[test]'"
    return [exe]


def _run_lint_imports(cwd: Path, pythonpath: str | None = None):
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    return subprocess.run([*_lint_imports(), "--no-cache"], cwd=cwd, capture_output=True,
                          text=True, timeout=300, env=env)


def test_import_contracts_are_kept():
    proc = _run_lint_imports(ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 broken" in proc.stdout


@pytest.mark.parametrize("module, planted, broken", [
    ("core/bounded.py", "from vaultkit.cli import main", "vaultkit.core.bounded -> vaultkit.cli"),
    ("lint/rules/nul_byte.py", "from vaultkit.lint.rules import memory_size",
     "vaultkit.lint.rules.nul_byte -> vaultkit.lint.rules.memory_size"),
    ("audit/leftover.py", "from vaultkit.audit.index import check_index",
     "vaultkit.audit.leftover -> vaultkit.audit.index"),
])
def test_an_upward_import_inside_a_function_breaks_a_contract(tmp_path, module, planted, broken):
    shutil.copytree(PACKAGE, tmp_path / "vaultkit",
                    ignore=shutil.ignore_patterns("__pycache__", "_data"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    with open(tmp_path / "vaultkit" / module, "a", encoding="utf-8") as fh:
        fh.write(f"\n\ndef _planted():\n    {planted}\n")
    proc = _run_lint_imports(tmp_path, pythonpath=str(tmp_path))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "0 broken" not in proc.stdout and broken in proc.stdout, proc.stdout


@pytest.fixture(scope="module")
def graph():
    # every import that runs, those inside functions too (as lint-imports is configured)
    return grimp.build_graph("vaultkit", cache_dir=None, exclude_type_checking_imports=True)


def _cycles(graph) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    counter = 0
    for start in sorted(graph.modules):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.find_modules_directly_imported_by(start))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(
                        child)))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_no_import_cycle_anywhere(graph):
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle():
    fake = grimp.ImportGraph()
    for name in ("p", "p.a", "p.b", "p.c"):
        fake.add_module(name)
    fake.add_import(importer="p.a", imported="p.b")
    fake.add_import(importer="p.b", imported="p.a")
    fake.add_import(importer="p.c", imported="p.a")
    assert _cycles(fake) == [["p.a", "p.b"]]


def _contracts() -> list[dict]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return config["tool"]["importlinter"]["contracts"]


def test_every_subpackage_is_a_layer():
    layers = next(c for c in _contracts()
                  if c["type"] == "layers" and not c.get("containers"))["layers"]
    subpackages = {f"vaultkit.{p.name}" for p in PACKAGE.iterdir()
                   if (p / "__init__.py").is_file()}
    assert set(layers) == subpackages


def test_every_audit_check_is_in_the_independence_contract():
    listed = {m for c in _contracts() if c["type"] == "independence" for m in c["modules"]
              if m.startswith("vaultkit.audit.")}
    checks = {f"vaultkit.audit.{p.stem}" for p in (PACKAGE / "audit").glob("*.py")
              if p.stem not in ("__init__", "context", "render")}
    assert listed == checks


def test_rule_modules_import_no_other_rule(graph):
    rules = {m for m in graph.modules if m.startswith("vaultkit.lint.rules.")}
    assert len(rules) >= 29
    for rule in sorted(rules):
        assert not (graph.find_modules_directly_imported_by(rule) & rules), rule

"""The install name is ours: ``vaultkit`` on the public package index is an unrelated project.

The distribution is ``vaultkit-lint`` (the import package and the command stay ``vaultkit``),
so no text in the repository may tell anyone to ``pip install vaultkit`` or
``'vaultkit[extra]'``: that would install the other project over this one.
"""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

import vaultkit

ROOT = Path(__file__).resolve().parent.parent

# `pip install vaultkit`, `pip install 'vaultkit[mcp]'`, `"vaultkit>=0.1"`, `vaultkit==…`:
# the name alone, not `vaultkit-lint` and not a path such as `./vaultkit`.
WRONG = re.compile(r"""pip3?\s+install\s+(?:-\S+\s+)*['"]?vaultkit(?![-\w./])""")
WRONG_EXTRA = re.compile(r"""['"]vaultkit\[""")


def repository_texts():
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                           check=True).stdout.decode().split("\0")
    for name in files:
        path = ROOT / name
        if not name or not path.is_file() or path.suffix in {".png", ".svg", ".gz", ".zip"}:
            continue
        try:
            yield name, path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue


def test_the_distribution_name_is_vaultkit_lint():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["name"] == vaultkit.DISTRIBUTION == "vaultkit-lint"
    assert project["scripts"] == {"vaultkit": "vaultkit.cli:console"}


def test_no_text_suggests_installing_the_other_projects_name():
    offenders = [f"{name}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(0)}"
                 for name, text in repository_texts() if name != "tests/test_install_name.py"
                 for pattern in (WRONG, WRONG_EXTRA) for m in pattern.finditer(text)]
    assert not offenders, offenders


def test_the_patterns_catch_the_old_hints():
    for bad in ("pip install 'vaultkit[mcp]'", 'pip install "vaultkit[report]"',
                "pip install vaultkit", "pip install -U vaultkit==0.2"):
        assert WRONG.search(bad) or WRONG_EXTRA.search(bad), bad
    for good in ("pip install 'vaultkit-lint[mcp]'", "pip install '.[mcp]'",
                 "pip install -e '.[test]'", "pip install ./vaultkit"):
        assert not (WRONG.search(good) or WRONG_EXTRA.search(good)), good

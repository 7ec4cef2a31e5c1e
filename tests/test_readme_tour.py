"""The README's five-minute tour runs as written and prints what the README shows.

Every ``$ command`` of the tour's console blocks runs in order in one fresh folder (``cd``
moves between them); a command whose shown output is ``…`` is run but not compared.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
VAULTKIT = str(Path(sys.executable).with_name("vaultkit"))


def tour_steps() -> list[tuple[str, str | None]]:
    text = README.read_text(encoding="utf-8")
    start = text.index("## Five minutes on the starter vault")
    section = text[start:text.index("\n## ", start + 3)]
    steps: list[tuple[str, str | None]] = []
    for block in re.findall(r"```console\n(.*?)```", section, re.S):
        for chunk in re.split(r"^\$ ", block, flags=re.M)[1:]:
            command, _, output = chunk.partition("\n")
            steps.append((command, None if output.strip() == "…" else output))
    return steps


def test_the_tour_has_steps():
    steps = tour_steps()
    assert steps[0][0].startswith("vaultkit init demo")
    assert sum(1 for _, out in steps if out) >= 3


@pytest.mark.integration
def test_readme_tour_prints_what_the_readme_shows(tmp_path):
    env = dict(os.environ, HOME=str(tmp_path), NO_COLOR="1", GIT_AUTHOR_NAME="Tour",
               GIT_AUTHOR_EMAIL="tour@example.com", GIT_COMMITTER_NAME="Tour",
               GIT_COMMITTER_EMAIL="tour@example.com", GIT_CONFIG_GLOBAL=os.devnull,
               PATH=str(Path(VAULTKIT).parent) + os.pathsep + os.environ.get("PATH", ""))
    env.pop("OPENCLAW_CONFIG_PATH", None)
    cwd = tmp_path
    for command, expected in tour_steps():
        if command.startswith("cd "):
            cwd = cwd / shlex.split(command)[1]
            continue
        proc = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode in (0, 1), (command, proc.stderr)
        if expected is not None:
            assert proc.stdout + proc.stderr == expected, command

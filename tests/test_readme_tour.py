"""The README's five-minute tour runs as written and prints what the README shows.

Every ``$ command`` of the tour's console blocks runs in order in one fresh folder (``cd``
moves between them); a command whose shown output is ``…`` is run but not compared.
``python tests/test_readme_tour.py`` prints the tour with the real output, to paste.
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
    commands = [command for command, _ in steps]
    # the vault goes outside the checkout (git refuses --git inside this repository)
    assert commands[0] == "vaultkit init ~/demo --git"
    assert "cd ~/demo" in commands
    assert sum(1 for _, out in steps if out) >= 3
    # the tour installs pre-commit, commits a new note through the hooks and reads history
    assert any(c.startswith("pip install pre-commit") and "pre-commit install" in c
               for c in commands)
    assert any(c.startswith("git add -A && git commit") for c in commands)
    assert "vaultkit history" in commands


def test_the_readme_says_to_install_pre_commit():
    assert "pip install pre-commit" in README.read_text(encoding="utf-8")


def run_tour(tmp_path: Path):
    """Yield ``(command, expected, actual output)`` for every step of the tour."""
    env = dict(os.environ, HOME=str(tmp_path), NO_COLOR="1", PYTHONUNBUFFERED="1", GIT_AUTHOR_NAME="Tour",
               GIT_AUTHOR_EMAIL="tour@example.com", GIT_COMMITTER_NAME="Tour",
               GIT_COMMITTER_EMAIL="tour@example.com", GIT_CONFIG_GLOBAL=os.devnull,
               PATH=str(Path(VAULTKIT).parent) + os.pathsep + os.environ.get("PATH", ""))
    env.pop("OPENCLAW_CONFIG_PATH", None)
    env["PRE_COMMIT_HOME"] = str(tmp_path / ".cache" / "pre-commit")
    cwd = tmp_path
    for command, expected in tour_steps():
        if command.startswith("cd "):
            target = shlex.split(command)[1]
            cwd = Path(env["HOME"] + target[1:]) if target.startswith("~") else cwd / target
            continue
        # one pipe for both streams, unbuffered: the lines come in the order a terminal
        # shows them (stderr's "Fixed 2 findings." before stdout's summary)
        proc = subprocess.run(["bash", "-c", command], cwd=cwd, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, timeout=120)
        assert proc.returncode in (0, 1), (command, proc.stdout)
        yield command, expected, proc.stdout


@pytest.mark.integration
def test_readme_tour_prints_what_the_readme_shows(tmp_path):
    for command, expected, actual in run_tour(tmp_path):
        if expected is not None:
            assert actual == expected, command
        if command.startswith("git add -A && git commit"):  # through the hooks, in one go
            assert "Failed" not in actual, actual
    demo = tmp_path / "demo"
    assert (demo / ".git" / "hooks" / "pre-commit").is_file()  # the tour installed the hooks
    status = subprocess.run(["git", "status", "--porcelain"], cwd=demo, capture_output=True,
                            text=True, check=True).stdout
    assert status == ""  # the regenerated INDEX.md went into that one commit


if __name__ == "__main__":  # `python tests/test_readme_tour.py`: show the tour's real output
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        for command, expected, actual in run_tour(Path(tmp)):
            print(f"$ {command}\n{actual if expected is not None else '…'}", end="")

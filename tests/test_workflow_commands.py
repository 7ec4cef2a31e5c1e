"""No line vaultkit prints is a GitHub Actions workflow command, but the `github` format's
own annotations (docs/security.md, "No workflow command from a vault").

A note named ``::error title=…::x.md`` starts its text-format line with ``::``; a heading
``##[stop-commands]tok`` quoted in a message holds the runner's older command form. The
output is read here as the runner reads it (tests/runner_commands.py)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from runner_commands import command, commands
from vaultkit.vault import outbound

SPOOF = "::error title=Spoof::x.md"
BLANK_SPOOF = " ::notice::z.md"
STOP = "::stop-commands::tok3.md"


@pytest.fixture
def vault(tmp_path) -> Path:
    root = tmp_path / "vault"
    (root / ".obsidian").mkdir(parents=True)
    (root / "memory").mkdir()  # (an agent's vault: forward links are reported)
    for i, name in enumerate((SPOOF, BLANK_SPOOF, STOP)):  # (one broken link each)
        (root / name).write_text(f"# Spoof\n\nSee [[nowhere {i}]].\n", encoding="utf-8")
    (root / "A.md").write_text("# A\n\n## ##[stop-commands]tok1\n\ntext\n", encoding="utf-8")
    (root / "B.md").write_text("# B\n\nSee [[A#::stop-commands::tok2]].\n", encoding="utf-8")
    return root


def check(root: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, VAULTKIT_RESIDENT="0", NO_COLOR="1")
    return subprocess.run([sys.executable, "-m", "vaultkit", "check", "--select", "ALL",
                           "--exit-zero", *args, "."], cwd=root, env=env,
                          capture_output=True, text=True, timeout=120)


def test_the_text_format_executes_no_command(vault, tmp_path):
    proc = check(vault)
    assert proc.returncode == 0, proc.stderr
    for output in (proc.stdout, proc.stderr):
        assert commands(output) == [], output
        assert not any(line.lstrip().startswith("::") for line in output.splitlines())
    # the paths stay the files' paths for an editor (./ is the same folder)
    for name in (SPOOF, BLANK_SPOOF, STOP):
        assert f"\n./{name}:3:5: VK501 broken-link" in "\n" + proc.stdout, proc.stdout
    # the heading quoted in B.md's finding shows its "[" escaped, the link's "::" as is
    line = next(x for x in proc.stdout.splitlines() if x.startswith("B.md:"))
    assert "'##\\u005bstop-commands]tok1'" in line and "'::stop-commands::tok2'" in line
    # and -o FILE gets what the terminal got
    proc = check(vault, "-o", str(tmp_path / "report.txt"))
    written = (tmp_path / "report.txt").read_text(encoding="utf-8")
    assert commands(written) == [] and f"./{SPOOF}:3:5:" in written


def test_the_github_format_executes_its_own_annotations_only(vault, tmp_path):
    proc = check(vault, "--format", "github")
    assert proc.returncode == 0, proc.stderr
    assert commands(proc.stderr) == []
    lines = proc.stdout.splitlines()
    found = [command(line) for line in lines]
    assert None not in found and len(found) == 4  # every line is an annotation …
    assert {name for name, _, _ in found} == {"warning"}  # … and nothing else runs
    # each names its file exactly, escaped as GitHub documents (%3A for ":" in a property)
    assert {props["file"] for _, props, _ in found} == {SPOOF, BLANK_SPOOF, STOP, "B.md"}
    assert any(line.startswith("::warning file=%3A%3Aerror title=Spoof%3A%3Ax.md,")
               for line in lines)
    b = next(data for _, props, data in found if props["file"] == "B.md")
    assert "'::stop-commands::tok2'" in b and "'##[stop-commands]tok1'" in b  # (data)
    proc = check(vault, "--format", "github", "-o", str(tmp_path / "annotations.txt"))
    assert (tmp_path / "annotations.txt").read_text(encoding="utf-8") == \
        "".join(line + "\n" for line in lines)


def test_the_boundary_follows_a_line_across_writes():
    """print() writes its pieces one by one: a command split over writes is caught too."""
    sink = io.StringIO()
    out = outbound.Stream(sink)
    for piece in ("fine\n", ":", ":error::split", "\n", "  ", "::debug::x\n", "a #",
                  "#", "[stop-commands]tok\n", "mid ::error::x\n", ":::note\n"):
        out.write(piece)
    text = sink.getvalue()
    assert commands(text) == [], text
    assert text.splitlines() == ["fine", ":\\u003aerror::split", "  :\\u003adebug::x",
                                 "a ##\\u005bstop-commands]tok", "mid ::error::x",
                                 ":::note"]  # (":::" is no command: a Markdown fence)


def test_only_the_lines_the_github_format_built_pass():
    own = "::warning file=a.md,line=1,title=VK1 r::VK1 r: m\n"
    try:
        outbound.own_commands(own)
        text = own + "::warning file=b.md,line=1,title=VK1 r::VK1 r: m\n"
        assert outbound.commands_off(text).splitlines() == [
            own.rstrip("\n"), ":\\u003awarning file=b.md,line=1,title=VK1 r::VK1 r: m"]
        # written after the start of a line, it is part of that line (as the runner reads)
        assert outbound.commands_off(own, "xab") == own and command("ab" + own) is None
        assert command(":" + outbound.commands_off(own, "\n:")) is None
        # and an own line split over two writes is not let through
        assert command(":" + outbound.commands_off(own[1:], "\n:")) is None
    finally:
        outbound.own_commands("")
    assert command(outbound.commands_off(own)) is None  # forgotten


@pytest.mark.parametrize("text", ["::error::x", " \t::set-output name=a::b", "\ufeff::x::y",
                                  "a ##[error]b ##[stop-commands]c", "x\r::error::y\r\n::z::",
                                  ":::note", "ok::x"])
def test_neutralising_is_idempotent_and_leaves_no_command(text):
    once = outbound.commands_off(text)
    assert outbound.commands_off(once) == once
    assert commands(once) == []

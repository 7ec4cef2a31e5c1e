"""vaultkit get: memory_get semantics and confinement to the memory set."""

from __future__ import annotations

import json
import os

import pytest

from vaultkit.cli import main
from vaultkit.vault.profile import load_settings
from vaultkit.memory.get import PathRefused, confine, read_excerpt

LINES = "".join(f"line {i}\n" for i in range(1, 301))


@pytest.fixture
def vault(make_vault, tmp_path):
    root = make_vault({
        "MEMORY.md": "# MEMORY\n\n- durable fact\n",
        "AGENTS.md": "# AGENTS\n",
        "memory/2026-02-15.md": LINES,
        "memory/decisions/a b.md": "# A B\n",
        "memory/long.md": "x" * 30_000 + "\nnext\n",
        "memory/wide.md": "".join(("y" * 199) + "\n" for _ in range(100)),
    })
    (tmp_path / "secret.md").write_text("outside\n")
    os.symlink(tmp_path / "secret.md", root / "memory" / "escape.md")
    os.symlink(root / "AGENTS.md", root / "memory" / "agents-link.md")
    os.symlink(tmp_path, root / "memory" / "outdir")
    os.symlink(root / "memory" / "2026-02-15.md", root / "memory" / "alias.md")
    return root


def get(capsys, root, *argv):
    code = main(["get", *argv, "--root", str(root)])
    out = capsys.readouterr()
    return code, out.out, out.err


TRAVERSALS = [
    ("../secret.md", "'..'"),
    ("memory/../../secret.md", "'..'"),
    ("memory/../AGENTS.md", "'..'"),
    ("/etc/passwd", "absolute"),
    ("~/secret.md", "absolute"),
    ("C:/Windows/win.ini", "absolute"),
    ("memory/%2e%2e/%2e%2e/secret.md", "URL-encoded"),
    ("memory%2f..%2fAGENTS.md", "URL-encoded"),
    ("memory/%2E%2E/AGENTS.md", "URL-encoded"),
    ("memory\\..\\AGENTS.md", "backslash"),
    ("memory/2026-02-15.md\x00.txt", "NUL"),
    ("AGENTS.md", "not in the memory set"),
    (".obsidian/app.md", "not in the memory set"),
    ("memory/notes.txt", "not in the memory set"),
    ("memory/escape.md", "outside the vault"),
    ("memory/agents-link.md", "not in the memory set"),
    ("memory/outdir/secret.md", "outside the vault"),
    ("memory/2026-02-15.md/", "empty path segment"),
    ("memory/.. /AGENTS.md", "surrounding spaces"),
    ("", "empty path"),
]


@pytest.mark.parametrize("path,reason", TRAVERSALS, ids=[repr(p) for p, _ in TRAVERSALS])
def test_traversal_refused(vault, capsys, path, reason):
    with pytest.raises(PathRefused) as info:
        confine(vault, load_settings(vault), path)
    assert reason in str(info.value)
    code, out, err = get(capsys, vault, path)
    assert code == 2
    assert reason in err and "Traceback" not in err and out == ""
    code, out, err = get(capsys, vault, path, "--json")
    assert code == 2
    assert json.loads(out)["text"] == "" and reason in json.loads(out)["error"]


def test_in_vault_symlink_to_memory_file_is_allowed(vault):
    ex = read_excerpt(vault, load_settings(vault), "memory/alias.md", 1, 2)
    assert ex.text == "line 1\nline 2\n"


def test_default_window_and_next_from(vault, capsys):
    code, out, err = get(capsys, vault, "memory/2026-02-15.md", "--json")
    data = json.loads(out)
    assert code == 0
    assert data["text"] == "".join(f"line {i}\n" for i in range(1, 121))
    assert data == {"path": "memory/2026-02-15.md", "text": data["text"], "from": 1,
                    "lines": 120, "truncated": True, "nextFrom": 121}


def test_continue_to_the_end(vault, capsys):
    code, out, _ = get(capsys, vault, "memory/2026-02-15.md", "--from", "250", "--lines", "100",
                       "--json")
    data = json.loads(out)
    assert data["lines"] == 51 and data["truncated"] is False and "nextFrom" not in data
    assert data["text"].endswith("line 300\n")


def test_char_cap_cuts_on_whole_lines(vault):
    ex = read_excerpt(vault, load_settings(vault), "memory/wide.md", 1, 100)
    assert len(ex.text) <= 12_000 and ex.count == 60 and ex.truncated and ex.next_from == 61


def test_single_overlong_line(vault):
    ex = read_excerpt(vault, load_settings(vault), "memory/long.md")
    assert len(ex.text) == 12_000 and ex.truncated and ex.next_from == 2


def test_missing_file_json_is_empty_text(vault, capsys):
    code, out, err = get(capsys, vault, "memory/2030-01-01.md", "--json")
    assert code == 0 and json.loads(out) == {"path": "memory/2030-01-01.md", "text": ""}


def test_missing_file_text_mode_exit_1(vault, capsys):
    code, out, err = get(capsys, vault, "memory/2030-01-01.md")
    assert code == 1 and "no such file" in err and out == ""


def test_text_mode_prints_lines_and_hint(vault, capsys):
    code, out, err = get(capsys, vault, "memory/2026-02-15.md", "--from", "5", "--lines", "2")
    assert code == 0 and out == "line 5\nline 6\n" and "--from 7" in err


def test_memory_md_and_spaces(vault, capsys):
    assert get(capsys, vault, "MEMORY.md")[1] == "# MEMORY\n\n- durable fact\n"
    assert get(capsys, vault, "./memory/decisions/a b.md")[1] == "# A B\n"


def test_memory_only_layout_reads_workspace_memory_md(tmp_path, capsys):
    ws = tmp_path / "ws"
    (ws / "memory" / ".obsidian").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# MEMORY\nws\n")
    (ws / "AGENTS.md").write_text("# AGENTS\n")
    (ws / "memory" / "vaultkit.toml").write_text('memory-dir = "."\n')
    (ws / "memory" / "2026-02-15.md").write_text("# d\n")
    root = ws / "memory"
    assert get(capsys, root, "MEMORY.md")[1] == "# MEMORY\nws\n"
    assert get(capsys, root, "2026-02-15.md")[1] == "# d\n"
    assert get(capsys, root, "../AGENTS.md")[0] == 2


@pytest.mark.parametrize("argv", [["--from", "0"], ["--lines", "0"]])
def test_bad_window(vault, capsys, argv):
    code, _, err = get(capsys, vault, "memory/2026-02-15.md", *argv)
    assert code == 2 and err.startswith("vaultkit: error:")

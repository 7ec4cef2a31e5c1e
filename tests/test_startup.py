"""What a command's start-up costs: the command line builds its parser without importing
what only help output needs, and prints the same help as argparse's own formatter."""

import argparse
import subprocess
import sys

import pytest

from cli_invoke import modules_after_check
from vault_files import age_files
from vaultkit import cli


@pytest.mark.parametrize("columns", [None, "44", "200", "0", "wide"])
@pytest.mark.parametrize("argv", [["check", "--help"], ["--help"], ["search", "--help"]],
                         ids=["check", "all", "search"])
def test_help_is_what_argparse_prints_at_the_same_width(capsys, monkeypatch, columns, argv):
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    cli.main(argv)
    ours = capsys.readouterr().out
    monkeypatch.setattr(cli, "_formatter", lambda: argparse.HelpFormatter)  # the stock one
    cli.main(argv)
    assert ours == capsys.readouterr().out
    assert ours.startswith("usage: vaultkit")


def test_a_usage_error_is_what_argparse_prints(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "50")
    assert cli.main(["check", "--format", "nope", "."]) == 2
    ours = capsys.readouterr().err
    monkeypatch.setattr(cli, "_formatter", lambda: argparse.HelpFormatter)
    cli.main(["check", "--format", "nope", "."])
    assert ours == capsys.readouterr().err and "invalid choice" in ours


def test_building_a_commands_parser_imports_no_shutil():
    """argparse's stock formatter imports shutil (and bz2, lzma) for every option added."""
    probe = ("import sys\nfrom vaultkit import cli\ncli.build_parser('check')\n"
             "cli.build_parser()\nprint(' '.join(sorted(sys.modules)))")
    imported = set(subprocess.run([sys.executable, "-c", probe], capture_output=True,
                                  text=True, check=True).stdout.split())
    assert "vaultkit.cli.commands.check" in imported
    assert not imported & {"shutil", "bz2", "lzma"}, imported & {"shutil", "bz2", "lzma"}


@pytest.mark.parametrize("data", [b"", b"vault", "état\0x".encode("utf-8"), bytes(range(256)) * 9])
def test_the_digests_are_hashlibs(data):
    import hashlib

    from vaultkit.core import digests

    assert digests.sha1(data).hexdigest() == hashlib.sha1(data).hexdigest()
    assert digests.sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()
    incremental = digests.sha1()
    incremental.update(data)
    incremental.update(b"more")
    assert incremental.hexdigest() == hashlib.sha1(data + b"more").hexdigest()


def test_a_warm_check_loads_no_openssl_for_its_digests(make_vault, capsys):
    """hashlib loads OpenSSL's library (~2.5 ms); the state digest, the caches' keys and
    the verified texts use the interpreter's own SHA-1 and SHA-256."""
    root = make_vault({"memory/semantic/a.md": "# A\n[[missing]]\n"})
    age_files(root)  # older than the racy margin: the results are reused
    cli.main(["check", str(root)])
    capsys.readouterr()
    imported = modules_after_check(root, expect="VK501")
    assert not imported & {"hashlib", "_hashlib"}, imported & {"hashlib", "_hashlib"}


def test_a_commit_hook_imports_neither_json_nor_html_nor_pkgutil(make_vault, capsys):
    """The pre-commit hook's fixed cost: JSON (2-3 ms of imports) is only for the fixes'
    quoting and the JSON report, html's entity table only for a Markdown link with an
    ``&`` in its destination, pkgutil only for a rules folder that is not plain sources;
    a hook on a staged note needs none of them."""
    import os

    root = make_vault({"memory/2026-01-02.md": "# Day\n- [[missing]], see [a](b.md)\n",
                       "memory/semantic/b.md": "---\ntags: [x]\n---\n# B\n[[2026-01-02]]\n"})
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    for args in (["init", "-q"], ["add", "-A"]):
        subprocess.run(["git", *args], cwd=root, check=True, env=env, capture_output=True)
    cli.main(["check", str(root)])  # the caches filled, as before a commit
    capsys.readouterr()
    age_files(root)
    with (root / "memory/2026-01-02.md").open("a") as fh:
        fh.write("- one more entry\n")
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, env=env)
    probe = ("import sys, io, contextlib\nfrom vaultkit.cli import main\n"
             "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
             "    main(['check', '--hook', 'memory/2026-01-02.md'])\n"
             "assert 'VK501' in out.getvalue(), out.getvalue()\n"
             "print(' '.join(sorted(sys.modules)))")
    imported = set(subprocess.run([sys.executable, "-c", probe], cwd=root, capture_output=True,
                                  text=True, check=True, env=env).stdout.split())
    assert "vaultkit.vault.parse" in imported  # (the staged note was parsed again)
    assert not imported & {"json", "html", "pkgutil"}, imported & {"json", "html", "pkgutil"}


def test_a_warm_check_imports_no_pkgutil(make_vault, capsys):
    root = make_vault({"memory/semantic/a.md": "# A\n[[missing]]\n"})
    age_files(root)
    cli.main(["check", str(root)])
    capsys.readouterr()
    imported = modules_after_check(root, expect="VK501")
    assert "vaultkit.lint.rules._index" in imported
    assert "pkgutil" not in imported


def _pkgutils(path):
    import pkgutil

    return {i.name for i in pkgutil.iter_modules([str(path)]) if not i.name.startswith("_")}


def test_the_rule_modules_are_those_pkgutil_finds():
    from vaultkit.lint import rules

    assert rules._module_names() == _pkgutils(rules.__path__[0])
    assert len(rules._module_names()) == len(rules._index.RULES)


@pytest.mark.parametrize("extra", [{"sub/__init__.py": ""}, {"native.abi3.so": ""},
                                   {"old.pyc": ""}, {"notes.txt": ""}, {"a.b.py": ""},
                                   {"sub/x.py": ""}, {".py": ""}, {"_private.py": ""}],
                         ids=["package", "extension", "sourceless", "other", "dotted", "folder",
                              "no-stem", "private"])
def test_a_rules_folder_that_is_not_plain_sources_is_listed_by_pkgutil(tmp_path, extra):
    from vaultkit.lint import rules

    for name, text in {"one.py": "", "two.py": "", "__init__.py": "", **extra}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    (tmp_path / "__pycache__").mkdir()
    assert rules._module_names([str(tmp_path)]) == _pkgutils(tmp_path)

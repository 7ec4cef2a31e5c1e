"""`.pre-commit-hooks.yaml`: valid for pre-commit, and every entry is a vaultkit command line."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from vaultkit.cli import build_parser
from vaultkit.lint.rules import by_key

MANIFEST = Path(__file__).resolve().parent.parent / ".pre-commit-hooks.yaml"


@pytest.fixture(scope="module")
def hooks():
    from pre_commit import clientlib  # a test extra

    return {h["id"]: h for h in clientlib.load_manifest(str(MANIFEST))}


# id: (entry, pass_filenames, always_run, types, stages)
EXPECTED = {
    "vaultkit-check": ("vaultkit check --hook", True, True, ["markdown"], []),
    "vaultkit-index": ("vaultkit index --stage", False, True, ["file"], []),
    "vaultkit-colors": ("vaultkit graph --write-colors", False, True, ["file"], []),
    "vaultkit-append-only": ("vaultkit check --hook --select "
                             "journal-append-only,mass-deletion,memory-churn",
                             True, True, ["markdown"], []),
    "vaultkit-audit": ("vaultkit audit", False, True, ["file"], ["pre-push", "manual"]),
}


def test_manifest_ids(hooks):
    assert list(hooks) == list(EXPECTED)


@pytest.mark.parametrize("hook_id", list(EXPECTED))
def test_manifest_entry(hooks, hook_id):
    hook = hooks[hook_id]
    entry, pass_filenames, always_run, types, stages = EXPECTED[hook_id]
    assert hook["entry"] == entry
    assert hook["language"] == "python"
    assert hook["pass_filenames"] is pass_filenames
    assert hook["always_run"] is always_run  # deletions pass no file names; run anyway
    assert hook["types"] == types
    assert hook["stages"] == stages
    assert hook["require_serial"] is True  # one process reads the whole vault
    assert hook["minimum_pre_commit_version"] == "3.2.0"  # stage names pre-push/manual


@pytest.mark.parametrize("hook_id", list(EXPECTED))
def test_manifest_entry_parses_as_a_vaultkit_command(hooks, hook_id):
    argv = shlex.split(hooks[hook_id]["entry"])
    assert argv[0] == "vaultkit"
    args = build_parser().parse_args(argv[1:] + (["x.md"] if hooks[hook_id]["pass_filenames"]
                                                 else []))
    assert callable(args.run)
    select = getattr(args, "select", None)
    if select:
        keys = by_key()
        assert [keys[k].code for k in select.split(",")] == ["VK601", "VK602", "VK603"]


def test_check_hooks_print_warnings(hooks):
    """pre-commit hides a passing hook's output unless it is verbose: warnings must show."""
    assert hooks["vaultkit-check"]["verbose"] and hooks["vaultkit-append-only"]["verbose"]

"""One command line (ruff's conventions), first-week fixes: every command chooses its output
with ``--format`` (alias ``--output-format``) and writes it with ``-o/--output`` (alias
``--output-file``); ``--json`` and ``md`` stay as old spellings; text findings say which are
errors; the small messages a newcomer meets say what is true."""

from __future__ import annotations

import argparse
import json
import subprocess

import pytest

from cli_invoke import invoke
from vaultkit.cli import build_parser
from vaultkit.cli.starter import init_vault


def subparsers():
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return action.choices


def options(sub) -> dict[str, argparse.Action]:
    return {s: a for a in sub._actions for s in a.option_strings}


def test_every_format_option_has_one_spelling_and_its_aliases():
    with_format = 0
    for name, sub in subparsers().items():
        opts = options(sub)
        assert "--json" not in opts or opts["--json"].dest == "format", name
        if "--format" not in opts:
            assert "--output-format" not in opts and "--json" not in opts, name
            continue
        with_format += 1
        assert opts["--format"] is opts["--output-format"], name
        if "json" in opts["--format"].choices:
            assert opts["--json"].dest == "format" and opts["--json"].const == "json", name
        # and every command that prints a report writes it with -o/--output
        assert opts["-o"] is opts["--output"] is opts["--output-file"], name
        assert opts["-o"].dest == "output", name
    assert with_format >= 11
    # the report's -o is the same option
    report = options(subparsers()["report"])
    assert report["-o"] is report["--output"] is report["--output-file"]


@pytest.fixture
def starter(tmp_path):
    root = tmp_path / "vault"
    init_vault(root)
    return root


@pytest.mark.parametrize("argv", [["distill", "--format", "md"],
                                  ["distill", "--format", "markdown"],
                                  ["distill", "--output-format", "md"]])
def test_md_is_the_old_spelling_of_markdown(starter, argv):
    code, out, _ = invoke(argv, starter)
    assert code == 0 and out == invoke(["distill"], starter)[1] and out.startswith("#")


@pytest.mark.parametrize("command", ["search", "get", "log", "archive", "recover", "audit",
                                     "history", "rules"])
def test_json_and_format_json_are_the_same(command, starter, tmp_path):
    args = {"search": ["memory"], "get": ["MEMORY.md"], "log": ["--date", "2026-01-02", "x y"],
            "archive": ["--dry-run"], "recover": ["--all", "--dry-run"]}.get(command, [])
    subprocess.run(["git", "init", "-q"], cwd=starter, check=True)
    outputs = []
    for spelling in (["--json"], ["--format", "json"], ["--output-format", "json"]):
        code, out, err = invoke([command, *args, *spelling], starter)
        assert code in (0, 1), err
        outputs.append(json.loads(out))
    if command != "log":  # (each log run appends an entry)
        assert outputs[0] == outputs[1] == outputs[2]


@pytest.mark.parametrize("command", ["audit", "history", "rules", "distill", "search"])
def test_output_writes_the_file_and_nothing_to_standard_output(command, starter):
    args = ["memory"] if command == "search" else []
    subprocess.run(["git", "init", "-q"], cwd=starter, check=True)
    code, shown, _ = invoke([command, *args, "--format", "json"], starter)
    for spelling in ("-o", "--output", "--output-file"):
        target = starter.parent / f"{command}{spelling}.json"
        code2, out, err = invoke([command, *args, "--format", "json", spelling, str(target)],
                                 starter)
        assert (code2, out) == (code, ""), err
        assert json.loads(target.read_text(encoding="utf-8")) == json.loads(shown)


def test_output_into_a_missing_folder_is_one_clear_error(starter):
    code, out, err = invoke(["rules", "-o", str(starter / "no" / "such" / "rules.txt")], starter)
    assert code == 2 and out == ""
    assert "does not exist; create it first" in err and "Traceback" not in err


def test_text_findings_say_which_are_errors(make_vault):
    vault = make_vault({"memory/2026-3-9.md": "# 2026-03-09\n",
                        "memory/people/ada.md": "---\ntype: person\nname: Ada\n---\n# Ada\n\n"
                                                "See [[nobody]].\n"})
    code, out, _ = invoke(["check", "--no-cache", "--select", "journal-filename,broken-link"],
                          vault)
    assert code == 1
    assert "VK102 journal-filename error: 'memory/2026-3-9.md' is not zero-padded" in out
    assert "VK501 broken-link warning: no note 'nobody'" in out


def test_get_a_bootstrap_file_names_no_file_that_does_not_exist(starter):
    code, _, err = invoke(["get", "AGENTS.md"], starter)
    assert code == 2
    assert "memory/AGENTS.md" not in err
    assert "AGENTS.md is a file of the vault" in err
    # a path written from inside memory/ names that file (it was refused with a "did you
    # mean memory/INDEX.md?")
    code, out, err = invoke(["get", "INDEX.md"], starter / "memory")
    assert code == 0 and out.startswith("# "), err


def test_init_in_an_existing_repository_does_not_say_git_init(tmp_path):
    repo = tmp_path / "workspace"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    (repo / "notes.md").write_text("# Notes\n", encoding="utf-8")
    code, out, _ = invoke(["init", "."], repo)
    assert code == 0
    assert "git init" not in out
    assert "git add . && git commit" in out
    # a vault in a subfolder of a repository is told which repository it commits into
    code, out, _ = invoke(["init", "sub"], repo)
    assert code == 0 and "git init" not in out
    assert f"into the repository at {repo.resolve()}" in out
    # a folder outside any repository still gets the git init line
    fresh = tmp_path / "fresh"
    code, out, _ = invoke(["init", str(fresh)], tmp_path)
    assert code == 0 and "git init && git add -A" in out


def test_search_takes_the_vault_from_an_option_never_from_a_bare_word(tmp_path):
    here = tmp_path / "here"
    init_vault(here)
    init_vault(here / "mq")
    (here / "mq" / "memory" / "semantic").mkdir(parents=True, exist_ok=True)
    (here / "mq" / "memory" / "semantic" / "queue.md").write_text(
        "# Queue\n\nThe zebrafish queue runs nightly.\n", encoding="utf-8")
    # `search mq zebrafish`: 'mq' is a word, and the note says how to mean the folder
    code, out, err = invoke(["search", "--format", "json", "mq", "zebrafish"], here)
    assert code == 0 and json.loads(out)["results"] == []
    assert "'mq' is searched for as a word" in err and "-C mq" in err
    for argv in (["-C", "mq", "zebrafish"], ["--vault", "mq", "zebrafish"],
                 ["./mq", "zebrafish"]):
        code, out, err = invoke(["search", "--format", "json", *argv], here)
        assert code == 0, err
        assert [r["path"] for r in json.loads(out)["results"]] == ["memory/semantic/queue.md"]
    code, _, err = invoke(["search", "-C", "nowhere", "x"], here)
    assert code == 2 and "--vault nowhere: no such folder" in err


def test_index_stage_outside_a_commit_and_with_check(starter, monkeypatch):
    monkeypatch.delenv("GIT_INDEX_FILE", raising=False)
    code, _, err = invoke(["index", "--stage", "--check"], starter)
    assert code == 2 and "--stage and --check contradict each other" in err
    (starter / "memory" / "semantic").mkdir(parents=True, exist_ok=True)
    (starter / "memory" / "semantic" / "queue.md").write_text("# Queue\n\nNightly.\n",
                                                              encoding="utf-8")
    code, _, err = invoke(["index", "--stage"], starter)  # no commit being made: written only
    assert code == 0 and "rewritten, not staged: no commit is being made" in err
    assert "queue" in (starter / "memory" / "INDEX.md").read_text(encoding="utf-8")


def test_get_and_log_take_the_vault_from_an_option_too(tmp_path):
    vault = tmp_path / "vault"
    init_vault(vault)
    code, out, err = invoke(["get", "-C", str(vault), "MEMORY.md", "--lines", "1"], tmp_path)
    assert code == 0 and out.startswith("#"), err
    code, _, err = invoke(["get", "-C", str(vault), str(vault), "MEMORY.md"], tmp_path)
    assert code == 2 and "-C names the vault" in err
    # `log -C DIR TEXT`: a text that happens to name a folder here is still the text
    (tmp_path / "notes").mkdir()
    code, out, err = invoke(["log", "-C", str(vault), "--date", "2026-01-02", "--format", "json",
                             "notes"], tmp_path)
    assert code == 0, err
    assert json.loads(out)["path"] == "memory/2026-01-02.md"
    assert "notes" in (vault / "memory" / "2026-01-02.md").read_text(encoding="utf-8")
    code, _, err = invoke(["log", "-C", str(tmp_path / "nope"), "x"], tmp_path)
    assert code == 2 and "--vault" in err and "no such folder" in err


def test_options_may_come_between_a_commands_positionals(tmp_path):
    vault = tmp_path / "vault"
    init_vault(vault)
    # `log PATH --title T TEXT`: argparse alone took PATH and TEXT at PATH and refused TEXT
    code, out, err = invoke(["log", str(vault), "--title", "Standup", "--date", "2026-01-02",
                             "--time", "09:15", "--format", "json", "moved the demo"], tmp_path)
    assert code == 0, err
    journal = (vault / "memory" / "2026-01-02.md").read_text(encoding="utf-8")
    assert "09:15 — Standup: moved the demo" in journal
    code, out, err = invoke(["search", str(vault), "--format", "json", "--max-results", "1",
                             "demo"], tmp_path)
    assert code == 0, err
    assert [r["path"] for r in json.loads(out)["results"]] == ["memory/2026-01-02.md"]
    # after `--` every word is a positional, options' spellings too
    code, out, err = invoke(["search", "-C", str(vault), "--format", "json", "--",
                             "--max-results"], tmp_path)
    assert code == 0 and json.loads(out)["results"] == [], err


def test_one_command_builds_and_imports_only_its_own_options():
    # the commit hook runs `vaultkit check ...`: the other commands' modules (and their
    # options) are neither imported nor built; the whole command line still has them all
    import sys

    code = ("import sys; from vaultkit.cli import build_parser, main\n"
            "code = main(['check', '--help'])\n"
            "loaded = sorted(m for m in sys.modules if m.startswith('vaultkit.cli.commands.'))\n"
            "print(code, loaded)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.splitlines()[-1] == "0 ['vaultkit.cli.commands.check']"
    assert "--hook" in out  # check's own help is whole
    only = build_parser("check")
    action = next(a for a in only._actions if isinstance(a, argparse._SubParsersAction))
    assert list(action.choices) == ["check"]
    assert {"check", "search", "graph", "mcp"} <= set(subparsers())


@pytest.mark.parametrize("repository", [None, "SAME", "PARENT"])
@pytest.mark.parametrize("adopting", [False, True])
def test_every_next_step_is_a_shell_line_that_parses(tmp_path, repository, adopting):
    """Pasted into bash, each line runs as written: no quote left open (an apostrophe inside
    a single-quoted commit message once broke the `git add` line)."""
    target = tmp_path / "vault"
    where = {None: None, "SAME": str(target), "PARENT": str(tmp_path)}[repository]
    from vaultkit.cli.commands.init import next_steps

    for line in next_steps(target, git_done=False, adopting=adopting, repository=where):
        result = subprocess.run(["bash", "-n", "-c", line], capture_output=True, text=True)
        assert result.returncode == 0, (line, result.stderr)


def test_an_unknown_option_is_told_in_its_commands_usage(starter):
    # argparse's top level told it as `usage: vaultkit [-h] [-V] COMMAND ...`, listing none
    # of the command's options
    code, out, err = invoke(["index", "--format", "json"], starter)
    assert code == 2 and out == ""
    assert err.startswith("usage: vaultkit index ")
    assert err.splitlines()[-1] == "vaultkit index: error: unrecognized arguments: --format"
    # `-C DIR` as git takes it: the commands that take the vault as PATH say so
    code, _, err = invoke(["check", "-C", str(starter)], starter)
    assert code == 2 and err.splitlines()[-1] == (
        "vaultkit check: error: unrecognized arguments: -C (name the vault as PATH, "
        "without -C: vaultkit check DIR)")
    code, _, err = invoke(["rules", "-C", "x"], starter)
    assert code == 2
    assert err.splitlines()[-1] == "vaultkit rules: error: unrecognized arguments: -C x"
    code, _, err = invoke(["--bogus"], starter)
    assert code == 2 and err.splitlines()[-1] == "vaultkit: error: unrecognized arguments: --bogus"


@pytest.mark.parametrize("watch", [[], ["--watch"]])
def test_one_missing_path_is_one_error_line(starter, watch):
    code, out, err = invoke(["check", *watch, "nope"], starter)
    assert code == 2 and out == ""
    assert err == "vaultkit: error: nope: no such file or folder\n"


@pytest.mark.parametrize("query", ["", "  "])
def test_an_empty_query_is_an_error_not_no_results(starter, query):
    code, out, err = invoke(["search", query], starter)
    assert code == 2 and out == ""
    assert err == "vaultkit: error: nothing to search for: give words after the PATH\n"


@pytest.mark.parametrize("argv", [["Deployed", "the", "fix"], [".", "Deployed", "the", "fix"],
                                  ["-C", ".", "Deployed", "the", "fix"],
                                  ["-C", ".", "Deployed", "the fix"],
                                  ["--title", "T", "Deployed", "the", "fix"]])
def test_log_of_an_unquoted_entry_says_to_quote_it(starter, argv):
    # argparse said `unrecognized arguments: fix`, as if an option were wrong
    before = sorted((p, p.read_bytes()) for p in (starter / "memory").glob("*.md"))
    code, out, err = invoke(["log", *argv], starter)
    assert code == 2 and out == ""
    assert err == ("vaultkit: error: the entry is one argument: quote its words "
                   "('Deployed the fix'); nothing written\n")
    assert sorted((p, p.read_bytes()) for p in (starter / "memory").glob("*.md")) == before


def test_log_of_two_unquoted_words_names_both_readings(starter):
    code, out, err = invoke(["log", "Deployed", "fix"], starter)
    assert code == 2 and out == ""
    assert err == ("vaultkit: error: Deployed: no such folder (PATH comes before the text); "
                   "an entry of several words is one argument: quote them ('Deployed fix')\n")
    code, _, err = invoke(["log", "./nope", "fix"], starter)  # written as a path: a path
    assert code == 2 and err == ("vaultkit: error: ./nope: no such folder (PATH comes before "
                                 "the text: vaultkit log PATH TEXT)\n")


def test_get_and_promote_take_a_file_named_from_the_current_folder(tmp_path):
    vault = tmp_path / "demo"
    init_vault(vault)
    journal = vault / "memory" / "2026-01-02.md"
    journal.write_text("# 2026-01-02\n\n### 09:00 — Webhooks\n\n- payment webhooks are "
                       "verified with the HMAC header\n- the secret rotates monthly\n",
                       encoding="utf-8")
    # the path `search` prints from beside the vault: refused as "not in the memory set"
    code, out, err = invoke(["get", "demo", "demo/memory/2026-01-02.md", "--lines", "1"],
                            tmp_path)
    assert code == 0 and out == "# 2026-01-02\n", err
    code, out, err = invoke(["promote", "demo", "demo/memory/2026-01-02.md:5", "--dry-run"],
                            tmp_path)
    assert code == 0 and "would promote memory/2026-01-02.md:5" in out, err
    # from inside memory/, the shell completes the journal's name alone
    code, out, err = invoke(["get", "2026-01-02.md", "--lines", "1"], vault / "memory")
    assert code == 0 and out == "# 2026-01-02\n", err
    # a vault path still wins, and `..` is refused as before
    code, out, err = invoke(["get", "memory/2026-01-02.md", "--lines", "1"], vault / "memory")
    assert code == 0 and out == "# 2026-01-02\n", err
    code, _, err = invoke(["get", "../MEMORY.md"], vault / "memory")
    assert code == 2 and "'..' is refused" in err


@pytest.mark.parametrize("argv, said", [
    (["snapshot", "nope"], "nope: no such file or folder"),
    (["snapshot", "--report", "nope"], "nope: no such file or folder"),
    (["watch", "nope", "--service", "cron"], "nope: no such file or folder"),
    (["search", "./nope", "words"], "./nope: no such folder (vaultkit search [PATH] QUERY)"),
])
def test_a_missing_vault_folder_is_said_so_not_not_a_vault(tmp_path, argv, said):
    # they said "nope: not a vault (...)" (search: the current folder's), as for a folder
    # without notes
    code, out, err = invoke(argv, tmp_path)
    assert code == 2 and out == ""
    assert err == f"vaultkit: error: {said}\n"


def test_help_as_a_command(tmp_path):
    # `vaultkit help` was refused as an invalid command
    code, out, err = invoke(["help"], tmp_path)
    assert code == 0 and out.startswith("usage: vaultkit [-h] [-V] COMMAND ..."), err
    code, out, err = invoke(["help", "check"], tmp_path)
    assert code == 0 and out.startswith("usage: vaultkit check "), err
    assert invoke(["help", "check"], tmp_path)[1] == invoke(["check", "--help"], tmp_path)[1]
    code, out, err = invoke(["help", "nope"], tmp_path)
    assert code == 2 and "invalid choice: 'nope'" in err

"""The output boundary (vaultkit/vault/outbound.py): nothing leaves vaultkit that must not.

Credentials and control characters are planted in every input a message can quote (an
entry's title, a link's target, property values, a file name, a heading, a commit's author
and subject), and every output is searched for them: the four report formats, the baseline
file, the results cache under ``.vaultkit/``, MCP results, ``history``, ``recover``,
``search`` and ``get``. The planted values are built at run time and test ids never show
them (ids are positions).
"""

from __future__ import annotations

import json
import marshal
import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from vaultkit.cli import main
from vaultkit.vault import outbound

# Well-formed credentials the detector recognises without a label (made-up values, random
# alphabets), and one a label makes a credential. Each is searched by its middle part:
# masks keep a public prefix and the last four characters.
CREDENTIALS = [
    "ghp_" + "VL1frnqW9cJ8cEia2gt48upQuDT7DchPVMjF",
    "xai-" + "q6T8HB1einblr2X2Bx3FSwf65pkq5HJVnnNa3GBmJdrqa7CSPamjLtxkuC6CK4kvO1e4NB96DYhv8Taa",
    "glpat-" + "GcGmVvvxwjTnRfkghJ0K",
    "npm_" + "yrPeiuPa5KngXbRJBjdkVMue5VWS4gHfjDpx",
    "5145683452" + ":AAbeuEchsVEoR7TJYHSDATOCN1D61_k7U4O",
    "sk-sp-" + "Kren6kHUN3mton096MgErLVtURsJF2dG",
]
LABELLED = "db password: " + "Kq8vT2#pLm9xR"
CONTROLS = ["\x1b]52;c;aGk=\x07", "\x1b[2J", "\x1b[8m", "\x9b31m", "\u202e", "\x07", "\r"]


def _core(credential: str) -> str:
    """The part of a credential no output may show."""
    value = credential.split(": ", 1)[-1]
    return value[6:-5] if len(value) > 16 else value[:-1]


def _leaks(text: str, planted: list[str], controls: list[str]) -> list[str]:
    found = [f"credential {planted.index(c)}" for c in planted if _core(c) in text]
    found += [f"control U+{ord(c[0]):04X}" for c in controls if c[0] in text]
    return found


def _json_strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [k, *_json_strings(v)]]
    if isinstance(value, list):
        return [s for v in value for s in _json_strings(v)]
    return []


def _vault(root: Path, title: str, target: str, value: str, name: str, heading: str) -> Path:
    files = {
        ".obsidian/app.json": "{}",
        "AGENTS.md": "# Agents\n",
        "MEMORY.md": f"# Memory\n\n## approved_durable_entries\n- see [[{target}]]\n",
        "memory/2026-02-14.md": f"# 2026-02-14\n\n### 10:00 — {title}\n\nshort\n",
        "memory/decisions/choice.md": f"---\ntype: {value}\ndate: {value}\n---\n# Choice\n\n"
                                      f"## {heading}\n\nbody\n",
        f"memory/semantic/{name}.md": "# Odd name\n\nalerts digest [[nowhere]]\n",
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def _file_name(credential: str, control: str) -> str:
    bad = set("/\0\r\n")
    return "note " + "".join(c for c in control + credential.replace(":", "-") if c not in bad)


def _outputs(root: Path, capsys) -> dict[str, str]:
    """Every report format, the baseline and the results cache, as text."""
    out = {}
    for fmt in ("text", "json", "github", "sarif"):
        main(["check", str(root), "--format", fmt])
        out[f"check --format {fmt}"] = capsys.readouterr().out
    main(["check", str(root), "--write-baseline"])
    captured = capsys.readouterr()
    out["check --write-baseline (stderr)"] = captured.err
    out["baseline file"] = (root / "vaultkit-baseline.json").read_text(encoding="utf-8")
    main(["check", str(root), "-o", str(root / "report.txt"), "--no-baseline"])
    capsys.readouterr()
    out["check -o FILE"] = (root / "report.txt").read_text(encoding="utf-8")
    return out


def _results_cache_messages(root: Path) -> str:
    """The messages the results cache in the vault's store keeps (its paths are the notes'
    own names, as the parse cache beside it keeps the notes: see docs/security.md)."""
    from parse_store import StoreEntry

    cache = StoreEntry(root, "results")
    assert cache.is_file(), "the results cache was written"
    results = marshal.loads(cache.read_bytes())[2]
    return "\n".join(str(t[6]) for found in results.values() for t in found)


def _mcp_results(root: Path) -> list[str]:
    from vaultkit.cli.mcp_server import VaultSession, _result

    session = VaultSession(root)
    try:
        out = []
        for result in (session.vault_check({}),
                       session.memory_search({"query": "alerts digest"}),
                       session.memory_get({"path": "memory/2026-02-14.md"})):
            wire = _result(result)
            out.append(wire.content[0].text)
            out.append("\n".join(_json_strings(wire.structured_content)))
        return out
    finally:
        session.close()


@settings(max_examples=6, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate],
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(picks=st.lists(st.sampled_from(range(len(CREDENTIALS))), min_size=5, max_size=5),
       controls=st.lists(st.sampled_from(CONTROLS), min_size=5, max_size=5),
       labelled=st.booleans())
def test_no_output_shows_a_planted_credential_or_control_character(
        tmp_path_factory, capsys, picks, controls, labelled):
    planted = [CREDENTIALS[i] for i in picks]
    if labelled:
        planted[0] = LABELLED  # recognised by its label: in the title, quoted with it
    title = f"deploy {controls[0]} {planted[0]}"
    target = f"{planted[1]}{controls[1]}"
    value = f"{planted[2]}"
    name = _file_name(planted[3], controls[3])
    heading = f"Context {controls[4]} {planted[4]}"
    root = _vault(tmp_path_factory.mktemp("vault"), title, target, value, name, heading)
    used_controls = [c for c in controls if c != controls[2]] or controls
    planted_values = [p if p != LABELLED else LABELLED for p in planted]
    leaks = {}
    for where, text in _outputs(root, capsys).items():
        found = _leaks(text, planted_values, used_controls)
        if where in ("check --format json", "check --format sarif", "baseline file"):
            data = json.loads(text)  # still JSON
            found += _leaks("\n".join(_json_strings(data)), planted_values, used_controls)
        if found:
            leaks[where] = found
    found = _leaks(_results_cache_messages(root), planted_values, used_controls)
    if found:
        leaks["results cache messages"] = found
    for i, text in enumerate(_mcp_results(root)):
        found = _leaks(text, planted_values, used_controls)
        if found:
            leaks[f"MCP result {i}"] = found
    assert leaks == {}


# -- history, recover, search: authors, subjects and file names from git ------------------

def _git(root: Path, *args: str, env: dict | None = None) -> None:
    full = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(root),
            "GIT_AUTHOR_EMAIL": "agent@example.invalid",
            "GIT_COMMITTER_NAME": "cron", "GIT_COMMITTER_EMAIL": "cron@example.invalid",
            "GIT_AUTHOR_DATE": "2026-02-15T03:00:00", "GIT_COMMITTER_DATE": "2026-02-15T03:00:00",
            **(env or {})}
    subprocess.run(["git", "-C", str(root), *args], check=True, env=full, capture_output=True)


@pytest.mark.parametrize("pick", range(3), ids=lambda i: f"case{i}")
def test_history_recover_and_search_neutralise_and_mask_what_git_holds(tmp_path, capsys, pick):
    credential = CREDENTIALS[pick]
    control = CONTROLS[pick]
    root = tmp_path / "vault"
    (root / ".obsidian").mkdir(parents=True)
    journal = root / "memory" / "2026-02-14.md"
    journal.parent.mkdir()
    lines = [f"- step {i}: rotated the alerts digest for service {i}" for i in range(10)]
    journal.write_text("# 2026-02-14\n\n### 10:00 — Work\n" + "\n".join(lines) + "\n")
    odd = root / "memory" / "semantic" / f"{_file_name(credential, control)}.md"
    odd.parent.mkdir()
    odd.write_text("# Odd\n\n- the alerts digest is sent at nine\n")
    (root / "AGENTS.md").write_text("# Agents\n")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "backup: first", env={"GIT_AUTHOR_NAME": "agent"})
    journal.write_text("# 2026-02-14\n\n### 03:00 — Summary\n- done\n")
    odd.unlink()
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", f"nightly {control} {credential}",
         env={"GIT_AUTHOR_NAME": f"cron{control} {credential}"})
    odd.write_text("# Odd\n\n- the alerts digest is sent at nine\n")
    outputs = {}
    for argv in (["history", str(root)], ["history", str(root), "--format", "json"],
                 ["recover", str(root), "--all", "--dry-run"],
                 ["recover", str(root), "--all", "--dry-run", "--json"],
                 ["search", "alerts", "digest", "--root", str(root), "--min-score", "0"],
                 ["search", "alerts", "digest", "--root", str(root), "--min-score", "0",
                  "--json"]):
        main(argv)
        captured = capsys.readouterr()
        outputs[" ".join(argv[:1] + argv[2:])] = captured.out + captured.err
    assert "journal-rewrite" in outputs["history"]  # the event is there, quoted safely
    leaks = {where: found for where, text in outputs.items()
             if (found := _leaks(text, [credential], [control]))}
    assert leaks == {}
    for where in ("history --format json", ):
        json.loads(outputs[where])


# -- the boundary's own contract -------------------------------------------------------------

def test_clean_masks_and_neutralises_and_is_idempotent():
    text = f"a {CREDENTIALS[0]} b\x1b[2J c\u202e d\r\ne\rf"
    once = outbound.clean(text)
    assert CREDENTIALS[0] not in once and "ghp_…VMjF" in once
    assert "\x1b" not in once and "\u202e" not in once and "\\u001b[2J" in once
    assert "d\r\ne\\rf" in once  # a line break is kept, a lone CR is not
    assert outbound.clean(once) == once
    assert outbound.clean_line("a\nb\tc") == "a\\nb\\tc"


@given(st.lists(st.sampled_from(list("ab:=_- \n\t\x1b\x9b\u202e[]0;J") + CREDENTIALS
                                + ["password: ", "\x1b[2J", "\x1b]0;"]),
                max_size=30).map("".join))
@settings(max_examples=300, deadline=None)
def test_cleaning_twice_changes_nothing(text):
    for clean in (outbound.clean, outbound.clean_line):
        once = clean(text)
        assert clean(once) == once
        assert not any(c in once for c in "\x1b\x9b\u202e")


def test_a_label_whose_value_holds_a_token_is_masked_once():
    """The label's value and the token overlap: masked as one span (this raised)."""
    text = f"password: :{CREDENTIALS[0]}"
    assert _core(CREDENTIALS[0]) not in outbound.clean(text)
    shown = outbound.clean(f"\x9b:{CREDENTIALS[0]}")  # a token only once the control is shown
    assert _core(CREDENTIALS[0]) not in shown and outbound.clean(shown) == shown


def test_every_one_of_many_credentials_on_one_line_is_masked():
    """The detector reports 64 a line; the boundary masks the rest as well."""
    line = " ".join([CREDENTIALS[0]] * 150)
    assert _core(CREDENTIALS[0]) not in outbound.clean(line)


def test_the_terminal_keeps_vaultkits_own_colours_only():
    text = "\x1b[1mbold\x1b[0m \x1b[31mred\x1b[0m \x1b[8mhidden\x1b[0m \x1b]0;title\x07"
    shown = outbound.terminal(text)
    assert shown.startswith("\x1b[1mbold\x1b[0m \x1b[31mred\x1b[0m ")
    assert "\x1b[8m" not in shown and "\x1b]0;" not in shown


def test_json_output_stays_json_when_a_value_is_masked():
    data = {"m": 'password: Xy12ab"cd and ' + CREDENTIALS[1], "\x9bkey": ["\x1b"]}
    text = outbound.dumps(data)
    back = json.loads(text)
    assert _core(CREDENTIALS[1]) not in text
    assert not any(c in s for s in _json_strings(back) for c in "\x1b\x9b")
    # the command line's stream masks inside JSON text without breaking it
    assert json.loads(outbound.terminal(json.dumps(data, ensure_ascii=False)))


def test_a_rule_cannot_set_a_raw_message():
    from vaultkit.lint.diagnostics import Diagnostic

    d = Diagnostic("r", "VK000", "error", "x.md", 1, 1, "ok")
    d.message = f"quoted \x1b[2J {CREDENTIALS[2]}"
    assert "\x1b" not in d.message
    from vaultkit.lint.report import render

    for fmt in ("text", "json", "github", "sarif"):
        assert _core(CREDENTIALS[2]) not in render([d], fmt)


def test_a_value_known_only_by_its_label_is_masked_where_a_rule_quotes_it(make_vault, capsys):
    """`type-mismatch` quotes a property's value whole: a password there is recognised by
    its label in the note, not in the message; the note's own findings mask it."""
    root = make_vault({"AGENTS.md": "# Agents\n",
                       "memory/decisions/x.md": "---\ntype: password=Kq8vT2#pLm9xR\n---\n# X\n"})
    main(["check", str(root), "--select", "type-mismatch", "--format", "json"])
    out = capsys.readouterr().out
    assert json.loads(out) and "Kq8vT2#pLm9xR" not in out


# -- item 10: a hostile baseline, a hostile layer name --------------------------------------

@pytest.mark.parametrize("body", [
    "[" * 100_000 + "]" * 100_000,
    '{"vaultkit-baseline": 1, "findings": [{"path": "a.md", "rule": "r", "code": "c", '
    '"fingerprint": "f", "count": Infinity}]}',
    '{"vaultkit-baseline": 1, "findings": [{"path": "a.md", "rule": "r", "code": "c", '
    '"fingerprint": "f", "count": NaN}]}',
    '{"vaultkit-baseline": 1, "findings": [{"path": "a.md", "rule": "r", "code": "c", '
    '"fingerprint": "f", "count": 1.5}]}',
    '{"vaultkit-baseline": 1, "findings": [{"path": "a.md", "rule": "r", "code": "c", '
    '"fingerprint": "f", "count": -3}]}',
    '{"vaultkit-baseline": 1, "findings": [["a.md"]]}',
    '{"vaultkit-baseline": 1, "findings": ["a.md"]}',
    '{"vaultkit-baseline": 1, "findings": [{"path": {"x": 1}, "rule": "r", "code": "c", '
    '"fingerprint": "f"}]}',
    '{"vaultkit-baseline": 1, "findings": [{"path": "a.md", "rule": "r", "code": "c", '
    '"fingerprint": "f", "message": ["x"]}]}',
], ids=["deep", "infinity", "nan", "float", "negative", "list-item", "string-item",
        "object-path", "list-message"])
def test_a_hostile_baseline_is_a_config_error(make_vault, capsys, body):
    root = make_vault({"AGENTS.md": "# Agents\n", "MEMORY.md": "# Memory\n"})
    (root / "vaultkit-baseline.json").write_text(body)
    assert main(["check", str(root)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("vaultkit: error: ") and "internal error" not in err
    assert err.count("\n") == 1 and "vaultkit-baseline.json" in err


def test_a_layer_name_with_dollars_is_drawn_as_text(make_vault, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    pytest.importorskip("mistune")
    root = make_vault({
        "AGENTS.md": "# Agents\n", "MEMORY.md": "# Memory\n",
        "vaultkit.toml": '[[layers]]\nname = "bad $\\\\nosuch{x$ layer"\npaths = ["notes/**"]\n',
        "notes/a.md": "# A\n"})
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "first", env={"GIT_AUTHOR_NAME": "agent"})
    out = tmp_path / "report.html"
    code = main(["report", str(root), "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 0, err
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "bad $\\nosuch{x$ layer" in page


def test_a_report_is_scanned_for_credentials_once(make_vault, monkeypatch, capsys):
    """The report masks its text and the terminal's writer masks what it writes: the same
    string, masked already (masking is idempotent), is not scanned a second time."""
    import vaultkit.vault.secretscan as secretscan
    from vaultkit.cli import main

    files = {f"memory/semantic/secret-{i}.md": f"# S{i}\n[[missing-{i}]]\n" for i in range(80)}
    root = make_vault(files)
    scanned = []
    real = secretscan.scan_text
    monkeypatch.setattr(secretscan, "scan_text",
                        lambda text, *a, **k: scanned.append(len(text)) or real(text, *a, **k))
    main(["check", str(root), "--select", "broken-link"])
    out = capsys.readouterr().out
    assert out.count("broken-link") == 80
    report = [n for n in scanned if n > 4096]
    assert len(report) == 1, scanned

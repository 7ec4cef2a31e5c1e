"""`vaultkit check --baseline`: adopting vaultkit on a vault that already has findings."""

from __future__ import annotations

import json

import pytest

from vaultkit.cli import main
from vaultkit.cli.starter import init_vault

LEGACY_DECISION = ("---\ntype: decision\ndate: 2026-11-0{n}\nstatus: active\n---\n"
                   "# Decision {n}\n\nWe decided {n} without writing down why.\n")


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def legacy(tmp_path):
    root = tmp_path / "ws"
    init_vault(root)
    for n in range(1, 4):
        (root / f"memory/decisions/d{n}.md").write_text(LEGACY_DECISION.format(n=n))
    (root / "memory/semantic").mkdir(exist_ok=True)
    (root / "memory/semantic/notes.md").write_text(
        "# Notes\n\nSee [[nowhere]] and [[nowhere]].\n")
    return root


def baseline_of(root):
    return json.loads((root / "vaultkit-baseline.json").read_text())


def test_write_baseline_hides_every_current_finding(legacy, capsys):
    code, out, _ = run(capsys, "check", str(legacy), "--select", "missing-section,broken-link",
                       "--fail-on", "warning")
    assert code == 1 and "Found 8 findings" in out
    code, out, err = run(capsys, "check", str(legacy), "--write-baseline")
    assert code == 0 and "All checks passed!" in out
    assert "recorded" in err and "vaultkit-baseline.json" in err
    data = baseline_of(legacy)
    assert data["vaultkit-baseline"] == 1
    rules = {(f["path"], f["rule"], f["count"]) for f in data["findings"]}
    assert ("memory/semantic/notes.md", "broken-link", 2) in rules  # two identical links
    code, out, _ = run(capsys, "check", str(legacy))
    assert code == 0 and "All checks passed!" in out and "more in the baseline" in out
    code, out, _ = run(capsys, "check", str(legacy), "--no-baseline",
                       "--select", "missing-section", "--fail-on", "warning")
    assert code == 1 and "Found 6 findings" in out


def test_a_new_finding_is_reported_beside_the_baselined_ones(legacy, capsys):
    run(capsys, "check", str(legacy), "--write-baseline")
    (legacy / "memory/decisions/d4.md").write_text(LEGACY_DECISION.format(n=4))
    code, out, _ = run(capsys, "check", str(legacy), "--select", "missing-section",
                       "--fail-on", "warning")
    assert code == 1
    assert "memory/decisions/d4.md" in out and "d1.md" not in out
    assert "Found 2 findings" in out


def test_a_third_copy_of_a_baselined_finding_is_new(legacy, capsys):
    run(capsys, "check", str(legacy), "--write-baseline")
    path = legacy / "memory/semantic/notes.md"
    path.write_text(path.read_text() + "And [[nowhere]] once more.\n")
    code, out, _ = run(capsys, "check", str(legacy), "--select", "broken-link")
    assert out.count("VK501 broken-link") == 1


def test_findings_survive_lines_moving(legacy, capsys):
    run(capsys, "check", str(legacy), "--write-baseline")
    path = legacy / "memory/semantic/notes.md"
    path.write_text("# Notes\n\nA new first paragraph.\n\nAnother one.\n\n"
                    "See [[nowhere]] and [[nowhere]].\n")
    code, out, _ = run(capsys, "check", str(legacy), "--select", "broken-link")
    assert code == 0 and "All checks passed!" in out


def test_only_shrink_baseline_shrinks_the_baseline_when_findings_are_fixed(legacy, capsys):
    run(capsys, "check", str(legacy), "--write-baseline")
    committed = (legacy / "vaultkit-baseline.json").read_bytes()
    before = sum(f["count"] for f in baseline_of(legacy)["findings"])
    (legacy / "memory/decisions/d2.md").write_text(
        LEGACY_DECISION.format(n=2) + "\n## Context\nWhy.\n\n## Decision\nWhat.\n")
    # a run on some paths, a hook, and a plain whole-vault run (CI) only say so: the
    # committed file never changes under them
    code, _, err = run(capsys, "check", str(legacy / "memory/decisions"))
    assert "2 baselined findings are fixed" in err
    code, out, err = run(capsys, "check", str(legacy))
    assert code == 0 and "2 baselined findings are fixed; `vaultkit check --shrink-baseline` " \
        "removes them" in err
    assert (legacy / "vaultkit-baseline.json").read_bytes() == committed
    code, out, err = run(capsys, "check", str(legacy), "--shrink-baseline")
    assert code == 0 and "2 fixed findings removed from the baseline" in err
    after = baseline_of(legacy)["findings"]
    assert sum(f["count"] for f in after) == before - 2
    assert not any(f["path"] == "memory/decisions/d2.md" and f["rule"] == "missing-section"
                   for f in after)
    # the fixed finding coming back is new again
    (legacy / "memory/decisions/d2.md").write_text(LEGACY_DECISION.format(n=2))
    code, out, _ = run(capsys, "check", str(legacy), "--select", "missing-section",
                       "--fail-on", "warning")
    assert code == 1 and "memory/decisions/d2.md" in out


def test_a_selected_run_neither_shrinks_nor_drops_other_rules(legacy, capsys):
    run(capsys, "check", str(legacy), "--write-baseline")
    before = baseline_of(legacy)
    run(capsys, "check", str(legacy), "--select", "broken-link")
    assert baseline_of(legacy) == before
    run(capsys, "check", str(legacy), "--select", "broken-link", "--write-baseline")
    assert baseline_of(legacy)["findings"] == before["findings"]


def test_baseline_file_from_the_config_and_the_command_line(legacy, capsys, tmp_path):
    (legacy / "vaultkit.toml").write_text(
        (legacy / "vaultkit.toml").read_text() + '\nbaseline = "meta/accepted.json"\n')
    (legacy / "meta").mkdir()
    run(capsys, "check", str(legacy), "--write-baseline")
    assert (legacy / "meta/accepted.json").exists()
    assert not (legacy / "vaultkit-baseline.json").exists()
    code, out, _ = run(capsys, "check", str(legacy))
    assert code == 0
    code, _, err = run(capsys, "check", str(legacy), "--baseline", str(tmp_path / "nope.json"))
    assert code == 2 and "no such baseline" in err


@pytest.mark.parametrize("content, message", [
    ("{not json", "not valid JSON"),
    ('{"findings": []}', "not a vaultkit baseline"),
    ('{"vaultkit-baseline": 1, "findings": [{"path": "a"}]}', "lacks path, rule"),
])
def test_a_broken_baseline_is_a_clear_error(legacy, capsys, content, message):
    (legacy / "vaultkit-baseline.json").write_text(content)
    code, out, err = run(capsys, "check", str(legacy))
    assert code == 2 and message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_write_baseline_needs_the_whole_vault(legacy, capsys):
    code, _, err = run(capsys, "check", str(legacy / "memory"), "--write-baseline")
    assert code == 2 and "records the whole vault" in err
    assert not (legacy / "vaultkit-baseline.json").exists()


def test_git_rule_findings_are_never_baselined(legacy, capsys):
    from vaultkit.lint.baseline import Baseline
    from vaultkit.lint.diagnostics import Diagnostic

    d = Diagnostic("journal-append-only", "VK601", "error", "memory/2026-01-01.md", 3, 1,
                   "committed line changed")
    baseline = Baseline(legacy / "b.json")
    baseline.record([d], rules=["journal-append-only"])
    assert baseline.entries == []
    assert baseline.filter([d]).shown == [d]


def test_init_offers_the_baseline_on_an_existing_workspace(tmp_path, capsys):
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory/2026-11-30.md").write_text("# 2026-11-30\n\n## 09:00 work\n- a\n")
    code, out, _ = run(capsys, "init", str(ws))
    assert code == 0 and "vaultkit check --write-baseline && git add" in out
    assert out.index("--write-baseline") < out.index("pre-commit install")
    code, out, _ = run(capsys, "init", str(tmp_path / "fresh"))
    assert code == 0 and "--write-baseline" not in out


@pytest.mark.parametrize("configured", ["../outside.json", "ABSOLUTE", ".git/info/x.json",
                                        ".obsidian/x.json", ".vaultkit/x.json",
                                        "memory/../../x.json", "sub/.git/x.json"])
def test_a_configured_baseline_outside_the_vault_or_in_git_is_a_config_error(
        legacy, capsys, tmp_path, configured):
    if configured == "ABSOLUTE":
        configured = str(tmp_path / "abs.json")
    (legacy / "vaultkit.toml").write_text(
        (legacy / "vaultkit.toml").read_text() + f"\nbaseline = {json.dumps(configured)}\n")
    before = sorted(p for p in tmp_path.rglob("*") if ".git/objects" not in str(p))
    for argv in (["check", str(legacy), "--write-baseline"], ["check", str(legacy)]):
        code, out, err = run(capsys, *argv)
        assert code == 2, (out, err)
        assert "baseline" in err and "Traceback" not in err
        assert len(err.strip().splitlines()) == 1
    assert sorted(p for p in tmp_path.rglob("*") if ".git/objects" not in str(p)) == before


def test_a_baseline_is_never_written_outside_the_vault_or_through_a_symlink(
        legacy, capsys, tmp_path):
    outside = tmp_path / "outside.json"
    # --baseline (a hook's args come from a cloned .pre-commit-config.yaml too)
    code, _, err = run(capsys, "check", str(legacy), "--write-baseline",
                       "--baseline", str(outside))
    assert code == 2 and "leads out of the vault" in err and not outside.exists()
    code, _, err = run(capsys, "check", str(legacy), "--write-baseline",
                       "--baseline", str(legacy / ".git" / "b.json"))
    assert code == 2 and ".git/" in err and not (legacy / ".git" / "b.json").exists()
    # the default baseline, a symlink out of the vault: --shrink-baseline refuses too
    run(capsys, "check", str(legacy), "--write-baseline")
    outside.write_text((legacy / "vaultkit-baseline.json").read_text())
    (legacy / "vaultkit-baseline.json").unlink()
    (legacy / "vaultkit-baseline.json").symlink_to(outside)
    kept = outside.read_text()
    (legacy / "memory/decisions/d1.md").unlink()  # fixed: the shrink wants to write
    code, _, err = run(capsys, "check", str(legacy), "--shrink-baseline")
    # one line of error (beside the "git rules skipped" notice every run outside git gives)
    errors = [x for x in err.strip().splitlines() if not x.startswith("vaultkit: info:")]
    assert code == 2 and "symlink" in err and len(errors) == 1, err
    assert outside.read_text() == kept


# -- first week: the baseline survives a renamed heading, changes only when asked ---------------

JOURNAL = ("# 2026-11-20\n\n## 09:10 — Deploy\n- shipped\n\n## 11:00 — Standup\n- talked\n\n"
           "## 15:30 — Review of the launch plan\n- Went through the plan line by line.\n"
           "- Moved the launch to Tuesday.\n- Ada owns the rollback.\n")


def _with_entry_too_short(root):
    """entry-too-short is off by default: the vault that baselines its findings selects it."""
    config = root / "vaultkit.toml"
    config.write_text('extend-select = ["entry-too-short"]\n' + config.read_text())


def test_an_entrys_baselined_finding_survives_a_heading_rename(legacy, capsys):
    _with_entry_too_short(legacy)
    journal = legacy / "memory/2026-11-20.md"
    journal.write_text(JOURNAL)
    code, out, _ = run(capsys, "check", str(legacy), "--select", "entry-too-short")
    assert code == 0 and out.count("VK305 entry-too-short") == 2
    run(capsys, "check", str(legacy), "--write-baseline")
    journal.write_text(JOURNAL.replace("09:10 — Deploy", "09:10 — Deployed v1.3 to production"))
    code, out, _ = run(capsys, "check", str(legacy), "--select", "entry-too-short")
    assert "VK305" not in out and "All checks passed!" in out
    # a third short entry is new: the two accepted ones are counted
    journal.write_text(journal.read_text() + "\n## 17:00 — Wrap-up\n- done\n")
    code, out, _ = run(capsys, "check", str(legacy), "--select", "entry-too-short")
    assert out.count("VK305 entry-too-short") == 1


def test_a_baseline_written_before_names_were_blanked_still_matches(legacy, capsys):
    from vaultkit.lint.baseline import legacy_fingerprint
    from vaultkit.lint.diagnostics import Diagnostic

    _with_entry_too_short(legacy)
    (legacy / "memory/2026-11-20.md").write_text(JOURNAL)
    _, out, _ = run(capsys, "check", str(legacy), "--format", "json")
    # as the earlier version wrote them: one entry per message, the heading in the hash
    data = {"vaultkit-baseline": 1, "findings": [
        {"path": f["path"], "rule": f["rule"], "code": f["code"], "count": 1,
         "message": f["message"],
         "fingerprint": legacy_fingerprint(Diagnostic(f["rule"], f["code"], f["severity"],
                                                      f["path"], 1, 1, f["message"]))}
        for f in json.loads(out) if f["rule"] not in ("journal-append-only", "mass-deletion")]}
    assert sum(f["rule"] == "entry-too-short" for f in data["findings"]) == 2
    (legacy / "vaultkit-baseline.json").write_text(json.dumps(data))
    code, out, _ = run(capsys, "check", str(legacy))
    assert code == 0 and "All checks passed!" in out


def test_shrink_baseline_needs_a_baseline_and_the_whole_vault(legacy, capsys):
    code, _, err = run(capsys, "check", str(legacy), "--shrink-baseline")
    assert code == 2 and "no baseline to shrink" in err
    run(capsys, "check", str(legacy), "--write-baseline")
    for extra, message in ((["--no-baseline"], "contradict"),
                           (["--write-baseline"], "give one of them"),
                           (["--hook"], "records the whole vault")):
        code, _, err = run(capsys, "check", str(legacy), "--shrink-baseline", *extra)
        assert code == 2 and message in err, extra
    code, _, err = run(capsys, "check", str(legacy / "memory"), "--shrink-baseline")
    assert code == 2 and "records the whole vault" in err
    code, _, err = run(capsys, "check", str(legacy), "--shrink-baseline")
    assert code == 0 and "nothing removed" in err

"""vaultkit promote: journal lines copied into MEMORY.md or a topic note, with their source,
once (also under concurrency), refused when a runtime would cut the result or a line holds a
credential; the journal keeps its lines."""

from __future__ import annotations

import json
import multiprocessing as mp

import pytest

from vaultkit.cli import main
from vaultkit.cli.starter import init_vault

DAY = "2026-12-06"
JOURNAL = f"memory/{DAY}.md"
LINES = [
    f"# {DAY}",
    "",
    "### 09:00 \u2014 Chose the shop's database",  # 3
    "",
    "- Decision: Postgres over SQLite for the shop, for concurrent writers",  # 5
    "- Lesson: the staging backup needs its own bucket",  # 6
    "",
    "### 11:30 \u2014 Bot set up",  # 8
    "",
    "- token 5145683452:AAbeuEchsVEoR7TJYHSDATOCN1D61_k7U4O for the alerts bot",  # 10
    "",
]
TOKEN = "5145683452:AAbeuEchsVEoR7TJYHSDATOCN1D61_k7U4O"  # the docs' made-up example


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def vault(tmp_path, monkeypatch):
    root = tmp_path / "v"
    init_vault(root)
    (root / JOURNAL).write_text("\n".join(LINES), encoding="utf-8")
    monkeypatch.chdir(root)
    return root


def test_copies_the_lines_under_a_dated_heading_with_their_source(vault, capsys):
    before = (vault / "MEMORY.md").read_bytes()
    journal = (vault / JOURNAL).read_bytes()
    code, out, err = run(capsys, "promote", f"{JOURNAL}:5-6")
    assert code == 0, err
    after = (vault / "MEMORY.md").read_text(encoding="utf-8")
    assert after.encode("utf-8").startswith(before)  # every other byte kept
    today = __import__("datetime").date.today().isoformat()
    assert after[len(before):] == (
        f"\n## Promoted from the journal ({today})\n\n"
        f"<!-- vaultkit-promoted:{JOURNAL}:5 -->\n"
        "- Decision: Postgres over SQLite for the shop, for concurrent writers\n"
        f"<!-- vaultkit-promoted:{JOURNAL}:6 -->\n"
        "- Lesson: the staging backup needs its own bucket\n")
    lines = after.split("\n")
    reported = [ln.split(": promoted ") for ln in out.splitlines()]
    assert [src for _, src in reported] == [f"{JOURNAL}:5", f"{JOURNAL}:6"]
    for where, src in reported:
        number = int(where.split(":")[1])
        assert lines[number - 1].startswith("- ") and lines[number - 2].endswith(f"{src} -->")
    assert (vault / JOURNAL).read_bytes() == journal  # copied: the journal keeps its lines
    # a heading line is promoted as its title (no "09:00 —": no dated record in MEMORY.md),
    # into the same day's block
    code, out, _ = run(capsys, "promote", f"{JOURNAL}:3", "--format", "json")
    data = json.loads(out)
    assert code == 0 and [p["text"] for p in data["promoted"]] == ["Chose the shop's database"]
    tail = (vault / "MEMORY.md").read_text(encoding="utf-8").split("\n")
    assert tail[-3:] == [f"<!-- vaultkit-promoted:{JOURNAL}:3 -->",
                         "- Chose the shop's database", ""]
    assert tail.count(f"## Promoted from the journal ({today})") == 1
    # what promote writes, check accepts
    code, out, err = run(capsys, "check", "--format", "json", "MEMORY.md")
    assert code == 0 and json.loads(out) == [], out


def test_a_line_already_in_the_target_is_never_written_twice(vault, capsys):
    assert run(capsys, "promote", f"{JOURNAL}:5")[0] == 0
    once = (vault / "MEMORY.md").read_bytes()
    code, out, err = run(capsys, "promote", f"{JOURNAL}:5", "--format", "json")
    data = json.loads(out)
    assert code == 0 and data["promoted"] == []
    assert data["skipped"][0]["reason"].startswith("already in MEMORY.md (line ")
    assert (vault / "MEMORY.md").read_bytes() == once
    # written anywhere in the target by hand, list and heading marks and spacing aside
    memory = vault / "MEMORY.md"
    memory.write_text(memory.read_text() + "\n## Storage\n*  Lesson: the staging  backup "
                      "needs its own bucket\n", encoding="utf-8")
    by_hand = memory.read_bytes()
    code, out, _ = run(capsys, "promote", f"{JOURNAL}:6")
    assert code == 0 and out.startswith(f"{JOURNAL}:6: skipped: already in MEMORY.md")
    assert memory.read_bytes() == by_hand
    # reworded after its promotion: its marker still says it was promoted
    memory.write_text(memory.read_text().replace("Postgres over SQLite", "Postgres 16"),
                      encoding="utf-8")
    reworded = memory.read_bytes()
    assert run(capsys, "promote", f"{JOURNAL}:5")[0] == 0
    assert memory.read_bytes() == reworded


def _promoter(root: str, start, results) -> None:
    import os

    os.chdir(root)
    start.wait()
    results.put(main(["promote", f"{JOURNAL}:3-6", "--format", "json"]))


def test_concurrent_promoters_write_each_line_once(vault):
    """Six processes promote the same lines at once: each line lands once, under one
    heading (the lock serialises them; the later ones find the lines and skip them)."""
    ctx = mp.get_context("fork")
    start, results = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=_promoter, args=(str(vault), start, results))
             for _ in range(6)]
    for p in procs:
        p.start()
    start.set()
    for p in procs:
        p.join(300)
        assert p.exitcode == 0
    assert sorted(results.get(timeout=5) for _ in procs) == [0] * 6
    text = (vault / "MEMORY.md").read_text(encoding="utf-8")
    for n, line in ((3, "- Chose the shop's database"),
                    (5, "- Decision: Postgres over SQLite for the shop, for concurrent writers"),
                    (6, "- Lesson: the staging backup needs its own bucket")):
        assert text.count(line + "\n") == 1, text
        assert text.count(f"<!-- vaultkit-promoted:{JOURNAL}:{n} -->\n") == 1
    assert text.count("## Promoted from the journal (") == 1


def test_refused_when_a_runtime_would_cut_the_result(vault, tmp_path, capsys):
    memory = vault / "MEMORY.md"
    size = len(memory.read_text(encoding="utf-8").rstrip())
    # OpenClaw's per-file limit just above MEMORY.md as it is: the promotion would cross it
    (tmp_path / "openclaw.json").write_text(json.dumps(
        {"agents": {"defaults": {"bootstrapMaxChars": size + 20}}}))
    before = memory.read_bytes()
    code, out, err = run(capsys, "promote", f"{JOURNAL}:5")
    assert code == 1 and out == ""
    assert memory.read_bytes() == before  # nothing written
    assert err.count("\n") == 1 and err.startswith("vaultkit: refused: OpenClaw would cut MEMORY.md")
    assert f"over the per-file limit of {size + 20:,}" in err and "nothing written" in err
    assert str(tmp_path / "openclaw.json") in err  # where the limit comes from
    code, out, _ = run(capsys, "promote", f"{JOURNAL}:5", "--format", "json")
    data = json.loads(out)
    assert code == 1 and data["refused"] is True and data["kind"] == "budget"
    assert data["runtime"] == "openclaw" and data["limit"] == size + 20
    # by how much: the line and its marker, past the limit
    assert data["over"] > 0 and f": {data['over']:,} more chars of it would not be loaded (" in data["error"]
    assert memory.read_bytes() == before
    # room again: it goes in
    (tmp_path / "openclaw.json").write_text(json.dumps(
        {"agents": {"defaults": {"bootstrapMaxChars": size + 2000}}}))
    assert run(capsys, "promote", f"{JOURNAL}:5")[0] == 0


def test_refused_past_the_memory_size_budget_unless_that_rule_is_off(vault, capsys):
    memory = vault / "MEMORY.md"
    text = memory.read_text() + "\n## Filler facts\n"
    i = 0
    while len(text.encode("utf-8")) < 10_240 - 60:  # just within the budget
        text += f"- durable fact number {i:04d} kept here\n"
        i += 1
    memory.write_text(text, encoding="utf-8")
    size = memory.stat().st_size
    assert 10_240 - 100 < size <= 10_240, size  # just within the budget
    before = memory.read_bytes()
    code, _, err = run(capsys, "promote", f"{JOURNAL}:5")
    assert code == 1 and memory.read_bytes() == before
    assert "over the 10,240-byte budget by" in err and "budgets.memory_md_bytes" in err
    toml = vault / "vaultkit.toml"
    toml.write_text('ignore = ["memory-size"]\n' + toml.read_text())
    code, _, err = run(capsys, "promote", f"{JOURNAL}:5")
    assert code == 0, err


def test_refused_when_a_line_holds_a_credential(vault, capsys):
    memory = vault / "MEMORY.md"
    before = memory.read_bytes()
    code, out, err = run(capsys, "promote", f"{JOURNAL}:5-6,10")
    assert code == 1 and memory.read_bytes() == before  # none of the three written
    assert err.startswith(f"vaultkit: refused: {JOURNAL}:10 holds a Telegram bot token (")
    assert TOKEN not in err and TOKEN.split(":")[1] not in err and "…7U4O" in err
    code, out, err = run(capsys, "promote", f"{JOURNAL}:10", "--format", "json")
    data = json.loads(out)
    assert code == 1 and data["kind"] == "credential" and data["masked"].endswith("7U4O")
    assert TOKEN.split(":")[1] not in out + err
    code, out, err = run(capsys, "promote", f"{JOURNAL}:10", "--allow-secret")
    assert code == 0 and TOKEN in memory.read_text() and TOKEN.split(":")[1] not in out + err


def test_dry_run_writes_nothing_and_shows_the_block(vault, capsys):
    memory = vault / "MEMORY.md"
    before = memory.read_bytes()
    code, out, err = run(capsys, "promote", f"{JOURNAL}:5", "--dry-run")
    assert code == 0, err
    assert memory.read_bytes() == before
    assert out.splitlines()[0].endswith(f": would promote {JOURNAL}:5")
    assert f"<!-- vaultkit-promoted:{JOURNAL}:5 -->\n- Decision: Postgres" in out
    assert not (vault / ".vaultkit" / "snapshots.git").exists()


def test_into_a_topic_note_and_with_a_snapshot_after(vault, capsys):
    from vaultkit.vault.profile import load_settings
    from vaultkit.vault.snapshots import open_store

    note = vault / "memory" / "semantic" / "shop.md"
    note.write_text("# Shop\n\nThe shop runs on one VPS.", encoding="utf-8")  # no final newline
    code, out, err = run(capsys, "promote", f"{JOURNAL}:5", "--to", "memory/semantic/shop.md",
                         "--format", "json")
    assert code == 0, err
    text = note.read_text(encoding="utf-8")
    assert text.startswith("# Shop\n\nThe shop runs on one VPS.\n\n## Promoted from the journal (")
    data = json.loads(out)
    assert data["target"] == "memory/semantic/shop.md"
    assert text.split("\n")[data["promoted"][0]["line"] - 1].startswith("- Decision: Postgres")
    store = open_store(vault, load_settings(vault))
    assert store is not None and data["snapshot"] == store.head()
    recorded = store.recorded()["memory/semantic/shop.md"]
    assert store.blobs([recorded])[recorded] == note.read_bytes()


@pytest.mark.parametrize("argv, said", [
    ([f"{JOURNAL}"], "name the lines as FILE:LINES"),
    ([f"{JOURNAL}:0"], "numbered from 1"),
    ([f"{JOURNAL}:6-5"], "numbered from 1"),
    ([f"{JOURNAL}:1-500"], "at most 100 lines"),
    ([f"{JOURNAL}:40"], "past the end of the journal (10 lines)"),
    ([f"{JOURNAL}:2"], "the named lines are blank"),
    (["MEMORY.md:3"], "not a journal"),
    (["memory/2026-12-01.md:3"], "no such journal"),
    (["../x.md:1"], "'..' is refused"),
    ([f"{JOURNAL}:5", "--to", JOURNAL], "--to memory/2026-12-06.md: a journal"),
    ([f"{JOURNAL}:5", "--to", "memory/semantic/none.md"], "no such note; create it first"),
    ([f"{JOURNAL}:5", "--to", "AGENTS.md"], "not in the memory set"),
    (["nowhere", f"{JOURNAL}:5"], "nowhere: no such folder"),
])
def test_bad_input_is_one_line_and_exit_2(vault, capsys, argv, said):
    before = (vault / "MEMORY.md").read_bytes()
    code, out, err = run(capsys, "promote", *argv)
    assert code == 2 and said in err, err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert (vault / "MEMORY.md").read_bytes() == before


def test_the_vault_comes_first_or_from_C(vault, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "promote", "v", f"{JOURNAL}:5")
    assert code == 0, err
    assert out.startswith("v/MEMORY.md:")  # from the current folder, as log prints paths
    code, out, err = run(capsys, "promote", "-C", "v", f"{JOURNAL}:6", "--format", "json")
    assert code == 0 and json.loads(out)["promoted"][0]["source"] == f"{JOURNAL}:6"


def test_a_crlf_target_gets_crlf_lines_and_keeps_every_byte(vault, capsys):
    memory = vault / "MEMORY.md"
    before = b"# MEMORY\r\n\r\n- Use printf >> for memory writes\r\n"
    memory.write_bytes(before)
    code, out, err = run(capsys, "promote", f"{JOURNAL}:5")
    assert code == 0, err
    data = memory.read_bytes()
    assert data.startswith(before)
    added = data[len(before):]
    assert added.count(b"\n") == added.count(b"\r\n") == 5  # blank, heading, blank, 2 lines
    assert added.endswith(b"\r\n- Decision: Postgres over SQLite for the shop, for concurrent "
                          b"writers\r\n")
    assert out.startswith("MEMORY.md:8: promoted ")


def test_memory_only_layout_promotes_into_the_workspace_memory_md(tmp_path, capsys,
                                                                   monkeypatch):
    """The vault is memory/ alone; MEMORY.md lives one folder up and is written there, held
    to the same budgets (OpenClaw loads it from the workspace)."""
    import shutil

    workspace = tmp_path / "workspace"
    init_vault(workspace)
    memory = workspace / "memory"
    shutil.copytree(workspace / ".obsidian", memory / ".obsidian")
    (memory / "vaultkit.toml").write_text('memory-dir = "."\n')
    (memory / f"{DAY}.md").write_text("\n".join(LINES), encoding="utf-8")
    monkeypatch.chdir(memory)
    before = (workspace / "MEMORY.md").read_bytes()
    code, out, err = run(capsys, "promote", f"{DAY}.md:5", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["target"] == "../MEMORY.md"
    text = (workspace / "MEMORY.md").read_text(encoding="utf-8")
    assert text.encode("utf-8").startswith(before)
    assert text.endswith(f"<!-- vaultkit-promoted:{DAY}.md:5 -->\n- Decision: Postgres over "
                         "SQLite for the shop, for concurrent writers\n")
    assert not (memory / "MEMORY.md").exists()
    size = len(text.rstrip())
    (workspace.parent / "openclaw.json").write_text(json.dumps(
        {"agents": {"defaults": {"bootstrapMaxChars": size + 5}}}))
    code, _, err = run(capsys, "promote", f"{DAY}.md:6")
    assert code == 1 and "OpenClaw would cut ../MEMORY.md" in err
    assert (workspace / "MEMORY.md").read_text(encoding="utf-8") == text


def test_a_missing_memory_md_is_created_with_its_title(vault, capsys):
    (vault / "MEMORY.md").unlink()
    code, out, err = run(capsys, "promote", f"{JOURNAL}:6")
    assert code == 0, err
    today = __import__("datetime").date.today().isoformat()
    assert (vault / "MEMORY.md").read_text(encoding="utf-8") == (
        f"# MEMORY\n\n## Promoted from the journal ({today})\n\n"
        f"<!-- vaultkit-promoted:{JOURNAL}:6 -->\n"
        "- Lesson: the staging backup needs its own bucket\n")
    assert out == "MEMORY.md:6: promoted memory/2026-12-06.md:6\n"
    # a refused promotion leaves no empty MEMORY.md behind
    (vault / "MEMORY.md").unlink()
    assert run(capsys, "promote", f"{JOURNAL}:10")[0] == 1
    assert not (vault / "MEMORY.md").exists()

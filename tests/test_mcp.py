"""vaultkit mcp: the real server as a subprocess, driven by the MCP SDK's own stdio client.

Every tool is called on the starter vault and on a messy one and its structured result
compared with the CLI's JSON for the same question; schemas are checked as JSON Schema
and results validated against the output schemas; 8 concurrent memory_log calls must
land once each, never interleaved; garbage, bad arguments and paths leading out of the
vault get error results while the server keeps serving.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the MCP SDK is the optional `mcp` extra "
                                  "(pip install -e '.[test]' installs it)")
pytest.importorskip("mcp_types", reason="vaultkit mcp needs the MCP SDK 2.x")
import anyio  # noqa: E402  (an SDK dependency)
from jsonschema import Draft202012Validator  # noqa: E402  (an SDK dependency)
from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

from vaultkit.cli.starter import init_vault  # noqa: E402

REALISTIC = Path(__file__).parent / "fixtures" / "rules" / "realistic"
SEARCH = Path(__file__).parent / "fixtures" / "search" / "vault"
READING = {"memory_search", "memory_recall", "memory_get", "vault_check", "vault_audit"}
ALL_TOOLS = READING | {"memory_log", "memory_promote", "vault_index"}


# -- vaults ---------------------------------------------------------------------------------

@pytest.fixture
def starter(tmp_path):
    root = tmp_path / "starter"
    init_vault(root)
    return root


@pytest.fixture
def messy(tmp_path):
    """The realistic fixture plus what real vaults also hold: broken, oversized, undecodable."""
    root = tmp_path / "messy"
    shutil.copytree(REALISTIC, root)
    (root / "vaultkit.toml").write_text(
        (root / "vaultkit.toml").read_text() + "max-file-bytes = 20000\n")
    sem = root / "memory" / "semantic"
    (sem / "unclosed.md").write_text("---\ntitle: [unclosed\n---\n# Unclosed\n\nSee [[nowhere]].\n")
    (sem / "latin1.md").write_bytes(
        "# Caf\xe9 notes\n\nSerrano's caf\xe9 list.\n".encode("latin-1"))
    (sem / "huge.md").write_text("# Huge\n\n" + "filler line of text\n" * 2000)
    (sem / "nul.md").write_bytes(b"# Nul\n\nbinary\x00junk\n")
    (root / "memory" / "2026-02-31.md").write_text("# 2026-02-31\n\n### 10:00 \u2014 Ghost\n\nx\n")
    (root / "memory" / "decisions" / "dangling.md").write_text(
        "---\ntype: decision\n---\n# Dangling\n\n"
        "Links to [[missing-note]] and [[people/nobody]].\n")
    return root


# -- driving the server ---------------------------------------------------------------------

def server_params(vault: Path, *options: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable,
                                 args=["-m", "vaultkit", "mcp", *options, str(vault)],
                                 cwd=str(vault))


def talk(vault: Path, script, *options: str, mode: str = "legacy"):
    """Run ``await script(client)`` against a fresh server; the server must log no traceback."""
    with tempfile.TemporaryFile("w+") as errlog:
        async def main():
            transport = stdio_client(server_params(vault, *options), errlog=errlog)
            async with Client(transport, mode=mode, cache=None) as client:
                return await script(client)

        result = anyio.run(main)
        errlog.seek(0)
        stderr = errlog.read()
    assert "Traceback" not in stderr, stderr
    return result


def cli_json(vault: Path, *argv: str):
    proc = subprocess.run([sys.executable, "-m", "vaultkit", *argv], cwd=vault,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def structured(result, spec=None):
    """The call's structured result, checked against its text form and output schema."""
    assert not result.is_error, result.content[0].text
    data = result.structured_content
    assert json.loads(result.content[0].text) == data
    if spec is not None:
        Draft202012Validator(spec.output_schema).validate(data)
    return data


def error_text(result) -> str:
    assert result.is_error, result.structured_content
    return result.content[0].text


# -- listing ---------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_lists_tools_with_valid_schemas_and_annotations(starter, mode):
    async def script(client):
        return await client.list_tools()

    tools = {t.name: t for t in talk(starter, script, mode=mode).tools}
    assert set(tools) == ALL_TOOLS
    for tool in tools.values():
        Draft202012Validator.check_schema(tool.input_schema)
        Draft202012Validator.check_schema(tool.output_schema)
        assert tool.input_schema["type"] == "object"
        assert len(tool.description) > 80  # written for a model, not a label
        ann = tool.annotations
        assert ann.read_only_hint == (tool.name in READING)
        assert ann.open_world_hint is False
        assert ann.destructive_hint is False
    assert tools["memory_log"].annotations.idempotent_hint is False
    assert tools["memory_search"].annotations.idempotent_hint is True
    # the runtime's parameter names, so prompts written for OpenClaw work unchanged
    assert set(tools["memory_search"].input_schema["properties"]) >= {"query", "maxResults",
                                                                      "minScore"}
    assert set(tools["memory_get"].input_schema["properties"]) == {"path", "from", "lines"}
    assert tools["memory_get"].input_schema["required"] == ["path"]


def test_resources_are_the_bootstrap_files_and_the_index(starter):
    async def script(client):
        listed = (await client.list_resources()).resources
        texts = {}
        for r in listed:
            got = await client.read_resource(r.uri)
            texts[str(r.uri)] = got.contents[0].text
        return listed, texts

    listed, texts = talk(starter, script)
    names = [r.name for r in listed]
    bootstrap = [n for n in ("AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "USER.md",
                             "HEARTBEAT.md", "MEMORY.md", "NOW.md") if (starter / n).is_file()]
    assert "TOOLS.md" in bootstrap and "IDENTITY.md" in bootstrap  # (the starter writes them)
    assert names[:len(bootstrap)] == bootstrap  # the runtime's injection order
    assert names[-1] == "memory/INDEX.md"
    for r in listed:
        assert r.mime_type == "text/markdown"
        assert texts[str(r.uri)] == (starter / r.name).read_text(encoding="utf-8")


def test_read_only_serves_only_the_reading_tools(starter):
    journal_files = sorted(p.name for p in (starter / "memory").glob("*.md"))

    async def script(client):
        names = {t.name for t in (await client.list_tools()).tools}
        log = await client.call_tool("memory_log", {"text": "Should not land\na\nb\nc"})
        index = await client.call_tool("vault_index", {})
        search = await client.call_tool("memory_search", {"query": "memory"})
        return names, log, index, search

    names, log, index, search = talk(starter, script, "--read-only")
    assert names == READING
    assert "read-only" in error_text(log)
    assert "read-only" in error_text(index)
    assert not search.is_error
    assert sorted(p.name for p in (starter / "memory").glob("*.md")) == journal_files


# -- every tool, compared with the CLI ---------------------------------------------------------

def _specs():
    from vaultkit.cli.mcp_server import TOOLS

    return {t.name: t for t in TOOLS}


@pytest.mark.parametrize("which", ["starter", "messy", "search"])
def test_reading_tools_match_the_cli_json(which, request, tmp_path):
    if which == "search":
        vault = tmp_path / "search"
        shutil.copytree(SEARCH, vault)
    else:
        vault = request.getfixturevalue(which)
    specs = _specs()
    queries = {"starter": "memory protocol session", "messy": "cron schedule journal",
               "search": "cron overwrote the journal"}
    query = queries[which]
    get_path = "MEMORY.md"

    async def script(client):
        out = {}
        out["search"] = await client.call_tool("memory_search", {"query": query,
                                                                  "minScore": 0.1})
        out["search_typed"] = await client.call_tool(
            "memory_search", {"query": query, "minScore": 0.0, "maxResults": 3,
                              "type": "lesson"})
        out["get"] = await client.call_tool("memory_get", {"path": get_path, "from": 2,
                                                           "lines": 4})
        out["get_missing"] = await client.call_tool("memory_get",
                                                    {"path": "memory/1999-01-01.md"})
        out["check"] = await client.call_tool("vault_check", {})
        out["check_memory"] = await client.call_tool(
            "vault_check", {"paths": ["memory"], "select": ["ALL"], "ignore": ["orphan-note"]})
        out["audit"] = await client.call_tool("vault_audit", {"skip": ["git-backup"]})
        return out

    got = talk(vault, script)
    assert structured(got["search"], specs["memory_search"]) == cli_json(
        vault, "search", "--json", "--min-score", "0.1", query)
    assert structured(got["search_typed"], specs["memory_search"]) == cli_json(
        vault, "search", "--json", "--min-score", "0", "-n", "3", "--type", "lesson", query)
    assert structured(got["get"], specs["memory_get"]) == cli_json(
        vault, "get", "--json", "--from", "2", "--lines", "4", get_path)
    assert structured(got["get_missing"], specs["memory_get"]) == {
        "path": "memory/1999-01-01.md", "text": ""}
    check = structured(got["check"], specs["vault_check"])
    assert check["findings"] == cli_json(vault, "check", "--format", "json")
    assert check["errors"] == sum(f["severity"] == "error" for f in check["findings"])
    assert check["failed"] == (check["errors"] > 0)
    assert structured(got["check_memory"], specs["vault_check"])["findings"] == cli_json(
        vault, "check", "--format", "json", "--select", "ALL", "--ignore", "orphan-note",
        "memory")
    audit = structured(got["audit"], specs["vault_audit"])
    assert audit["checks"] == cli_json(vault, "audit", "--format", "json", "--skip",
                                       "git-backup")
    assert audit["failed"] == sum(c["status"] == "fail" for c in audit["checks"])
    if which == "messy":
        rules = {(f["rule"], f["path"]) for f in check["findings"]}
        assert ("broken-link", "memory/decisions/dangling.md") in rules
        assert ("file-unreadable", "memory/semantic/huge.md") in rules
        assert any(f["rule"] == "frontmatter-invalid" for f in check["findings"])


def test_vault_index_dry_run_then_write(messy):
    specs = _specs()
    before = (messy / "memory" / "INDEX.md").read_bytes()
    expected_diff = subprocess.run([sys.executable, "-m", "vaultkit", "index", "--check"],
                                   cwd=messy, capture_output=True, text=True).stdout
    assert expected_diff  # the fixture's index is stale once the messy notes are in

    async def script(client):
        dry = await client.call_tool("vault_index", {"dryRun": True})
        unchanged = (messy / "memory" / "INDEX.md").read_bytes()
        write = await client.call_tool("vault_index", {})
        again = await client.call_tool("vault_index", {})
        check = await client.call_tool("vault_check", {"select": ["index-stale"]})
        return dry, unchanged, write, again, check

    dry, unchanged, write, again, check = talk(messy, script)
    dry = structured(dry, specs["vault_index"])
    assert dry == {"path": "memory/INDEX.md", "changed": False, "upToDate": False,
                   "diff": expected_diff}
    assert unchanged == before
    assert structured(write, specs["vault_index"]) == {"path": "memory/INDEX.md",
                                                       "changed": True, "upToDate": True}
    assert structured(again, specs["vault_index"])["changed"] is False
    assert structured(check)["findings"] == []  # the warm vault saw the new INDEX.md
    proc = subprocess.run([sys.executable, "-m", "vaultkit", "index", "--check"], cwd=messy,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout


# -- memory_log ------------------------------------------------------------------------------

GOOD_ENTRY = ("Moved the backup cron to 02:00 UTC\n"
              "The 23:00 run collided with the heartbeat and lost the lock.\n"
              "Both now log to memory/ and the push succeeds.\n"
              "Next: watch two nights of backups, then close the ticket.")


def test_memory_log_writes_through_the_locked_writer_and_reports_findings(starter):
    specs = _specs()
    day = "2026-03-04"
    journal = starter / "memory" / f"{day}.md"

    async def script(client):
        good = await client.call_tool("memory_log", {"text": GOOD_ENTRY, "date": day,
                                                     "time": "09:15"})
        short = await client.call_tool("memory_log", {
            "title": "Checked mail", "text": "Replied to Ana about the invoice", "date": day,
            "time": "10:00"})
        filler = await client.call_tool("memory_log", {"text": "Heartbeat\nsystem idle\n"
                                                       "no changes\nnothing to report",
                                                       "date": day, "time": "11:00"})
        nul = await client.call_tool("memory_log", {"text": "bad\x00byte", "date": day})
        bad_day = await client.call_tool("memory_log", {"text": "x", "date": "2026-02-30"})
        empty = await client.call_tool("memory_log", {"text": "  \n "})
        return good, short, filler, nul, bad_day, empty

    good, short, filler, nul, bad_day, empty = talk(starter, script)
    good = structured(good, specs["memory_log"])
    lines = journal.read_text(encoding="utf-8").split("\n")
    assert good["path"] == f"memory/{day}.md" and good["created"] is True
    assert lines[good["line"] - 1] == "### 09:15 \u2014 Moved the backup cron to 02:00 UTC"
    assert lines[good["endLine"] - 1] == "Next: watch two nights of backups, then close the ticket."
    assert good["findings"] == [] and good["warnings"] == []

    # a title and a body too short to stand apart: written as one line, which check accepts
    short = structured(short, specs["memory_log"])
    assert short["created"] is False and short["findings"] == []
    assert short["heading"] == "### 10:00 \u2014 Checked mail: Replied to Ana about the invoice"
    assert short["endLine"] == short["line"]
    # only filler: refused, nothing written
    assert "refused" in error_text(filler) and "filler" in error_text(filler)
    assert "system idle" not in journal.read_text(encoding="utf-8")

    assert "NUL" in error_text(nul)
    assert "2026-02-30" in error_text(bad_day)
    assert "nothing to log" in error_text(empty)
    assert "\x00" not in journal.read_text(encoding="utf-8")
    # the CLI reads what the server wrote as its own
    found = cli_json(starter, "check", "--format", "json", f"memory/{day}.md")
    assert found == []  # memory_log never writes an entry check reports


def test_memory_log_records_a_snapshot_of_the_journal_it_wrote(starter):
    from vaultkit.vault.profile import load_settings
    from vaultkit.vault.snapshots import open_store

    specs = _specs()
    day = "2026-03-05"

    async def script(client):
        return await client.call_tool("memory_log", {"text": GOOD_ENTRY, "date": day,
                                                     "time": "09:15"})

    result = structured(talk(starter, script), specs["memory_log"])
    store = open_store(starter, load_settings(starter))
    assert store is not None and result["snapshot"] == store.head()
    recorded = store.recorded()[f"memory/{day}.md"]
    assert store.blobs([recorded])[recorded] == (starter / "memory" / f"{day}.md").read_bytes()


def test_memory_log_on_a_messy_vault_matches_what_check_says(messy):
    day = "2026-02-16"

    async def script(client):
        title_only = await client.call_tool("memory_log", {"title": "Rotated the keys",
                                                           "date": day, "time": "08:00"})
        long = await client.call_tool("memory_log", {
            "title": "Long", "date": day, "time": "09:00",
            "text": "\n".join(f"- step {i}" for i in range(20))})
        return title_only, long

    title_only, long = talk(messy, script)
    title_only = structured(title_only)
    # a title alone is a one-line entry; an entry over 15 lines is refused, not written
    assert title_only["created"] is True and title_only["endLine"] == title_only["line"]
    assert title_only["findings"] == []
    assert "refused" in error_text(long) and "entry-too-long" not in error_text(long)
    assert "over the limit of 15" in error_text(long)
    expected = [f for f in cli_json(messy, "check", "--format", "json", f"memory/{day}.md")
                if f["line"] is not None]
    assert expected == title_only["findings"] == []


def test_eight_concurrent_memory_log_calls_land_once_each_never_interleaved(starter):
    day = "2026-05-06"
    journal = starter / "memory" / f"{day}.md"
    entries = {f"Parallel entry {i}": [f"line {j} of entry {i}" for j in range(1, 6)]
               for i in range(8)}

    async def script(client):
        results = {}

        async def one(title, body):
            results[title] = await client.call_tool(
                "memory_log", {"title": title, "text": "\n".join(body), "date": day,
                               "time": "12:00"})

        async with anyio.create_task_group() as tg:
            for title, body in entries.items():
                tg.start_soon(one, title, body)
        return results

    results = talk(starter, script)
    lines = journal.read_text(encoding="utf-8").split("\n")
    assert lines[0] == f"# {day}"
    seen_lines = set()
    for title, body in entries.items():
        data = structured(results[title])
        heading = f"### 12:00 \u2014 {title}"
        assert lines.count(heading) == 1
        at = lines.index(heading) + 1
        assert data["line"] == at and at not in seen_lines
        seen_lines.add(at)
        # the body follows its heading as one block: nothing of another entry in between
        assert lines[at:at + 1 + len(body)] == [""] + body
        assert data["endLine"] == at + 1 + len(body)
        assert data["findings"] == []
    assert sum(ln.startswith("### ") for ln in lines) == 8
    assert len(seen_lines) == 8


# -- memory_promote --------------------------------------------------------------------------

PROMOTE_DAY = "2026-12-06"
PROMOTE_JOURNAL = f"memory/{PROMOTE_DAY}.md"
BOT_TOKEN = "5145683452:AAbeuEchsVEoR7TJYHSDATOCN1D61_k7U4O"  # the docs' made-up example


def _promote_journal(root: Path) -> None:
    (root / PROMOTE_JOURNAL).write_text(
        f"# {PROMOTE_DAY}\n\n### 09:00 \u2014 Chose the shop's database\n\n"
        "- Decision: Postgres over SQLite for the shop, for concurrent writers\n"
        "- Lesson: the staging backup needs its own bucket\n"
        f"- token {BOT_TOKEN} for the alerts bot\n", encoding="utf-8")


def test_memory_promote_writes_once_even_when_called_concurrently(starter):
    """Six calls at once promoting the same lines (each on its own thread, under the
    target's lock, as concurrent `vaultkit promote` processes): written once, as the CLI
    writes them; the later calls report the lines skipped; a snapshot follows the write."""
    from vaultkit.vault.profile import load_settings
    from vaultkit.vault.snapshots import open_store

    specs = _specs()
    _promote_journal(starter)
    memory = starter / "MEMORY.md"
    before = memory.read_text(encoding="utf-8")

    async def script(client):
        results = []

        async def one():
            results.append(await client.call_tool(
                "memory_promote", {"path": PROMOTE_JOURNAL, "lines": "5-6"}))

        async with anyio.create_task_group() as tg:
            for _ in range(6):
                tg.start_soon(one)
        again = await client.call_tool("memory_promote", {"path": PROMOTE_JOURNAL,
                                                          "lines": "5"})
        return results, again

    results, again = talk(starter, script)
    data = [structured(r, specs["memory_promote"]) for r in results]
    writers = [d for d in data if d["promoted"]]
    assert len(writers) == 1 and [p["source"] for p in writers[0]["promoted"]] == [
        f"{PROMOTE_JOURNAL}:5", f"{PROMOTE_JOURNAL}:6"]
    assert all(len(d["skipped"]) == 2 for d in data if not d["promoted"])
    text = memory.read_text(encoding="utf-8")
    assert text.startswith(before)
    lines = text.split("\n")
    for p in writers[0]["promoted"]:
        assert lines[p["line"] - 1] == "- " + p["text"]
        assert text.count("- " + p["text"] + "\n") == 1
    assert text.count("## Promoted from the journal (") == 1
    assert structured(again)["promoted"] == []
    store = open_store(starter, load_settings(starter))
    recorded = store.recorded()["MEMORY.md"]
    assert writers[0]["snapshot"] is not None
    assert store.blobs([recorded])[recorded] == memory.read_bytes()
    # the CLI finds the server's lines as its own: nothing written again
    assert cli_json(starter, "promote", f"{PROMOTE_JOURNAL}:5-6", "--format",
                    "json")["promoted"] == []


def test_memory_promote_refusals_write_nothing_and_speak_the_tools_words(starter, tmp_path):
    _promote_journal(starter)
    memory = starter / "MEMORY.md"
    before = memory.read_bytes()
    size = len(memory.read_text(encoding="utf-8").rstrip())
    (tmp_path / "openclaw.json").write_text(json.dumps(
        {"agents": {"defaults": {"bootstrapMaxChars": size + 20}}}))

    async def script(client):
        return [await client.call_tool("memory_promote", args) for args in (
            {"path": PROMOTE_JOURNAL, "lines": "7"},
            {"path": PROMOTE_JOURNAL, "lines": "5"},
            {"path": PROMOTE_JOURNAL, "lines": "5", "to": PROMOTE_JOURNAL},
            {"path": PROMOTE_JOURNAL, "lines": "twelve"},
            {"path": "../outside.md", "lines": "1"})]

    secret, budget, into_journal, bad_lines, outside = [error_text(r)
                                                        for r in talk(starter, script)]
    assert secret.startswith("memory_promote: refused: memory/2026-12-06.md:7 holds a "
                             "Telegram bot token (")
    assert BOT_TOKEN.split(":")[1] not in secret and "nothing written" in secret
    assert budget.startswith("memory_promote: refused: OpenClaw would cut MEMORY.md")
    assert f"per-file limit of {size + 20:,}" in budget
    assert into_journal.startswith("memory_promote: to memory/2026-12-06.md: a journal")
    assert "lines" in bad_lines and "'..' is refused" in outside
    for text in (secret, budget, into_journal):
        assert "--" not in text and "allow-secret" not in text, text
    assert memory.read_bytes() == before


# -- hostile input ---------------------------------------------------------------------------

def test_bad_arguments_and_unknown_tools_are_error_results(starter):
    async def script(client):
        calls = [
            ("memory_search", {}),
            ("memory_search", {"query": 42}),
            ("memory_search", {"query": "x", "maxResults": 0}),
            ("memory_search", {"query": "x", "minScore": 7}),
            ("memory_search", {"query": "x", "type": "spaceship"}),
            ("memory_search", {"query": "x", "layer": "attic"}),
            ("memory_search", {"query": "x", "limit": 5}),
            ("memory_get", {"path": "MEMORY.md", "from": 0}),
            ("memory_get", {"path": "MEMORY.md", "lines": "ten"}),
            ("memory_log", {"title": " ", "text": ""}),
            ("memory_log", {"text": "x", "date": "tomorrow"}),
            ("memory_log", {"text": "x", "time": "25:00"}),
            ("vault_check", {"select": ["no-such-rule"]}),
            ("vault_check", {"paths": "memory"}),
            ("vault_check", {"paths": ["memory/nothing-here.md"]}),
            ("vault_audit", {"skip": ["nope"]}),
            ("vault_audit", {"backupMaxAgeHours": -1}),
            ("vault_audit", {"agent": "ghost"}),
            ("vault_index", {"dryRun": "yes"}),
            ("no_such_tool", {}),
        ]
        out = []
        for name, args in calls:
            out.append((name, args, await client.call_tool(name, args)))
            # and the server still answers properly after each
            ok = await client.call_tool("memory_get", {"path": "MEMORY.md", "lines": 1})
            assert not ok.is_error
        return out

    for name, args, result in talk(starter, script):
        text = error_text(result)
        assert text.count("\n") == 0, (name, args, text)  # one line, no traceback
        assert "internal error" not in text, (name, args, text)
    messages = {json.dumps(a, sort_keys=True): r.content[0].text for _, a, r in
                talk(starter, lambda c: _calls(c, [("memory_search", {"query": "x",
                                                                      "limit": 5}),
                                                   ("vault_check", {"select": ["zz9"]})]))}
    assert "unknown argument 'limit'" in messages['{"limit": 5, "query": "x"}']
    assert "zz9" in messages['{"select": ["zz9"]}']


async def _calls(client, calls):
    return [(n, a, await client.call_tool(n, a)) for n, a in calls]


def test_garbage_on_the_wire_gets_protocol_errors_and_the_server_stays_up(starter):
    """Raw JSON-RPC lines, as a broken client would send them."""
    proc = subprocess.Popen([sys.executable, "-m", "vaultkit", "mcp", str(starter)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=starter)

    def send(obj):
        proc.stdin.write((obj if isinstance(obj, str) else json.dumps(obj)) + "\n")
        proc.stdin.flush()

    def answer(want_id):
        while True:
            line = proc.stdout.readline()
            assert line, proc.stderr.read()
            msg = json.loads(line)
            if msg.get("id") == want_id:
                return msg

    try:
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}})
        assert answer(1)["result"]["serverInfo"]["name"] == "vaultkit"
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        junk = [("this is not json", -32700, None), ('{"half": ', -32700, None),
                ("[]", -32600, None), ("42", -32600, None), ("{}", -32600, None),
                ("\x01\x02 binary", -32700, None),
                (json.dumps({"jsonrpc": "2.0", "method": 5, "id": 90}), -32600, 90),
                (json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                             "params": "not an object"}), -32600, 2)]
        for line, code, ident in junk:
            send(line)
            reply = json.loads(proc.stdout.readline())
            assert reply["error"]["code"] == code, line
            assert reply["id"] == ident, line
        send({"jsonrpc": "2.0", "id": 3, "method": "no/such/method", "params": {}})
        assert answer(3)["error"]["code"] == -32601
        send({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
              "params": {"name": "memory_get", "arguments": ["MEMORY.md"]}})
        reply = answer(4)
        assert "error" in reply or reply["result"]["isError"] is True
        send({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
              "params": {"name": "memory_get", "arguments": {"path": "MEMORY.md",
                                                             "lines": 1}}})
        reply = answer(5)["result"]
        assert reply["isError"] is False
        assert reply["structuredContent"]["text"] == "# MEMORY\n"
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
    assert proc.returncode == 0
    assert "Traceback" not in proc.stderr.read()


OFFLINE_SERVER = """
import socket, sys
def refuse(*args, **kwargs):
    sys.stderr.write("NETWORK-USED %r\\n" % (args,))
    raise OSError("network use refused by the test")
socket.create_connection = refuse
socket.getaddrinfo = refuse
socket.gethostbyname = refuse
socket.socket.connect = refuse
socket.socket.connect_ex = refuse
socket.socket.sendto = refuse
from vaultkit.cli import main
sys.exit(main(["mcp", sys.argv[1]]))
"""


def test_the_server_opens_no_network_connection(starter):
    """The SDK brings an HTTP stack and OpenTelemetry; over stdio none of it may dial out."""
    params = StdioServerParameters(command=sys.executable,
                                   args=["-c", OFFLINE_SERVER, str(starter)], cwd=str(starter))
    journal = next(p for p in sorted((starter / "memory").glob("*.md"))
                   if p.name[0].isdigit()).relative_to(starter).as_posix()

    async def main():
        with tempfile.TemporaryFile("w+") as errlog:
            async with Client(stdio_client(params, errlog=errlog), mode="auto",
                              cache=None) as client:
                for name in sorted(ALL_TOOLS):
                    args = {"memory_search": {"query": "memory"},
                            "memory_recall": {"query": "memory"},
                            "memory_get": {"path": "MEMORY.md"},
                            "memory_log": {"text": GOOD_ENTRY},
                            "memory_promote": {"path": journal, "lines": "4"}}.get(name, {})
                    structured(await client.call_tool(name, args))
                await client.list_resources()
            errlog.seek(0)
            return errlog.read()

    stderr = anyio.run(main)
    assert "NETWORK-USED" not in stderr and "Traceback" not in stderr


def test_nothing_outside_the_vault_is_read_or_served(tmp_path, starter):
    secret_dir = tmp_path / "outside"
    secret_dir.mkdir()
    secret = secret_dir / "secret.md"
    secret.write_text("# Outside\n\nTOP-SECRET-MARKER\n")
    (starter / "memory" / "link-out.md").symlink_to(secret)
    (starter / "memory" / "dir-out").symlink_to(secret_dir)
    attempts = [
        ("memory_get", {"path": "../outside/secret.md"}),
        ("memory_get", {"path": str(secret)}),
        ("memory_get", {"path": "memory/../../outside/secret.md"}),
        ("memory_get", {"path": "memory/link-out.md"}),
        ("memory_get", {"path": "memory/dir-out/secret.md"}),
        ("memory_get", {"path": "~/.ssh/id_rsa"}),
        ("memory_get", {"path": "memory\\..\\..\\outside\\secret.md"}),
        ("memory_get", {"path": "memory/%2e%2e/%2e%2e/outside/secret.md"}),
        ("memory_get", {"path": "AGENTS.md"}),  # in the vault but not in the memory set
        ("vault_check", {"paths": [".."]}),
        ("vault_check", {"paths": [str(secret_dir)]}),
        ("vault_check", {"paths": ["memory/dir-out"]}),
        ("vault_check", {"paths": ["memory/link-out.md"]}),
    ]

    async def script(client):
        out = [await client.call_tool(n, a) for n, a in attempts]
        search = await client.call_tool("memory_search", {"query": "TOP-SECRET-MARKER",
                                                          "minScore": 0})
        resource_errors = []
        for uri in ("vaultkit:///../outside/secret.md", f"file://{secret}",
                    "vaultkit:///memory/link-out.md"):
            try:
                await client.read_resource(uri)
            except MCPError as exc:
                resource_errors.append(str(exc))
        return out, search, resource_errors

    out, search, resource_errors = talk(starter, script)
    for (name, args), result in zip(attempts, out):
        assert result.is_error, (name, args, result.structured_content)
        assert "TOP-SECRET-MARKER" not in result.content[0].text
    assert "TOP-SECRET-MARKER" not in search.content[0].text
    assert len(resource_errors) == 3


def test_a_changed_or_deleted_note_is_never_served_stale(tmp_path):
    vault = tmp_path / "search"
    shutil.copytree(SEARCH, vault)
    note = vault / "memory" / "lessons" / "deployment.md"
    old = 1_700_000_000
    for p in vault.rglob("*.md"):  # old files: the warm state is trusted for them
        os.utime(p, (old, old))

    async def script(client):
        async def hits(query):
            r = await client.call_tool("memory_search", {"query": query, "minScore": 0.3})
            return {h["path"] for h in structured(r)["results"]}

        out = {"before": await hits("zebracorn rollback")}
        text = note.read_text(encoding="utf-8")
        note.write_text(text + "\n## Zebracorn\n\nThe zebracorn rollback drill.\n",
                        encoding="utf-8")
        out["edited"] = await hits("zebracorn rollback")
        out["get"] = structured(await client.call_tool(
            "memory_get", {"path": "memory/lessons/deployment.md", "lines": 100000}))["text"]
        out["check_before"] = structured(await client.call_tool(
            "vault_check", {"select": ["broken-link"]}))["findings"]
        (vault / "memory" / "semantic" / "new.md").write_text("# New\n\nSee [[gone-note]].\n")
        out["check_after"] = structured(await client.call_tool(
            "vault_check", {"select": ["broken-link"]}))["findings"]
        note.unlink()
        out["deleted"] = await hits("zebracorn rollback")
        out["get_deleted"] = structured(await client.call_tool(
            "memory_get", {"path": "memory/lessons/deployment.md"}))
        (vault / "MEMORY.md").unlink()
        out["resources"] = [r.name for r in (await client.list_resources()).resources]
        return out

    out = talk(vault, script)
    assert "memory/lessons/deployment.md" not in out["before"]
    assert "memory/lessons/deployment.md" in out["edited"]
    assert out["get"].endswith("The zebracorn rollback drill.\n")
    assert not any(f["path"] == "memory/semantic/new.md" for f in out["check_before"])
    assert any(f["path"] == "memory/semantic/new.md" and "gone-note" in f["message"]
               for f in out["check_after"])
    assert "memory/lessons/deployment.md" not in out["deleted"]
    assert out["get_deleted"] == {"path": "memory/lessons/deployment.md", "text": ""}
    assert "MEMORY.md" not in out["resources"]


def test_a_bad_file_is_reported_and_the_next_call_works(messy):
    async def script(client):
        huge = await client.call_tool("memory_get", {"path": "memory/semantic/huge.md"})
        ok = await client.call_tool("memory_get", {"path": "memory/semantic/latin1.md"})
        check = await client.call_tool("vault_check", {"paths": ["memory/semantic"]})
        (messy / "vaultkit.toml").write_text("[budgets\nbroken =\n")
        broken_config = await client.call_tool("vault_check", {})
        (messy / "vaultkit.toml").write_text("")
        fixed = await client.call_tool("vault_check", {"paths": ["memory/semantic/huge.md"]})
        return huge, ok, check, broken_config, fixed

    huge, ok, check, broken_config, fixed = talk(messy, script)
    assert "byte limit" in error_text(huge)
    assert "Serrano" in structured(ok)["text"]  # undecodable bytes replaced, still served
    rules = {(f["rule"], f["path"]) for f in structured(check)["findings"]}
    assert ("file-unreadable", "memory/semantic/huge.md") in rules
    assert "vaultkit.toml" in error_text(broken_config)
    # the default 10 MB limit again: the 40 KB note is parsed now
    assert not any(f["rule"] == "file-unreadable" for f in structured(fixed)["findings"])


def test_search_never_writes_its_index_through_a_symlink(tmp_path):
    """A cloned vault may ship .vaultkit/search.sqlite as a link: the index is kept in memory."""
    vault = tmp_path / "search"
    shutil.copytree(SEARCH, vault)
    (vault / ".vaultkit").mkdir()
    (vault / ".vaultkit" / "search.sqlite").symlink_to(tmp_path / "elsewhere.sqlite")

    async def script(client):
        return await client.call_tool("memory_search", {"query": "refund policy"})

    hits = structured(talk(vault, script))["results"]
    assert hits and hits[0]["path"] == "memory/projects/payment-gateway.md"
    assert not (tmp_path / "elsewhere.sqlite").exists()  # never written through the link


def test_memory_only_layout_serves_the_workspace_bootstrap_files(tmp_path):
    """The vault is memory/ alone; MEMORY.md and the bootstrap files live one folder up."""
    workspace = tmp_path / "workspace"
    init_vault(workspace)
    memory = workspace / "memory"
    shutil.copytree(workspace / ".obsidian", memory / ".obsidian")
    (memory / "vaultkit.toml").write_text('memory-dir = "."\n')
    (workspace / "secret.md").write_text("# Not a bootstrap file\n\nOUTSIDE-MARKER\n")

    async def script(client):
        listed = (await client.list_resources()).resources
        agents = next(r for r in listed if r.name == "AGENTS.md")
        text = (await client.read_resource(agents.uri)).contents[0].text
        memory_md = await client.call_tool("memory_get", {"path": "MEMORY.md"})
        up = await client.call_tool("memory_get", {"path": "../secret.md"})
        return [r.name for r in listed], text, memory_md, up

    names, agents_text, memory_md, up = talk(memory, script)
    assert "AGENTS.md" in names and "MEMORY.md" in names and "INDEX.md" in names
    assert agents_text == (workspace / "AGENTS.md").read_text(encoding="utf-8")
    assert structured(memory_md)["text"].startswith("# MEMORY")
    assert structured(memory_md) == cli_json(memory, "get", "--json", "MEMORY.md")
    assert "OUTSIDE-MARKER" not in error_text(up)


def test_a_broken_config_at_startup_is_one_line_and_exit_2(tmp_path):
    vault = tmp_path / "broken"
    (vault / ".obsidian").mkdir(parents=True)
    (vault / "vaultkit.toml").write_text("[budgets\n")
    proc = subprocess.run([sys.executable, "-m", "vaultkit", "mcp", str(vault)],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "vaultkit.toml" in proc.stderr


def test_every_tool_survives_the_hostile_vault(tmp_path):
    """tests/hostile.py's set (alias bombs, YAML tags, NUL bytes, deep nesting, loops,
    a symlink out of the vault), without the 50 MB file: no internal error, nothing of
    the outside secret, findings equal to the CLI's."""
    import hostile

    vault = hostile.build(tmp_path / "hostile" / "vault", big=False)
    calls = [("memory_log", {"text": GOOD_ENTRY, "date": "2026-02-15"}),  # first: the CLI
             # check below then sees the same vault as the server's
             ("memory_search", {"query": "lol"}), ("memory_search", {"query": "中文 deep list"}),
             ("memory_search", {"query": hostile.OUTSIDE_SECRET, "minScore": 0}),
             ("memory_get", {"path": f"{hostile.SEM}/outside.md"}),
             ("vault_check", {}), ("vault_check", {"select": ["ALL"]}),
             ("vault_audit", {"skip": ["git-backup", "pre-commit"]}),
             ("vault_index", {"dryRun": True})]

    async def script(client):
        out = [await client.call_tool(n, a) for n, a in calls]
        listed = (await client.list_resources()).resources
        texts = [(await client.read_resource(r.uri)).contents[0].text for r in listed]
        return out, texts

    results, texts = talk(vault, script)
    for (name, args), result in zip(calls, results):
        text = result.content[0].text
        assert "internal error" not in text, (name, text)
        assert hostile.OUTSIDE_SECRET not in text, name
    assert results[4].is_error  # the link out of the vault
    check = structured(results[5])
    assert check["findings"] == cli_json(vault, "check", "--format", "json")
    assert not any(hostile.OUTSIDE_SECRET in t for t in texts)
    assert not (hostile.sentinel_dir(vault) / hostile.SENTINEL).exists()


def test_vault_check_honours_the_baseline_as_check_does(starter):
    """An accepted finding neither shows nor fails: `failed` agrees with check's exit code."""
    (starter / "NOW.md").write_text((starter / "NOW.md").read_text()
                                    + "\n## Lessons learned\n- never deploy on a Friday\n")
    assert subprocess.run([sys.executable, "-m", "vaultkit", "check", "--write-baseline"],
                          cwd=starter, capture_output=True, timeout=120).returncode == 0
    check = subprocess.run([sys.executable, "-m", "vaultkit", "check"], cwd=starter,
                           capture_output=True, text=True, timeout=120)
    assert check.returncode == 0, check.stdout

    async def script(client):
        return (await client.call_tool("vault_check", {}),
                await client.call_tool("vault_check", {"select": ["lesson-in-now"]}))

    whole, selected = talk(starter, script)
    for result in (whole, selected):
        data = structured(result)
        assert data["failed"] is False and data["findings"] == []
        assert data["baselined"] >= 1
    assert structured(whole)["findings"] == cli_json(starter, "check", "--format", "json")


def test_memory_recall_answers_what_memory_search_answers(tmp_path):
    # the name OpenClaw's memory plugins call (query, limit): the same results
    specs = _specs()
    root = tmp_path / "search"
    shutil.copytree(SEARCH, root)

    async def script(client):
        out = []
        for query in ("backup cron", "Ana invoice", "nothing matches zzqx"):
            out.append((await client.call_tool("memory_search", {"query": query,
                                                                 "maxResults": 5}),
                        await client.call_tool("memory_recall", {"query": query}),
                        await client.call_tool("memory_recall", {"query": query, "limit": 2})))
        return out

    for search, recall, two in talk(root, script):
        found = structured(search, specs["memory_search"])
        assert structured(recall, specs["memory_recall"]) == found
        assert structured(two, specs["memory_recall"])["results"] == found["results"][:2]


def test_tool_errors_speak_the_tools_parameters(starter):
    token = "ghp_" + "Xq7Lm2Pz9Rt4Vw8Ky3Nb6Hd1Fg5Js0Ac" + "9eUi"  # (made, not a real one)

    async def script(client):
        return (await client.call_tool("memory_log", {"text": "x", "date": "2026-13-45"}),
                await client.call_tool("memory_log", {"text": "x", "time": "25:99"}),
                await client.call_tool("memory_log", {"text": f"key {token}\nfor the bot"}),
                await client.call_tool("memory_log", {"text": " "}))

    bad_day, bad_time, secret, empty = [error_text(r) for r in talk(starter, script)]
    assert bad_day.startswith("memory_log: date '2026-13-45': not a calendar date")
    assert bad_time.startswith("memory_log: time '25:99'")
    assert "refused" in secret and "nothing written" in secret and token not in secret
    for text in (bad_day, bad_time, secret, empty):
        assert "--" not in text and "allow-secret" not in text, text


def test_memory_get_errors_speak_its_parameters(starter):
    # `vaultkit get` says "--from 0" and "--lines 0"; the tool's parameters are from, lines
    async def script(client):
        return (await client.call_tool("memory_get", {"path": "MEMORY.md", "from": 0}),
                await client.call_tool("memory_get", {"path": "MEMORY.md", "lines": 0}))

    for result in talk(starter, script):
        text = error_text(result)
        assert "--" not in text, text
        assert "from" in text or "lines" in text, text

"""The rules on what OpenClaw's dreaming promoted into MEMORY.md: promoted-junk,
promoted-twice, promotion-over-limit, dream-corpus-indexed, and secret-in-memory and
duplicate-block on promoted blocks. ``tests/fixtures/workspaces/dreaming-junk/`` holds one
of each kind (its clean twin is dreaming-clean, tests/test_dreaming.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from test_rules_support import diagnostics, findings, isolated_openclaw  # noqa: F401

from vaultkit.cli import main
from vaultkit.vault.promoted import promoted_blocks, promoted_fact

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "workspaces" / "dreaming-junk"
GIT_RULES = ("journal-append-only", "mass-deletion", "memory-churn")
TOKEN = "ghp_R8x2Kq9LmZ4vT7wN1pY6sB3dF5hJ0cXeVuA2"

SEEDED = {
    ("promoted-junk", "MEMORY.md", 12),  # a staged Candidate row
    ("promoted-junk", "MEMORY.md", 14),  # Conversation info (untrusted metadata)
    ("secret-in-memory", "MEMORY.md", 16),  # a token promoted
    ("promoted-junk", "MEMORY.md", 22),  # a fenced config block
    ("promoted-twice", "MEMORY.md", 28),  # promoted again from another day's note
    ("promoted-twice", "MEMORY.md", 30),  # already in MEMORY.md's own section
    ("duplicate-block", "MEMORY.md", 41),  # the whole section written again
}


def _copy(tmp_path) -> Path:
    root = tmp_path / "dreaming-junk"
    shutil.copytree(FIXTURE, root)
    return root


def test_each_kind_of_promoted_junk_gives_its_finding_and_nothing_else(tmp_path):
    root = _copy(tmp_path)
    assert {f for f in findings(root) if f[0] not in GIT_RULES} == SEEDED


def test_the_findings_name_the_promotion_and_mask_the_credential(tmp_path, capsys):
    root = _copy(tmp_path)
    by = {(d.rule, d.line): d for d in diagnostics(
        root, "promoted-junk", "promoted-twice", "secret-in-memory")}
    first = "promoted by '## Promoted From Short-Term Memory (2026-11-20)' (line 7)"
    assert by[("promoted-junk", 12)].message.startswith(first + ": a staged dreaming candidate")
    assert "transport metadata" in by[("promoted-junk", 14)].message
    assert "(a fenced block, lines 22-26)" in by[("promoted-junk", 22)].message
    assert all(d.severity == "warning" for (rule, _), d in by.items() if rule != "secret-in-memory")
    secret = by[("secret-in-memory", 16)]
    assert secret.severity == "error" and first in secret.message and TOKEN not in secret.message
    assert ("it was promoted before, at line 10 by '## Promoted From Short-Term Memory "
            "(2026-11-20)'") in by[("promoted-twice", 28)].message
    assert "MEMORY.md already holds it at line 5" in by[("promoted-twice", 30)].message
    assert main(["check", str(root), "--no-cache", "--select", "promoted-junk,secret-in-memory",
                 "--format", "json"]) == 1  # the credential is an error; the junk is not
    assert TOKEN not in capsys.readouterr().out


@pytest.mark.parametrize("line,fact", [
    ("- Winter service opens in November. [score=0.842 recalls=4 avg=0.710 "
     "source=memory/2026-12-02.md:5-5]", "Winter service opens in November."),
    ("- Winter service opens in November. [score=0.842 signals=6 recalls=4 avg=0.710 "
     "source=memory/2026-12-02.md:5-5]", "Winter service opens in November."),
    ("- Winter service opens in November. Source: memory/2026-12-02.md#L5-L5 "
     "<!-- trigger: winter service, bookings --> <!-- importance: 8 --> "
     "<!-- project: shop -->", "Winter service opens in November."),
    ("- - nested  bullet   text", "nested bullet text"),
    ("<!-- importance: 3 -->", ""),
])
def test_a_promoted_fact_is_the_line_without_what_dreaming_adds(line, fact):
    assert promoted_fact(line) == fact


def test_promoted_blocks_keep_their_groups_and_end_at_the_next_section():
    lines = ["# Long-Term Memory", "", "## Promoted From Short-Term Memory (2026-12-04)", "",
             "### Global", "", "<!-- openclaw-memory-promotion:memory:memory/a.md:1:1 -->",
             "- one fact here", "### Project: shop", "- two facts here", "", "## Mine",
             "- my own fact"]
    [block] = promoted_blocks(lines)
    assert (block.line, block.date, block.end) == (3, "2026-12-04", 11)
    assert block.lines == [(8, "- one fact here"), (10, "- two facts here")]


@pytest.mark.parametrize("text,kind", [
    ("- Candidate: Theme: `assistant` kept surfacing; confidence: 1.00; evidence: memory/x.md",
     "candidate"),
    ("- status: staged - Candidate: User prefers tea; confidence: 0.5", "candidate"),
    ("- ## Light Sleep <!-- openclaw:dreaming:light:start --> - notes", "candidate"),
    ('- Sender (untrusted metadata): { "label": "Ana", "id": "42" }', "transport"),
    ('- {"message_id": "81", "timestamp": "Sun 2026-04-05 20:25"} hello', "transport"),
    ("- ```bash npm run build ``` then deploy", "code"),
    ('- {"port": 8080, "host": "0.0.0.0"}', "code"),
    ("- The candidate for the job starts Monday; confidence is high", None),
    ("- The shop's Telegram chat_id is -1003981232995 (the group)", None),
    ("- Use `npm run build` before deploying the site", None),
    ("- Reflections: the team prefers async reviews", None),
])
def test_what_is_junk_and_what_is_a_fact(text, kind):
    from vaultkit.lint.rules.promoted_junk import junk_kind

    got = junk_kind(text)
    assert (got is None) if kind is None else (kind in {"candidate": "candidate row",
                                                        "transport": "transport metadata",
                                                        "code": "raw code"}[kind] in got)


# -- promotion-over-limit ---------------------------------------------------------------

OWN = "# Long-Term Memory\n\n## Shop\n" + "".join(
    f"- Fact {i:02d}: the shop keeps its spare chains, tubes and pads on shelf {i}.\n"
    for i in range(20))


def _promotion(date: str, n: int) -> str:
    return f"\n## Promoted From Short-Term Memory ({date})\n\n" + "".join(
        f"<!-- openclaw-memory-promotion:memory:memory/{date}.md:{i}:{i} -->\n"
        f"- Promoted {date} #{i}: customers asked about winter service slot {i}. "
        f"[score=0.801 recalls=3 avg=0.650 source=memory/{date}.md:{i}-{i}]\n"
        for i in range(1, 6))


def _limited(make_vault, tmp_path, memory: str, per_file: int):
    root = make_vault({"MEMORY.md": memory, "AGENTS.md": "# AGENTS\n", "SOUL.md": "# SOUL\n",
                       "memory/2026-12-01.md": "# 2026-12-01\n"})
    (tmp_path / "openclaw.json").write_text(
        '{ agents: { defaults: { bootstrapMaxChars: %d } } }\n' % per_file)
    return root


def test_a_promotion_that_pushes_memory_md_over_the_limit_names_the_cut_lines(
        make_vault, tmp_path):
    memory = OWN + _promotion("2026-11-20", 5) + _promotion("2026-12-04", 5)
    fits = len(OWN + _promotion("2026-11-20", 5)) + 50  # the first promotion still fits
    root = _limited(make_vault, tmp_path, memory, fits)
    [d] = diagnostics(root, "promotion-over-limit")
    assert d.path == "MEMORY.md" and d.severity == "warning"
    assert d.message.startswith(f"OpenClaw now cuts lines {d.line}-")
    assert "over the per-file limit" in d.message
    heading = "## Promoted From Short-Term Memory (2026-12-04)"
    at = memory.splitlines().index(heading) + 1
    assert f"'{heading}' (line {at}) pushed it past the limit" in d.message
    cut = diagnostics(root, "bootstrap-truncation")  # the same cut, the same lines
    assert cut and f"lines {d.line}-" in cut[0].message


def test_a_file_over_the_limit_without_its_promotions_is_not_theirs(make_vault, tmp_path):
    memory = OWN + _promotion("2026-12-04", 5)
    root = _limited(make_vault, tmp_path, memory, len(OWN) // 2)
    assert diagnostics(root, "promotion-over-limit") == []
    assert diagnostics(root, "bootstrap-truncation")


def test_within_the_limit_nothing_is_said(make_vault, tmp_path):
    root = _limited(make_vault, tmp_path, OWN + _promotion("2026-12-04", 5), 20000)
    assert diagnostics(root, "promotion-over-limit") == []


# -- dream-corpus-indexed ---------------------------------------------------------------

@pytest.mark.parametrize("extra,reported", [
    ('"memory/.dreams/session-corpus"', True),
    ('"./memory/.dreams"', True),
    ('"WORKSPACE/memory/.dreams/session-corpus/"', True),  # absolute
    ('"../team-docs", "memory/notes"', False),
    ('"memory"', False),  # the memory folder itself: OpenClaw's default source anyway
])
def test_the_dream_corpus_in_extra_paths_is_reported(make_vault, tmp_path, extra, reported):
    root = make_vault({"MEMORY.md": "# Memory\n\n- a fact worth keeping in memory\n"})
    extra = extra.replace("WORKSPACE", str(root))
    (tmp_path / "openclaw.json").write_text(
        "{\n  // search\n  agents: {\n    defaults: {\n      memorySearch: {\n"
        f"        extraPaths: [{extra}],\n      }},\n    }},\n    list: [],\n  }},\n}}\n")
    got = diagnostics(root, "dream-corpus-indexed")
    if not reported:
        assert got == []
        return
    [d] = got
    assert (d.path, d.line, d.severity) == ("../openclaw.json", 6, "warning")
    assert d.message.startswith("agents.defaults.memorySearch.extraPaths indexes ")
    assert "dreaming's machine state" in d.message


def test_qmd_collections_of_the_dream_corpus_are_reported(make_vault, tmp_path):
    root = make_vault({"MEMORY.md": "# Memory\n\n- a fact worth keeping in memory\n"})
    (tmp_path / "openclaw.json").write_text(
        '{"memory": {"backend": "qmd", "qmd": {"paths": [\n'
        '  {"name": "docs", "path": "~/notes", "pattern": "**/*.md"},\n'
        '  {"name": "corpus", "path": "memory/.dreams/session-corpus", "pattern": "**/*.txt"}'
        ']}},\n "agents": {"list": [{"id": "ops", "memorySearch": {"qmd": {"extraCollections":'
        ' [{"name": "d", "path": "memory/.dreams"}]}}}]}}\n')
    got = diagnostics(root, "dream-corpus-indexed")
    assert sorted((d.line, d.message.split(" indexes")[0]) for d in got) == [
        (3, "memory.qmd.paths"), (4, "agents.list[ops].memorySearch.qmd.extraCollections")]
    assert [d for d in got if d.line == 3][0].message.endswith("remove it from paths")


def test_an_agent_entry_is_read_too_and_a_broken_config_is_left_to_the_audit(
        make_vault, tmp_path):
    root = make_vault({"MEMORY.md": "# Memory\n\n- a fact worth keeping in memory\n"})
    config = tmp_path / "openclaw.json"
    config.write_text('{"agents": {"list": [{"id": "ops", "memorySearch": '
                      '{"extraPaths": ["memory/.dreams/session-corpus"]}}]}}')
    [d] = diagnostics(root, "dream-corpus-indexed")
    assert d.message.startswith("agents.list[ops].memorySearch.extraPaths")
    config.write_text("{ agents: ")
    assert diagnostics(root, "dream-corpus-indexed") == []


def test_a_cached_check_equals_a_fresh_one_and_follows_openclaw_json(tmp_path, capsys):
    root = _copy(tmp_path)
    config = tmp_path / "openclaw.json"
    config.write_text('{"agents": {"defaults": {"memorySearch": {"extraPaths": ["../docs"]}}}}')

    def run(*extra):
        main(["check", str(root), "--format", "json", *extra])
        return capsys.readouterr().out

    fresh = run("--no-cache")
    assert run() == fresh and run() == fresh  # (the second answered from the cache)
    config.write_text('{"agents": {"defaults": {"memorySearch": {"extraPaths": '
                      '["memory/.dreams/session-corpus"]}}}}')
    changed = run()
    assert "dream-corpus-indexed" in changed and changed == run("--no-cache")

"""``vaultkit report``: a self-contained page, checked as text and in headless Chromium."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

import pytest

import history_repo as hr
from browser import find_chromium, inspect_page
from vaultkit.cli import main
from vaultkit.cli.htmlreport import CHART_IDS

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

HOSTILE_MEMORY = (
    "# MEMORY\n\n## approved_durable_entries\n- Keep it short <script>alert(1)</script>\n"
    "- A chart: ![chart](https://example.com/chart.png)\n- [docs](https://example.com/docs)\n"
    '<img src="https://example.com/pixel.gif">\n'
    '<link rel="stylesheet" href="https://x.test/a.css">\n'
    f"- Bot: {'1234567890'}:{'AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1'}\n"
    f"- OpenRouter: sk-or-v1-{'0123456789abcdef' * 3}\n"
    "| **API Key** | `0123456789abcdef0123456789abcdef` |\n"
)
SECRETS = ("AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1", "0123456789abcdef" * 3,
           "0123456789abcdef0123456789abcdef")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    repo = hr.build(tmp_path_factory.mktemp("report") / "vault")
    repo.write("MEMORY.md", HOSTILE_MEMORY)  # uncommitted: what the page shows now
    return repo


@pytest.fixture(scope="module")
def page(built, tmp_path_factory):
    out = tmp_path_factory.mktemp("page") / "report.html"
    assert main(["report", str(built.path), "-o", str(out)]) == 0
    return out


def test_page_has_every_chart_as_inline_svg(page):
    text = page.read_text(encoding="utf-8")
    for chart in CHART_IDS:
        m = re.search(rf'<figure class="chart" id="{chart}">.*?</figure>', text, re.S)
        assert m, chart
        assert "<svg" in m.group(0) and "<path" in m.group(0)


def test_page_loads_nothing_and_runs_nothing(page):
    text = page.read_text(encoding="utf-8")
    assert "<script" not in text.lower()
    assert not re.search(r"<(img|link|iframe|object|embed|video|audio|source)\b", text, re.I)
    # only in-page references (an SVG <use xlink:href="#glyph">)
    assert not re.search(r"<[a-zA-Z][^<>]*\b(src|srcset|href|action|data)=\"(?!#)", text)
    assert "@import" not in text and not re.search(r"url\((?!#)", text)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text  # the note's HTML, escaped
    assert "&lt;img src=" in text and "[image: chart]" in text
    # URLs in attributes: XML namespace names (never fetched) and a link's title
    attributes = set(re.findall(r'\b([\w:-]+)="https?://[^"]*"', text))
    assert attributes <= {"xmlns", "xmlns:xlink", "title"}, attributes


def test_page_lists_the_losses_the_audit_and_the_findings(page, built):
    text = page.read_text(encoding="utf-8")
    for expected in hr.EXPECTED:
        assert expected.kind in text and built.commits[expected.subject][:10] in text
    assert "vaultkit recover " in text
    assert '<td>history</td><td class="warn">WARN</td>' in text
    assert "Top findings" in text and "MEMORY.md now" in text
    assert "@media print" in text


@pytest.mark.skipif(find_chromium() is None,
                    reason="Chromium is not installed (Debian package `chromium`); the page "
                           "is checked in a real browser only where one exists")
def test_page_in_headless_chromium(page, tmp_path):
    pytest.importorskip("websocket", reason="websocket-client (the test extra) is missing")
    result = inspect_page(page)
    assert result.console_errors == []
    assert result.requests == []
    assert [c["id"] for c in result.charts] == list(CHART_IDS)
    for chart in result.charts:
        assert chart["width"] > 500 and chart["height"] > 80 and chart["shapes"] > 5, chart
    assert result.screenshot.startswith(b"\x89PNG\r\n\x1a\n") and len(result.screenshot) > 50_000
    assert result.pdf.startswith(b"%PDF")
    (tmp_path / "report.png").write_bytes(result.screenshot)


def test_report_outside_git_still_draws_every_chart(tmp_path, capsys):
    vault = tmp_path / "vault"
    (vault / ".obsidian").mkdir(parents=True)
    (vault / "MEMORY.md").write_text("# MEMORY\n\n- One fact\n", encoding="utf-8")
    out = tmp_path / "r.html"
    assert main(["report", str(vault), "-o", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert all(f'id="{c}"' in text for c in CHART_IDS)
    assert "no git history" in text


def test_notes_in_any_layer_are_drawn(tmp_path):
    """Regression: notes only in layers the chart did not name (topical folders, session
    transcripts, a layer from vaultkit.toml) made the layer chart an internal error."""
    vault = tmp_path / "vault"
    (vault / "memory/research").mkdir(parents=True)
    (vault / "vaultkit.toml").write_text(
        '[[layers]]\nname = "recipes"\npaths = ["cook/*.md"]\n', encoding="utf-8")
    (vault / "memory/research/vector-dbs.md").write_text("# Vector stores\n\nCompared.\n")
    (vault / "cook").mkdir()
    (vault / "cook/bread.md").write_text("# Bread\n\nFlour, water, salt.\n")
    subprocess.run(["git", "init", "-q", str(vault)], check=True)
    subprocess.run(["git", "-C", str(vault), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(vault), "-c", "user.name=t", "-c", "user.email=t@x",
                    "commit", "-qm", "notes"], check=True)
    out = tmp_path / "r.html"
    assert main(["report", str(vault), "-o", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert "topics (1)" in text and "recipes (1)" in text


def test_output_errors_are_clear(built, tmp_path, capsys):
    assert main(["report", str(built.path), "-o", str(tmp_path)]) == 2
    assert "is a folder" in capsys.readouterr().err
    assert main(["report", str(built.path), "-o", str(tmp_path / "no" / "r.html")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_missing_extra_is_named(tmp_path):
    code = ("import sys; sys.modules['matplotlib'] = None; from vaultkit.cli import main; "
            f"sys.exit(main(['report', {str(tmp_path)!r}, '-o', {str(tmp_path / 'r.html')!r}]))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 2
    assert "pip install 'vaultkit-lint[report]'" in proc.stderr
    assert not (tmp_path / "r.html").exists()


def test_credentials_quoted_in_the_page_are_masked(page):
    text = page.read_text(encoding="utf-8")
    assert "Keep it short" in text  # MEMORY.md's head is shown...
    for secret in SECRETS:  # ...but not its credentials
        assert secret not in text
    assert "sk-o…[masked]" in text  # a test value's shape: masked by the page itself
    assert "1234567890:" not in text and "…saw1" in text  # the output boundary's mask
    assert text.count("[masked]") >= 2


def test_credentials_the_detector_finds_are_masked_in_the_page():
    """Regression: a key in a table column, after `Bearer` or after a keyword the page's own
    patterns did not know was shown whole in the findings' context."""
    from vaultkit.cli.htmlreport import mask_secrets

    key = "a2db61c6dd000423fa5de133c404f999abe7249cafd859e970bc7cb82062b197"
    bearer = "EuooyitqKhtrNIS2pXFxF7w7B0IEMDF7"
    aws = "6p4rWLHlKPW7mu3kG4WdP2dAhZlyJ9LPMFeTLDpT"
    text = (f"| Exchange | API Key |\n|---|---|\n| Kraken | `{key}` |\n\n"
            f"- Sent with `Authorization: Bearer {bearer}`\n"
            f"aws_secret_access_key = {aws}\n")
    shown = mask_secrets(text)
    for secret in (key, bearer, aws):
        assert secret not in shown
    assert "| Kraken |" in shown and "Authorization: Bearer" in shown


def test_findings_context_masks_a_key_whose_column_header_is_outside_it(tmp_path):
    vault = tmp_path / "vault"
    (vault / "memory").mkdir(parents=True)
    key = "a2db61c6dd000423fa5de133c404f999abe7249cafd859e970bc7cb82062b197"
    (vault / "memory/exchanges.md").write_text(
        "# Exchanges\n\n| Exchange | API Key | Note |\n|---|---|---|\n"
        "| Binance | 9005441a-6a28-4170-5386-6d94740a1408 | spot |\n"
        f"| Kraken | `{key}` | read-only |\n", encoding="utf-8")
    out = tmp_path / "r.html"
    assert main(["report", str(vault), "-o", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert "secret-in-memory" in text and key not in text


def test_event_table_is_capped_with_the_unrecovered_first():
    from vaultkit.memory.history import Event
    from vaultkit.cli.htmlreport import MAX_EVENT_ROWS, _events_table

    events = [Event("journal-rewrite", f"{i:040x}", 1_700_000_000 + i * 60,
                    "2026-01-01T00:00:00+00:00", "Agent <a@x>", "s", f"memory/{i}.md",
                    lines=1, recovered=i % 2 == 0) for i in range(MAX_EVENT_ROWS + 50)]
    table = _events_table(events)
    assert table.count("<tr>") == MAX_EVENT_ROWS + 1  # the header row too
    assert f"The {MAX_EVENT_ROWS} most recent of {MAX_EVENT_ROWS + 50} events" in table
    assert table.count('"fail">lost<') == (MAX_EVENT_ROWS + 50) // 2  # every unrecovered one


def test_the_audit_tile_counts_as_the_audit_does(page, built, capsys):
    # one count for both: a check the audit cannot judge (no openclaw.json: unknown) is not
    # counted as passed on the page
    import json as _json

    text = page.read_text(encoding="utf-8")
    tile = re.search(r'<div class="tile [a-z]+"><b>(\d+)/(\d+)</b>audit<br>'
                     r'<span class="hint">([^<]*)</span>', text)
    assert tile, "no audit tile"
    rows = re.findall(r'<td>([a-z-]+)</td><td class="([a-z]+)">', text)
    statuses = dict(rows)
    assert int(tile.group(1)) == sum(1 for s in statuses.values() if s == "pass")
    assert int(tile.group(2)) == len(statuses)
    if "unknown" in statuses.values():
        assert "unknown" in tile.group(3)
    assert main(["audit", str(built.path), "--format", "json"]) in (0, 1)
    audited = {c["id"]: c["status"] for c in _json.loads(capsys.readouterr().out)}
    assert audited.keys() == statuses.keys()


def test_the_report_counts_the_loss_events_history_lists(tmp_path, capsys):
    # a loss between commits (only a snapshot holds the lines) is an event in both, and
    # the audit rows are the audit's own, in its order
    import json as _json

    repo = hr.build(tmp_path / "vault")
    journal = "memory/2026-03-04.md"
    repo.write(journal, "# 2026-03-04\n\n## 09:00 Kept\n- one\n- two\n- three\n")
    assert main(["snapshot", str(repo.path)]) == 0
    repo.write(journal, "# 2026-03-04\n")
    capsys.readouterr()
    assert main(["history", str(repo.path), "--format", "json"]) == 0
    events = _json.loads(capsys.readouterr().out)["events"]
    assert any(e.get("source") == "snapshot" for e in events)
    out = tmp_path / "report.html"
    assert main(["report", str(repo.path), "-o", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    tile = re.search(r"of (\d+) loss events? in the history", text)
    assert tile and int(tile.group(1)) == len(events)
    capsys.readouterr()
    main(["audit", str(repo.path), "--format", "json"])
    audited = [c["id"] for c in _json.loads(capsys.readouterr().out)]
    assert [row for row in re.findall(r'<tr><td>([a-z-]+)</td><td class=', text)] == audited


def test_a_memory_md_prune_within_its_allowance_is_not_shown_as_lost():
    from vaultkit.memory.history import Event
    from vaultkit.cli.htmlreport import _events_table

    pruned = Event("memory-pruned", "a" * 40, 1_700_000_000, "2026-01-01T00:00:00+00:00",
                   "Person <p@x>", "prune stale lines", "MEMORY.md", lines=2, before=20,
                   limit=5)
    table = _events_table([pruned])
    assert '"pass">pruned on purpose<' in table and '"fail">lost<' not in table
    assert "2 of its 20 durable lines" in table

"""duplicate-block: a journal or bootstrap file holding the same block written again (memory
flushes, dreaming re-promotions), and the repeated lines it leaves alone."""

from __future__ import annotations

from test_rules_support import diagnostics, findings, isolated_openclaw  # noqa: F401

from vaultkit.cli import main

FLUSH = ("## 14:10 — Pre-compaction flush\n"
         "- Deploy of the shop moved to Friday; the payment provider wants a new key\n"
         "- Sofia asked for the invoice export as CSV, not as PDF\n"
         "- The backup cron failed twice on a full disk; cleaned /var/tmp\n\n")
SESSION = ("### Context\n- Working on the invoice exporter for the shop since Monday\n"
           "- Tests for the CSV writer pass; the PDF path is left as it was\n\n"
           "### Open\n- Ask Sofia whether the export needs the tax column at all\n"
           "- Move the nightly backup to the new disk once it is mounted\n"
           "- Rotate the payment key after the provider sends the new one\n\n")


def _lines(make_vault, files, rule="duplicate-block"):
    return [(p, ln) for _, p, ln in findings(make_vault(files), rule)]


def test_an_entry_written_again_is_reported_at_each_later_copy(make_vault):
    body = "# 2026-03-02\n\n" + FLUSH + "## 15:00 — Lunch\n- soup\n\n" + FLUSH + FLUSH
    got = diagnostics(make_vault({"memory/2026-03-02.md": body}), "duplicate-block")
    assert [(d.line, d.severity) for d in got] == [(11, "warning"), (16, "warning")]
    assert "repeat lines 3-6 byte for byte" in got[0].message
    assert "repeat lines 3-6" in got[1].message  # (the first copy, not the one before)


def test_four_copies_of_a_long_block_are_three_findings(make_vault):
    block = "## 09:00 — Session notes\n" + SESSION
    body = "# 2026-03-03\n\n" + block * 4
    got = diagnostics(make_vault({"memory/2026-03-03.md": body}), "duplicate-block")
    assert len(got) == 3
    assert [d.line for d in got] == [13, 23, 33]
    assert all("repeat lines 3-11 byte for byte" in d.message for d in got)
    assert got[0].message.startswith("lines 13-21 repeat")


def test_a_run_copied_under_another_heading_is_reported(make_vault):
    # the flush wrote the block's lines again under a heading of its own
    run = "".join(f"- step {i}: moved the {w} service to the new host and checked it\n"
                  for i, w in enumerate(["mail", "cron", "shop", "wiki", "dns", "vpn", "git",
                                         "chat", "blog", "feed", "docs", "ci"]))
    body = "# 2026-03-04\n\n## 10:00 — Migration\n" + run + "\n## 18:00 — Flush\n" + run
    assert _lines(make_vault, {"memory/2026-03-04.md": body}) == [("memory/2026-03-04.md", 18)]
    # eleven lines are not enough outside a whole entry
    short = "".join(run.splitlines(keepends=True)[:11])
    body = "# 2026-03-04\n\n## 10:00 — Migration\n" + short + "\n## 18:00 — Flush\n" + short
    assert _lines(make_vault, {"memory/2026-03-04.md": body}) == []


def test_memory_md_re_promotion_is_reported(make_vault):
    promoted = ("## Promoted From Short-Term Memory (2026-05-06)\n"
                "<!-- trigger: recall -->\n"
                "- The shop's database moved to Postgres 16 on the new host\n"
                "- Invoices are exported as CSV for the accountant every Friday\n"
                "- Sofia owns the payment provider account and its keys\n\n")
    files = {"MEMORY.md": "# MEMORY.md - Long-Term Memory\n\n" + promoted + promoted}
    assert _lines(make_vault, files) == [("MEMORY.md", 9)]


def test_repeated_short_lines_and_headings_are_left_alone(make_vault):
    entries = "".join(
        f"## {h}:00 — Heartbeat\n### 系统状态\n- 网关运行正常，无异常告警\n- 磁盘使用率稳定在百分之四十\n"
        f"- 定时任务全部按时完成\n- 内存占用正常\n\n### Tasks\n- none\n\n---\n\n"
        f"| task | state |\n|---|---|\n| backup {h} | ok |\n\n" for h in range(10, 16))
    files = {"memory/2026-03-05.md": "# 2026-03-05\n\n" + entries,
             # the same short entry is filler's business, not a copy worth a finding
             "memory/2026-03-06.md": "# 2026-03-06\n\n" + "## Heartbeat\n- nothing new\n\n" * 4}
    assert _lines(make_vault, files) == []


def test_only_journals_and_bootstrap_files_are_read(make_vault):
    files = {"memory/semantic/howto.md": "# How to\n\n" + FLUSH + FLUSH,
             "memory/2026-03-07-weekly-review.md": "# Review\n\n" + FLUSH + FLUSH,
             "TOOLS.md": "# Tools\n\n" + FLUSH + FLUSH}
    assert _lines(make_vault, files) == [("TOOLS.md", 8)]


def test_frontmatter_and_blank_lines_do_not_hide_a_copy(make_vault):
    spaced = FLUSH.replace("\n- ", "\n\n- ").replace("PDF\n", "PDF   \n")
    files = {"memory/2026-03-08.md": "# 2026-03-08\n\n" + FLUSH + spaced}
    assert _lines(make_vault, files) == [("memory/2026-03-08.md", 8)]


def test_a_hostile_file_stays_fast(make_vault):
    import time

    body = "# 2026-03-09\n\n" + "- the same line over and over, long enough to count\n" * 20000
    root = make_vault({"memory/2026-03-09.md": body})
    start = time.process_time()
    got = findings(root, "duplicate-block")
    assert time.process_time() - start < 10
    assert got == []  # one line repeated is no block


def test_the_cached_answer_is_the_fresh_one(make_vault, capsys):
    root = make_vault({"memory/2026-03-02.md": "# 2026-03-02\n\n" + FLUSH})
    args = ["check", str(root), "--select", "duplicate-block"]
    assert main(args) == 0
    capsys.readouterr()
    path = root / "memory/2026-03-02.md"
    path.write_text(path.read_text() + FLUSH)
    main(args)
    cached = capsys.readouterr().out
    main(args + ["--no-cache"])
    assert cached == capsys.readouterr().out and "VK405" in cached

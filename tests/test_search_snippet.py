"""Where a search result's snippet sits: around the best line of the ranked chunk, reaching
into the chunks beside it, the line before it and what follows it, by the entry's headings."""

from __future__ import annotations

from vaultkit.memory.search import SNIPPET_CHARS, chunk_text, search_vault, snippet_lines
from vaultkit.memory.text import query_terms
from vaultkit.vault.loader import load_vault


def _terms(query: str):
    terms = query_terms(query)
    for t in terms:
        t.idf = 1.0
    return terms


def _filler(n: int, who: str = "Ana") -> list[str]:
    return [f"- {who}: item {i:02d} of the routine list, nothing that anybody asked about"
            for i in range(n)]


def test_the_reply_below_a_question_is_in_its_snippet_across_a_chunk_boundary(make_vault):
    # A planning entry of one bullet a line; the question that shares the query's words is
    # the last line of a 700-character window, the reply under it shares none of them. The
    # snippet used to be that window alone: the reply was not in it.
    question = "- Ray: which region should the backup bucket live in?"
    reply = "- Mia: eu-west-2, copied every night to Frankfurt."
    head = ["# 2026-03-04", "", "## 09:30 — Planning", ""]
    lines = head + _filler(18) + [question, reply] + _filler(6, "Ben")
    text = "\n".join(lines) + "\n"
    at = lines.index(question) + 1
    # (the precondition: a 700-character chunk ends on the question)
    assert any(end == at for _s, end, _t in chunk_text(text, 700))
    root = make_vault({"memory/2026-03-04.md": text})
    hits = search_vault(load_vault(root, root=root), "backup bucket region")
    top = hits[0]
    assert top.path == "memory/2026-03-04.md"
    assert top.snippet_start <= at < at + 1 <= top.snippet_end
    assert reply in top.snippet and question in top.snippet
    assert len(top.snippet) <= SNIPPET_CHARS
    # whole lines, and the result's range holds its snippet
    assert top.snippet == "\n".join(lines[top.snippet_start - 1:top.snippet_end])
    assert top.start_line <= top.snippet_start and top.snippet_end <= top.end_line


def test_the_window_takes_the_line_before_then_what_follows():
    lines = _filler(3) + ["- Ray: how long did the migration take?",
                          "- Mia: four hours, most of it copying the archive."] + _filler(12)
    _snippet, _spans, first, last = snippet_lines(lines, (3, 3), _terms("migration"))
    assert first == 2 and last > 5  # one line above the question, then the lines below it
    size = len("\n".join(lines[first:last + 1]))
    assert size <= SNIPPET_CHARS < size + 1 + len(lines[last + 1])


def test_the_window_keeps_to_its_time_of_day_entry_and_its_heading():
    # ### HH:MM entries of a day: the best line is the second of the 14:30 entry. The window
    # does not climb into the 11:00 entry: it takes the 14:30 heading and the entry's lines,
    # and only then goes on into the next entry.
    lines = ["# 2026-05-11", "",
             "### 11:00 — Inbox", "- cleared the support queue, twelve tickets closed",
             "- answered the accountant about the March invoices", "",
             "### 14:30 — Offsite", "- shortlist of three venues sent round",
             "- venue decided: the harbour hall, deposit paid",
             "- catering still open, two quotes to compare", "",
             "### 16:00 — Hiring", *[f"- interview {i}: notes filed in the hiring folder, "
                                     "a second round for the strongest" for i in range(6)]]
    _s, _sp, first, last = snippet_lines(lines, (8, 8), _terms("venue decided"))
    assert lines[first] == "### 14:30 — Offsite"
    assert last >= 11  # then the next entry, as far as the window goes


def test_a_heading_right_above_the_best_line_is_kept_and_nothing_above_it():
    lines = ["## 2026-06-01", "- a line of the first entry about the weekly report", "",
             "## 2026-06-02", "- renewed the TLS certificate for the status page",
             *(f"- note {i} about the release checklist and its owners" for i in range(20))]
    _s, _sp, first, _last = snippet_lines(lines, (4, 4), _terms("TLS certificate"))
    assert first == 3  # the entry's dated heading, not the entry above it


def test_a_bold_label_record_is_read_down_from_its_label():
    # records of bold labels, one per paragraph: the answer is the field under the label
    records = []
    for n, (what, why) in enumerate([
            ("move the nightly export to 02:00 UTC", "the 01:00 slot hit the backup window"),
            ("keep the staging database for a month", "QA needs the March data"),
            ("drop the legacy webhook", "no caller in ninety days of logs")]):
        records += [f"**Decision {n + 1} (2026-02-1{n}):** {what}.", f"**Why:** {why}.",
                    "**Owner:** Ana, reviewed by Ben and signed off in the weekly sync.", ""]
    lines = ["# Decisions", ""] + records
    best = lines.index("**Decision 2 (2026-02-11):** keep the staging database for a month.")
    _s, _sp, first, last = snippet_lines(lines, (best, best), _terms("staging database"),
                                         limit=200)
    assert first <= best and last >= best + 1  # the label and its Why under it
    assert lines[best + 1] == "**Why:** QA needs the March data."


def test_results_of_one_note_never_share_a_snippet_line(make_vault):
    # a dialogue where the query's words recur every few lines: many windows of one note
    turns = []
    for i in range(40):
        who = "Caroline" if i % 2 else "Melanie"
        topic = "the pottery class" if i % 3 == 0 else f"the {i}th weekend"
        turns.append(f"- **{who}**: we talked about {topic} and what comes next for us")
    root = make_vault({"memory/2023-07-15.md": "# 2023-07-15\n\n## 14:00\n\n"
                       + "\n".join(turns) + "\n"})
    hits = search_vault(load_vault(root, root=root), "pottery class", max_results=10)
    same = [h for h in hits if h.path == "memory/2023-07-15.md"]
    assert len(same) >= 3
    seen: set[int] = set()
    for h in same:
        mine = set(range(h.snippet_start, h.snippet_end + 1))
        assert not mine & seen
        seen |= mine
        assert len(h.snippet) <= SNIPPET_CHARS
        assert h.start_line <= h.snippet_start <= h.snippet_end <= h.end_line


def test_a_credential_on_a_line_of_the_next_chunk_is_marked(make_vault):
    # the snippet reaches the line under the best one, which the index holds in the next
    # chunk: the credential on it is served masked and marked, as one in the chunk itself
    token = "- alerts bot: 5145683452:AAbeuEchsVEoR7TJYHSDATOCN1D61_k7U4O"
    question = "- Ray: where did the ops chat alerts bot token go?"
    lines = ["# 2026-02-14", "", "## 10:00", ""] + _filler(8) + [question, token] + _filler(4)
    text = "\n".join(lines) + "\n"
    at = lines.index(token) + 1
    root = make_vault({"memory/2026-02-14.md": text})
    hit = search_vault(load_vault(root, root=root), "ops chat alerts")[0]
    assert hit.snippet_start <= at <= hit.snippet_end
    assert not any(s <= at <= e for s, e, _t in chunk_text(text) if s <= at - 1 <= e)
    assert "5145683452:AA" not in hit.snippet and "…7U4O" in hit.snippet
    assert hit.credentials == [{"line": at, "kind": "Telegram bot token", "masked": "…7U4O"}]

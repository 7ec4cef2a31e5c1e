"""Where a search result's snippet sits: around the best line of the ranked chunk, reaching
into the chunks beside it, the line before it and what follows it, by the entry's headings."""

from __future__ import annotations

import json

from vaultkit.cli import main
from vaultkit.memory.search import (SNIPPET_CHARS, chunk_text, search_vault, snippet_lines,
                                    snippet_parts)
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
        # the lines it shows: a snippet hemmed in by a better one's goes on beyond it, in
        # a second window, so its first and last lines may enclose that one's
        windows = h.snippet_windows or [(h.snippet_start, h.snippet_end)]
        mine = {i for a, b in windows for i in range(a, b + 1)}
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


# -- two windows: a line too long for the budget left is skipped ---------------------

def _shown(lines: list[str], hit) -> str:
    """What a hit's snippet must be: its windows' lines (1-based), joined by a line "…"."""
    windows = hit.snippet_windows or [(hit.snippet_start, hit.snippet_end)]
    return "\n…\n".join("\n".join(lines[a - 1:b]) for a, b in windows)


def _printer_day() -> tuple[list[str], str, str]:
    log = "- pasted log: " + " ".join(f"step {i} ok in {i * 7} ms;" for i in range(18))
    decision = "- decided: keep the old one until the vendor ships 4.2."
    lines = ["# 2026-04-02", "", "## Warehouse", "",
             "- the label printer drops every third job since Monday, so the morning "
             "shipments went out late and Ben printed the labels by hand from the office",
             "- reinstalled the printer driver twice, and rolled the firmware back once, "
             "with the same result both times",
             "- Ben called the vendor's support line and waited an hour for a callback "
             "that never came, then wrote to them instead", log, decision, "",
             "## Lunch", "", "- soup"]
    return lines, log, decision


def test_a_line_too_long_for_the_budget_left_is_skipped_for_the_line_beyond():
    # A ## journal: the entry's best line and the lines around it, then a long pasted log
    # line that no longer fits, then the line that says what was decided (none of the
    # query's words). The snippet used to stop before the long line with over 150
    # characters unused; now it skips that one line ("…") and shows the decision under it.
    lines, log, decision = _printer_day()
    best = lines.index(next(x for x in lines if "driver" in x))
    snippet, _spans, windows = snippet_parts(lines, (best, best), _terms("printer driver"))
    at = lines.index(decision)
    assert windows[0] == (0, best + 1) and windows[1][0] == at
    assert snippet.startswith("\n".join(lines[:best + 2]) + "\n…\n" + decision)
    assert log not in snippet and len(snippet) <= SNIPPET_CHARS
    # (the precondition: the long line did not fit in what the first window left)
    assert len("\n".join(lines[:best + 2])) + 1 + len(log) > SNIPPET_CHARS


def test_a_search_result_with_two_windows_says_which_lines_it_shows(make_vault, capsys):
    lines, log, decision = _printer_day()
    root = make_vault({"memory/2026-04-02.md": "\n".join(lines) + "\n"})
    hit = search_vault(load_vault(root, root=root), "printer driver firmware")[0]
    at = lines.index(decision) + 1
    assert decision in hit.snippet and log not in hit.snippet
    assert hit.snippet_windows[-1][0] == at and hit.snippet == _shown(lines, hit)
    assert (hit.snippet_start, hit.snippet_end) == (hit.snippet_windows[0][0],
                                                    hit.snippet_windows[-1][1])
    assert hit.start_line <= hit.snippet_start and hit.snippet_end <= hit.end_line
    code = main(["search", "printer driver firmware", "--json", "--root", str(root)])
    top = json.loads(capsys.readouterr().out)["results"][0]
    assert code == 0 and top["snippet"] == hit.snippet
    assert top["snippetWindows"] == [list(w) for w in hit.snippet_windows]


# -- a window hemmed in by a better result's snippet goes on beyond it ---------------

def test_a_window_hemmed_in_by_lines_shown_already_goes_on_beyond_them():
    # the seed's window reaches the top of the note above it and, below, lines a better
    # result of the note shows (free False): it used to stop there with half its budget
    # unused; now it shows a second window past those lines, and none of them
    lines = ["# 2026-05-01", "", "## 09:00 — Harbour", "",
             "- the harbour crane broke down again, third time this month",
             "- Ray: did anyone call the crane company about the warranty?",
             "- Mia: yes, they send a technician on Friday",
             "- Ray: good, and the spare parts?",
             "- Mia: ordered, due next week"]
    free = [True] * len(lines)
    free[5] = free[6] = False
    snippet, _spans, windows = snippet_parts(lines, (4, 4), _terms("harbour crane"),
                                             free=free)
    assert windows == [(0, 4), (7, 8)]
    assert snippet == "\n".join(lines[:5]) + "\n…\n" + "\n".join(lines[7:])
    assert lines[5] not in snippet and lines[6] not in snippet


def test_a_second_result_of_a_note_shows_what_lies_beyond_the_first_ones_snippet(make_vault):
    # two results of one note: the best one's snippet sits around the line naming both
    # query words; the second one's, grown from the line above it, reaches that snippet
    # and goes on beyond it (a second window) to the line saying what happens next
    def filler(n: int, who: str) -> list[str]:
        return [f"- {who}: item {i:02d} of the routine list, nothing that anybody asked about"
                for i in range(n)]
    news = "- Ray: the crane company sends a technician on Friday, and the spare parts next week"
    lines = (["# 2026-05-01", "", "## 09:00 — Harbour", "",
              "- Ray: the old crane on pier two is rusting, someone should look at it"]
             + filler(2, "Ana")
             + ["- Mia: the harbour crane on pier four broke down again this morning"]
             + filler(12, "Ben") + [news])
    root = make_vault({"memory/2026-05-01.md": "\n".join(lines) + "\n"})
    first, second = search_vault(load_vault(root, root=root), "harbour crane")[:2]
    assert first.path == second.path == "memory/2026-05-01.md"
    assert "harbour crane" in first.snippet and news not in first.snippet
    assert second.snippet == _shown(lines, second) and len(second.snippet) <= SNIPPET_CHARS
    (a, b), (c, d) = second.snippet_windows
    shown_first = set(range(first.snippet_start, first.snippet_end + 1))
    # it shows none of the first one's lines, and skips exactly those (and no others)
    assert not shown_first & (set(range(a, b + 1)) | set(range(c, d + 1)))
    assert set(range(b + 1, c)) == shown_first
    assert news in second.snippet and lines[4] in second.snippet


def test_a_question_below_the_window_comes_with_its_reply():
    # ### time-of-day entries: the best line, then a question that names none of the
    # query's words, then its long reply. The window used to take the question, then the
    # line before the best one, and the reply no longer fitting, more lines above: the
    # question showed, its answer did not.
    reply = ("- Mia: the backups stay in eu-west-2, because the contract names the EU, and a "
             "nightly copy goes to Frankfurt; restoring from the copy was tested in March, "
             "took forty minutes for the whole archive, and the runbook now says so, with "
             "the two commands to run, the dashboard to watch while they run, and who to "
             "call when the copy is older than a day or the restore stops half way through; "
             "the old bucket in us-east-1 is read-only until June and then goes away for good.")
    lines = ["# 2026-03-04", "", "### 09:30", "- Ana: coffee with the new hire", "",
             "### 11:00",
             "- Ray: finance went through the cloud invoices for the first quarter and "
             "flagged the storage line as the one that grew the most",
             "- Ana: it grew after the archive move in February, when the replicas were "
             "switched on for every project by default, and nobody turned them off",
             "- Ray: so they asked why the backup bucket holds two copies of everything we own",
             "- Ray: where do they live now?", reply, "- Ana: noted, thanks."]
    best = 8
    _s, _sp, windows = snippet_parts(lines, (best, best), _terms("backup bucket"))
    assert any(a <= best and lines.index(reply) <= b for a, b in windows)
    # (the precondition: the line before, the question and the reply do not all fit)
    assert len("\n".join(lines[best - 1:best + 3])) > SNIPPET_CHARS


def test_a_question_in_another_script_comes_with_its_reply():
    # a multi-language entry: the question ends in a full-width question mark and a note
    # in brackets, which do not hide that it asks; its German reply comes with it
    reply = "- Tom: " + "eu-central-1, mit einer nächtlichen Kopie in Frankfurt; " * 9
    lines = ["## 2026-05-20 Standup",
             "- Lin: " + "周一的发布推迟到周三，因为测试环境的证书过期了。" * 5,
             "- Lin: 部署脚本今天又失败了，日志在共享盘上，明天再看。",
             "- Lin: 备份放在哪个区域？ (asked twice)", reply, "- Tom: danach Mittagessen."]
    _s, _sp, windows = snippet_parts(lines, (2, 2), _terms("部署脚本"))
    assert any(a <= 2 and 4 <= b for a, b in windows)
    # (the precondition: the line before, the question and the reply do not all fit)
    assert len("\n".join(lines[1:5])) > SNIPPET_CHARS >= len("\n".join(lines[2:5]))


def test_every_snippet_is_whole_lines_of_at_most_two_windows_within_its_range(make_vault):
    # journals of lines of mixed lengths, questions and bold-label records, many queries:
    # whatever the windows, the snippet is their lines exactly, joined by "…", at most 700
    # characters, inside the result's range, and never on a line another result shows
    import random

    rnd = random.Random(7)
    words = ["harbour", "invoice", "printer", "backup", "venue", "deposit", "driver",
             "rota", "lisbon", "archive"]
    files = {}
    for d in range(1, 5):
        lines = [f"# 2026-06-0{d}", ""]
        for h in range(3):
            lines += [f"## {9 + 2 * h}:00", ""]
            for _ in range(rnd.randint(3, 9)):
                kind = rnd.random()
                body = " ".join(rnd.choice(words) for _ in range(rnd.randint(3, 60)))
                if kind < 0.2:
                    lines.append(f"- Ray: {body}?")
                elif kind < 0.3:
                    lines.append(f"**Why:** {body}.")
                else:
                    lines.append(f"- {body}")
            lines.append("")
        files[f"memory/2026-06-0{d}.md"] = "\n".join(lines) + "\n"
    root = make_vault(files)
    vault = load_vault(root, root=root)
    two = 0
    for query in ["harbour invoice", "printer driver", "backup archive", "venue deposit",
                  "rota lisbon", "deposit driver harbour"]:
        hits = search_vault(vault, query, max_results=10)
        seen: dict[str, set] = {}
        for h in hits:
            lines = files[h.path].split("\n")
            windows = h.snippet_windows or [(h.snippet_start, h.snippet_end)]
            assert len(windows) <= 2 and len(h.snippet) <= SNIPPET_CHARS
            assert h.snippet == _shown(lines, h)
            assert h.start_line <= windows[0][0] and windows[-1][1] <= h.end_line
            assert all(a <= b for a, b in windows)
            assert len(windows) == 1 or windows[0][1] + 1 < windows[1][0]
            mine = {i for a, b in windows for i in range(a, b + 1)}
            assert not mine & seen.get(h.path, set())
            seen.setdefault(h.path, set()).update(mine)
            two += len(windows) == 2
    assert two  # (the rule was exercised)


def test_a_short_turn_reacting_to_the_one_above_brings_that_one_in():
    # a chat transcript: the best line is Nate's, the line before it Joanna's short "Wow,
    # what made you get a third?", and above that Nate's turn it reacts to, which answers
    # "how many". The window used to take the reaction and then go on downward, over turns
    # that share no query word, until the turn above no longer fit.
    said = ["- **Nate**: Guess what, I got a third one last week at the pet store, and the "
            "three of them already get along fine in the tank at home.",
            "- **Joanna**: Wow, what made you get a third?",
            "- **Nate**: My turtles bring me so much joy and peace, best buddies ever, and "
            "I saw another at the store and just had to go for it right there."]
    chat = [f"- **{'Joanna' if i % 2 == 0 else 'Nate'}**: line {i} of the chat about the "
            "weekend, the weather, the movie script and the hike, nothing else at all."
            for i in range(8)]
    lines = ["# 2022-11-09", "", "## 10:00", "", *chat[:2], *said, *chat[2:]]
    seed = lines.index(said[2])
    _s, _sp, windows = snippet_parts(lines, (seed, seed), _terms("turtles joy"))
    assert windows[0][0] == seed - 2 and windows[0][1] > seed
    # a longer turn, or one of the same speaker, is no reaction: the window goes on down
    # (the precondition: the turn above and the lines below the window do not all fit)
    assert len("\n".join(lines[seed - 2:seed + 5])) > SNIPPET_CHARS
    for other in ("- **Joanna**: Wow, what made you get a third one, after all you said "
                  "about the two of them last month?", "- **Nate**: Wow, a third!"):
        lines[seed - 1] = other
        _s, _sp, windows = snippet_parts(lines, (seed, seed), _terms("turtles joy"))
        assert windows[0][0] == seed - 1 and windows[-1][1] > seed + 2


def test_the_window_goes_up_to_its_entry_when_the_headings_above_name_a_query_word():
    # an agent's journal: the best line is a bullet in the middle of an entry, the lines
    # around it share no query word, and the entry's heading (or the day's heading above
    # it) names one the snippet does not show yet. The window used to take the line after
    # the best line, the one before, and then go on downward, so the entry's first bullet
    # (what the entry is about) was left out.
    first = "- the canary went to 5% of traffic at 09:12 and stayed green for an hour."
    best = "- rollback: the webhook retry queue was drained by hand before the cut-over."
    lines = ["# 2026-03-04", "", "## 09:10 — Gateway deploy", "", first, *_filler(3),
             best, *_filler(10, "Ben")]
    seed = lines.index(best)
    assert len("\n".join(lines[2:seed + 3])) <= SNIPPET_CHARS  # (up to the heading fits)
    assert len("\n".join(lines)) > SNIPPET_CHARS  # (and not every line does)
    for query in ("gateway rollback", "rollback 2026"):  # the entry's heading, the day's
        _s, _sp, windows = snippet_parts(lines, (seed, seed), _terms(query))
        assert windows[0][0] <= lines.index(first), query
    # a heading naming no query word leaves the window going down, as before
    lines[2] = "## 09:10 — Morning"
    _s, _sp, windows = snippet_parts(lines, (seed, seed), _terms("gateway rollback"))
    assert windows[0][0] > lines.index(first) and windows[-1][1] > seed + 5

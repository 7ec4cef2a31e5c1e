"""Search finds journals by their dates, entries by the relative dates they use; chunks keep
entries whole; snippets are whole lines around the best match, with their own line range."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from vaultkit.cli import main
from vaultkit.memory import dates
from vaultkit.memory.search import bounded_terms, chunk_text, search_vault, snippet_window
from vaultkit.memory.text import query_terms
from vaultkit.vault.loader import load_vault


def make_vault(root, journals: dict[str, str]):
    (root / "memory").mkdir(parents=True)
    (root / "MEMORY.md").write_text("# MEMORY\n\nLong-term memory.\n")
    for name, body in journals.items():
        (root / "memory" / name).write_text(body)
    return root


JOURNALS = {
    "2023-10-04.md": "# 2023-10-04\n\n## 14:30\n\n- Painted the fence blue.\n",
    "2023-11-20.md": "# 2023-11-20\n\n## 09:00\n\n- Fixed the bike chain.\n",
    "2024-03-02.md": "# 2024-03-02\n\n## 19:15\n\n- Yesterday the lake was frozen solid.\n",
}


def paths(root, query, **kw):
    kw.setdefault("min_score", 0.0)
    return [h.path for h in search_vault(load_vault(root, root=root), query, **kw)]


@pytest.fixture
def vault(tmp_path):
    return make_vault(tmp_path / "v", JOURNALS)


@pytest.mark.parametrize("query", ["what did I do in October 2023", "2023年10月", "в октябре",
                                   "октября 2023", "on Wednesday", "星期三", "2023-10-04",
                                   "2023/10/04", "afternoon"])
def test_a_journal_is_found_by_its_date_in_three_languages(vault, query):
    assert paths(vault, query)[0] == "memory/2023-10-04.md"


def test_a_relative_date_in_an_entry_is_resolved_against_the_journal(vault):
    # "Yesterday" in the 2024-03-02 journal is 1 March 2024, a Friday
    assert paths(vault, "1 March 2024 frozen")[0] == "memory/2024-03-02.md"
    assert paths(vault, "Friday")[0] == "memory/2024-03-02.md"
    # and not the other journals' days
    assert "memory/2024-03-02.md" not in paths(vault, "Thursday")


def test_a_relative_date_in_the_query_is_resolved_against_today(vault):
    today = dt.date(2023, 11, 21)
    terms = bounded_terms("what did I fix yesterday", today)
    assert terms[0].key == "yesterday (2023-11-20)" and "fix" in [t.key for t in terms]
    from vaultkit.memory.search import SearchIndex
    from vaultkit.memory.memset import memory_notes

    loaded = load_vault(vault, root=vault)
    index = SearchIndex(vault)
    try:
        index.sync(loaded, memory_notes(loaded))
        got = index.search("what happened yesterday", min_score=0.0, today=today)
        assert got and got[0].path == "memory/2023-11-20.md"
        got = index.search("last month", min_score=0.0, today=dt.date(2023, 11, 5))
        assert got and got[0].path == "memory/2023-10-04.md"
        # a day no journal holds: only the entry that says the word itself is found
        got = index.search("yesterday", min_score=0.0, today=dt.date(2020, 1, 1))
        assert [h.path for h in got] == ["memory/2024-03-02.md"]
    finally:
        index.close()


def test_relative_dates_in_three_languages():
    ref = dt.date(2023, 5, 8)  # a Monday
    found = {p: keys for p, _w, keys in dates.relative_dates(
        "yesterday, 昨天, вчера, last week, 2 days ago, last year, last Friday", ref)}
    assert found["yesterday"] == found["昨天"] == found["вчера"] == ["2023-05-07"]
    assert found["last week"][0] == "2023-05-01" and len(found["last week"]) == 7
    assert found["2 days ago"] == ["2023-05-06"]
    assert found["last year"] == ["2022"]
    assert found["last Friday"] == ["2023-05-05"]
    assert dates.relative_dates("nothing relative here", ref) == []


def test_day_words_and_time_words():
    words = dates.day_words(dt.date(2023, 10, 4))
    for w in ("2023-10-04", "October", "Wednesday", "2023年10月4日", "星期三", "октября", "среда"):
        assert w in words
    assert dates.time_words("14:30") == "14:30 2:30 pm afternoon"
    assert dates.time_words("Decisions") == ""
    assert dates.time_words("09:05 — Deploy") == "09:05 9:05 am morning"
    assert dates.time_words("10.5.2023") == ""  # a date, not a time
    assert dates.date_of_path("memory/2023-02-30.md") is None  # not a day
    assert dates.date_of_path("memory/notes.md") is None


def test_a_note_without_a_date_gets_no_date_words(tmp_path):
    root = make_vault(tmp_path / "v", {"2023-10-04.md": "# day\n\n- one\n"})
    (root / "memory" / "topics.md").write_text("# Topics\n\n- October plans\n")
    # "Wednesday" is only the journal's date, never the undated note's
    assert paths(root, "Wednesday") == ["memory/2023-10-04.md"]


def test_chunks_never_cut_an_entry():
    entries = [f"## Entry {i}\n\n" + "\n".join(f"line {i}.{j} " + "w" * 60 for j in range(6))
               for i in range(12)]
    text = "\n\n".join(entries) + "\n"
    lines = text.split("\n")
    chunks = chunk_text(text, 700)  # (each entry is about 450 characters: one fits)
    assert len(chunks) > 2
    for start, end, body in chunks:
        assert lines[start - 1].startswith("## Entry")  # every chunk starts at an entry
        assert len(body) <= 1600
        nxt = lines[end] if end < len(lines) else ""
        assert nxt == "" or nxt.startswith("## Entry")  # and ends where one ends


def test_list_items_are_entries_and_a_long_entry_is_still_split():
    text = "\n".join(f"- item {i} " + "x" * 150 for i in range(30)) + "\n"
    chunks = chunk_text(text)
    assert all(body.startswith("- item") for _s, _e, body in chunks)
    long_paragraph = "\n".join("word " * 30 for _ in range(100))
    assert all(len(b) <= 1600 for _s, _e, b in chunk_text(long_paragraph))


def test_snippet_is_whole_lines_from_the_line_before_the_best_match_down():
    lines = [f"- filler turn number {i} about nothing in particular at all" for i in range(40)]
    lines[25] = "- the needle and the haystack are here"
    text = "\n".join(lines)
    terms = query_terms("needle haystack")
    for t in terms:
        t.idf = 1.0
    snippet, spans, first, last = snippet_window(text, terms)
    assert len(snippet) <= 700
    # the line it follows, then what follows it, as far as 700 characters go
    assert first == 24 and last > 30
    assert len("\n".join(lines[first:last + 2])) > 700
    assert snippet == "\n".join(lines[first:last + 1])
    assert snippet[spans[0][0]:spans[0][1]] == "needle"


def test_snippet_prefers_the_line_with_the_rarer_words():
    lines = ["- common word here"] * 30 + ["- rare gem"] + ["- common word here"] * 30
    terms = query_terms("common rare gem")
    terms[0].idf, terms[1].idf, terms[2].idf = 0.1, 3.0, 3.0
    snippet, _spans, first, last = snippet_window("\n".join(lines), terms)
    assert "rare gem" in snippet and first <= 30 <= last


def test_json_reports_the_snippet_lines(vault, capsys):
    code = main(["search", "lake frozen", "--json", "--root", str(vault)])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    top = out["results"][0]
    assert top["path"] == "memory/2024-03-02.md"
    assert (top["snippetStartLine"], top["snippetEndLine"]) == (1, 5)


def test_default_keeps_a_hit_that_matches_one_query_word(vault):
    # one word of four: a low score, but the only note that holds the answer
    hits = search_vault(load_vault(vault, root=vault), "which chain broke during the ride")
    assert hits and hits[0].path == "memory/2023-11-20.md"
    assert hits[0].score < 0.35


def test_a_word_the_vault_never_uses_is_respelled_from_its_vocabulary(tmp_path):
    root = make_vault(tmp_path / "v", {
        "2023-06-01.md": "# 2023-06-01\n\n- We went to the music festival downtown.\n",
        "2023-06-02.md": "# 2023-06-02\n\n- Talked about education plans.\n"})
    index_hits = search_vault(load_vault(root, root=root), "fesetival", min_score=0.0)
    assert [h.path for h in index_hits] == ["memory/2023-06-01.md"]  # one edit away
    assert paths(root, "educaton")[0] == "memory/2023-06-02.md"  # a shared stem
    assert paths(root, "musical")[0] == "memory/2023-06-01.md"
    assert paths(root, "zebra") == []  # nothing near: nothing found


def test_a_chunk_far_below_its_heading_still_carries_it():
    from vaultkit.memory.search import chunk_contexts

    text = "# 2023-10-04\n\n## 14:30 Garden\n\n" + "\n".join(
        f"- note {i} " + "z" * 80 for i in range(60)) + "\n"
    lines = text.split("\n")
    chunks = chunk_text(text)
    contexts = chunk_contexts(lines, chunks, dt.date(2023, 10, 4))
    assert len(chunks) > 2 and len(contexts) == len(chunks)
    last = contexts[-1]
    assert "14:30 Garden" in last and "2:30 pm afternoon" in last and "2023-10-04" in last
    assert "# 2023" not in chunks[-1][2]
    assert "2023-10-04" in last.split("\n")[1]  # the title heading, nearest level 1
    assert chunk_contexts(lines, chunks, None)[-1].split("\n")[0] == "2023-10-04"


def test_text_output_names_the_lines_it_prints(tmp_path, capsys):
    body = "\n".join(f"- filler line {i} " + "q" * 80 for i in range(40))
    root = make_vault(tmp_path / "v", {"2023-06-01.md": "# 2023-06-01\n\n" + body.replace(
        "filler line 30 ", "the otter line ") + "\n"})
    assert main(["search", "otter", "--root", str(root)]) == 0
    head = capsys.readouterr().out.split("\n")[0]
    where = head.split()[0]
    first, last = (int(x) for x in where.rsplit(":", 1)[1].split("-"))
    assert first <= 33 <= last and last - first < 10  # the snippet's lines, not the chunk's


# -- a question asking "when" favours the turn that says when (search.md#when) ----------

WHEN_NOTES = {
    # a.md sorts first and repeats the shared word: it ranks first unless the cue lifts b.md
    "a.md": "# Ana\n\n- Ana: the aquarium, the aquarium! Such fun.\n",
    "b.md": "# Ana\n\n- Ana: I went to the aquarium with my sister last Saturday.\n",
}


def test_when_question_favours_the_chunk_with_a_time_expression(tmp_path):
    root = make_vault(tmp_path / "v", WHEN_NOTES)
    assert paths(root, "When did Ana go to the aquarium?")[0] == "memory/b.md"
    assert paths(root, "What year did Ana go to the aquarium?")[0] == "memory/b.md"


def test_other_questions_are_not_lifted_by_time_expressions(tmp_path):
    root = make_vault(tmp_path / "v", WHEN_NOTES)
    assert paths(root, "Did Ana go to the aquarium?")[0] == "memory/a.md"
    assert paths(root, "What did Ana say when she was at the aquarium?")[0] == "memory/a.md"


def test_the_journal_date_alone_is_no_time_expression(tmp_path):
    # every journal chunk carries its day in its context words: only the chunk's own text
    # counts, so two journals without a time word keep their order
    root = make_vault(tmp_path / "v", {
        "2024-05-01.md": "# 2024-05-01\n\n- Ana: the aquarium, the aquarium! Such fun.\n",
        "2024-05-02.md": "# 2024-05-02\n\n- Ana: went to the aquarium with my sister.\n"})
    assert paths(root, "When did Ana go to the aquarium?") == \
        paths(root, "Did Ana go to the aquarium?")


@pytest.mark.parametrize("query, when", [
    ("When did Ana move to Lisbon?", True),
    ("  when was the last deploy", True),
    ("What year did the project start?", True),
    ("In which month was the release?", True),
    ("How long ago did we switch to Postgres?", True),
    ("What did Ana say when she moved?", False),
    ("Where did Ana move?", False),
    ("What time zone is the server in?", True),
])
def test_asks_when(query, when):
    from vaultkit.memory.search import asks_when
    assert asks_when(query) is when


@pytest.mark.parametrize("text, found", [
    ("I went there last Saturday.", True),
    ("We met yesterday.", True),
    ("It was back in 2019.", True),
    ("The call is at 14:30.", True),
    ("We moved in May.", True),
    ("Two weeks ago we left.", True),
    ("She may come along.", False),  # the modal verb, not the month
    ("The march was long.", False),
    ("Saturdays are for hiking.", True),
    ("I love the aquarium.", False),
])
def test_time_expression(text, found):
    from vaultkit.memory.search import _time_expression
    assert bool(_time_expression().search(text)) is found

"""Ranking without the regular expressions: the coverage a candidate chunk gets is exactly
what the terms' patterns say, on any text (mixed case, accents, the characters that fold
to ASCII letters in unusual ways, CJK, surrogates)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from vaultkit.memory.search import (_ODD_FOLDS, _coverage, _finder, _indexed, _joined_coverage,
                                    _odd_folds, bounded_terms)
from vaultkit.memory.text import Term, query_terms

# letters the terms are made of, their other cases, the characters that fold to an ASCII
# letter in another way than lower() shows (İ ı ſ and the Kelvin sign), word characters of
# the look-around class outside ASCII (é, Greek, Cyrillic), and a few that are not
_ALPHABET = ("kafKAFretyRETYiIsSnNoO01 -_.#\n\t—é\u00c9\u0130\u0131\u017f\u212a"
             "ωΩжЖ部署\ud800\u00df\u1e9e")

texts = st.text(alphabet=_ALPHABET, max_size=60)


def _expected(terms: list[Term], text: str, ctx: str | None) -> float:
    body = _indexed(text, ctx)
    return sum(t.idf for t in terms if t.pattern.search(body))


def _weighted(query: str) -> list[Term]:
    terms = bounded_terms(query)
    for i, t in enumerate(terms):
        t.idf = 1.0 + i / 7  # distinct weights, so a wrong term would show
    return terms


QUERIES = ["kafka retry", "kaf", "retry-ies", "is", "ok 01", "ki", "sink kin", "部署", "部",
           "naïve", "жук", "kafka yesterday", "ſkin"]


@settings(max_examples=400, deadline=None)
@given(text=texts, ctx=st.one_of(st.none(), st.just(""), texts),
       query=st.sampled_from(QUERIES))
def test_coverage_is_what_the_patterns_find(text, ctx, query):
    terms = _weighted(query)
    finders = [(t.idf, _finder(t)) for t in terms]
    assert _coverage(finders, text, ctx) == _expected(terms, text, ctx)


def test_the_usual_terms_take_the_fast_path():
    # a regression guard for the speed: Latin words and CJK bigrams are not run as patterns
    kinds = {t.key: _finder(t)[0] for t in query_terms("kafka retry is 部署")}
    assert kinds == {"kafka": 0, "retr": 0, "部署": 1}
    # (retry's y forms are whole words, found as bytes after their common prefix: retry,
    # retries, retried …)
    (retry,) = query_terms("retries")
    assert _finder(retry)[0] == 0 and _finder(retry)[1][:4] == (b"retr", b"retry", b"retries",
                                                                   b"retried")


def test_odd_folds_and_neighbours_decide_as_the_pattern_does():
    [ki] = _weighted("ki")  # a short stem is a whole word: "ki" but not "kid" or "ski"
    [kin] = _weighted("kin")  # a longer one starts a word: "kind" but not "skin"
    cases = [(ki, "KI", True), (ki, "\u212aI", True), (ki, "K\u0130", True), (ki, "ski", False),
             (ki, "kid", False), (ki, "éKI", False), (ki, "—ki—", True), (ki, "kiω", False),
             (ki, "部ki部", True), (ki, "\ud800ki", True), (kin, "kind", True),
             (kin, "skin", False), (kin, "ſkin", False), (kin, "жkin", False),
             (kin, "k\u0131nd", True), (ki, "ki\ud800a", True), (ki, "ki\U0002000ba", True),
             (ki, "kiéa", False), (ki, "ki—a", True), (ki, "\U0002000bki", True),
             (ki, "ωki", False), (ki, "\ud800ki", True), (kin, "Жkin", False)]
    for term, text, found in cases:
        assert (_coverage([(term.idf, _finder(term))], text) > 0) is found, text
        assert bool(term.pattern.search(text)) is found, text


def test_the_odd_fold_check_knows_each_character():
    for char in "\u0130\u0131\u017f\u212a":
        data = f"x{char}y".encode()
        assert _odd_folds(data) and any(f in data for f in _ODD_FOLDS)
    assert not _odd_folds("İ is not here: é — ж".replace("İ", "I").encode())


@settings(max_examples=300, deadline=None)
@given(texts=st.lists(texts, min_size=1, max_size=4), ctxs=st.lists(texts, min_size=1, max_size=2),
       query=st.sampled_from(QUERIES + ["kafka 2026-12-01", "yesterday ki"]))
def test_a_shared_context_read_once_gives_the_same_coverage(texts, ctxs, query):
    # a query measures many chunks with the same context words: what the context holds is
    # looked up once (seen), and every chunk's coverage stays what the patterns find, and so
    # does a chunk's measured with the chunks beside it (their texts joined by newlines)
    terms = _weighted(query)
    finders = [(t.idf, _finder(t)) for t in terms]
    seen: dict = {}
    for i, text in enumerate(texts):
        ctx = ctxs[i % len(ctxs)]
        assert _coverage(finders, text, ctx, seen) == _expected(terms, text, ctx)
        near = texts[max(0, i - 1):i + 2]
        assert _joined_coverage(finders, near, ctx, seen) == \
            _expected(terms, "\n".join(near), ctx)


def test_the_context_is_looked_up_once_per_query():
    terms = _weighted("kafka retry")
    finders = [(t.idf, _finder(t)) for t in terms]
    ctx = "2026-12-01 декабря Kafka"
    seen: dict = {}
    assert _coverage(finders, "nothing here", ctx, seen) == terms[0].idf
    assert ctx in seen
    # the second chunk with these context words takes their answer from seen
    seen[ctx] = [True] * len(finders)
    assert _coverage(finders, "nothing here either", ctx, seen) == sum(t.idf for t in terms)


@settings(max_examples=400, deadline=None)
@given(text=texts, query=st.sampled_from(QUERIES + ["kafka 2026-12-01", "部署 kafka"]))
def test_highlights_skip_only_the_terms_a_text_cannot_hold(text, query):
    # a snippet's highlight runs only the patterns of the words it may hold: the spans are
    # those of every term's pattern
    from vaultkit.memory.search import _spans
    from vaultkit.memory.text import match_spans

    terms = _weighted(query)
    assert _spans(text, terms) == match_spans(text, terms)

"""Helpers the rule tests share, and the tests of the shared phrase matcher and entries."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultkit.lint.engine import Selection, run_rules, select_rules
from vaultkit.vault.entries import entries
from vaultkit.vault.parse import parse_note
from vaultkit.vault.phrases import PhraseMatcher, matcher
from vaultkit.vault.profile import load_settings
from vaultkit.lint.rule import Context
from vaultkit.vault.loader import load_vault


@pytest.fixture(autouse=True)
def isolated_openclaw(tmp_path_factory, monkeypatch):
    """No openclaw.json from the machine running the tests: an empty HOME, no env override."""
    monkeypatch.setenv("HOME", str(tmp_path_factory.mktemp("home")))
    monkeypatch.delenv("OPENCLAW_CONFIG_PATH", raising=False)


def findings(root, *rules, targets=None):
    """``[(rule, path, line)]`` for the given rules (all rules when none), sorted."""
    vault = load_vault(root, root=root, use_cache=False)
    selection = Selection(select=list(rules) if rules else None)
    chosen = select_rules(vault.settings, selection)
    diags = run_rules(Context(vault, targets=targets), chosen)
    return sorted((d.rule, d.path, d.line) for d in diags)


def diagnostics(root, *rules):
    vault = load_vault(root, root=root, use_cache=False)
    chosen = select_rules(vault.settings, Selection(select=list(rules)))
    return run_rules(Context(vault), chosen)


def default_phrases(kind):
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as d:
        return getattr(load_settings(Path(d), "openclaw").profile.phrases, kind)


# -- PhraseMatcher ------------------------------------------------------------------

FILLER_ONLY = [
    ("System idle, no changes.", True),
    ("HEARTBEAT_OK", True),
    ("nothing to report", True),
    ("No updates.", True),
    ("系统空闲，无变化。", True),
    ("n/a", True),
    ("No changes to the API, but the deploy moved to Friday", False),
    ("Idle hands: refactored the cron wrapper", False),
    ("今天无更新，但是修复了定时任务", False),
    ("bridle", False),
    ("", False),
]


@pytest.mark.parametrize("text,expected", FILLER_ONLY)
def test_only_is_true_for_nothing_but_filler(text, expected):
    assert matcher(default_phrases("filler")).only(text) is expected


LESSON_FIND = [
    ("## Lessons learned", "Lessons learned"),
    ("- takeaway: never use Write", "takeaway"),
    ("tagged #lesson today", "#lesson"),
    ("## 经验教训", "经验教训"),
    ("今天的lesson是", "lesson"),  # Latin word next to CJK text still matches
    ("lessonplanner is a word", None),  # word boundary
    ("Elessons", None),
    ("LESSONS", "LESSONS"),  # case-insensitive
]


@pytest.mark.parametrize("text,expected", LESSON_FIND)
def test_find_uses_word_boundaries_for_latin_and_none_for_cjk(text, expected):
    m = matcher(default_phrases("lesson")).find(text)
    assert (m.group(0) if m else None) == expected


def test_regex_entries_and_whitespace_in_phrases():
    m = PhraseMatcher(["re:^ok\\.?$", "all   quiet"])
    assert m.only("OK.")
    assert not m.only("OK then")
    assert m.find("it was all\nquiet").group(0) == "all\nquiet"
    assert m.find("all quietly") is None


def test_matcher_is_compiled_once_per_list():
    phrases = default_phrases("filler")
    assert matcher(phrases) is matcher(list(phrases))
    assert matcher(phrases) is not matcher(phrases + ["extra"])


def test_empty_matcher_finds_nothing():
    m = PhraseMatcher([])
    assert not m
    assert m.find("anything") is None
    assert not m.only("anything")



def test_a_matcher_compiles_its_phrases_only_for_a_text_that_may_hold_one():
    """Compiling a profile's phrase list costs 5-10 ms; a commit hook's journal entries
    mostly hold none of the phrases, and then nothing is compiled."""
    m = PhraseMatcher(["nothing to report", "no changes", "系统空闲"])
    assert not m.only("Deployed the API; the nightly job moved to 02:00")
    assert m.find("no change here, and nothing to reply") is None
    assert list(m.finditer("none of them")) == []
    assert m._alternation is None
    assert m.only("No\u2003changes.")  # (any whitespace run joins a phrase's words)
    assert m._alternation is not None


# characters re.IGNORECASE folds unusually (Kelvin sign, long s, dotless and dotted i,
# micro sign, final sigma, a combining iota), spaces of several kinds, and CJK
_TRICKY = "aAiIkKsStT \n\t\u00a0\u2003\u212a\u017f\u0131\u0130\u00b5\u03bc\u03c2\u03c3\u0345\u03b9\u1fbe-,.无变化"


@settings(max_examples=400, deadline=None)
@given(text=st.text(alphabet=_TRICKY, max_size=24),
       phrases=st.lists(st.text(alphabet=_TRICKY, min_size=1, max_size=6), min_size=1,
                        max_size=4),
       regex=st.sampled_from([None, "re:^-?a", "re:s\\b", "re:K"]))
def test_the_phrase_prefilter_never_hides_a_match(text, phrases, regex):
    """The folded-text test that skips compiling decides exactly as the pattern would
    (beside a user's ``re:`` phrase too)."""
    phrases = phrases + [regex] if regex else phrases
    lazy = PhraseMatcher(phrases)
    eager = PhraseMatcher(phrases)
    if eager._plain:
        eager._compiled()
    assert lazy.only(text) == eager.only(text)
    found, expected = lazy.find(text), eager.find(text)
    assert (found and found.span()) == (expected and expected.span())
    assert [m.span() for m in lazy.finditer(text)] == [m.span() for m in eager.finditer(text)]

# -- entries ------------------------------------------------------------------------

JOURNAL = """# 2026-02-15

## Morning

### 09:00 — Standup
- Planned the release.

- Moved the cron job.
<!-- vaultkit-disable-next-line entry-too-short -->

```
### not a heading
```

### 10:00 — Review
#### Detail
- one

## Afternoon
### 14:00 — Empty
"""


def test_entries_at_level_three():
    note = parse_note("memory/2026-02-15.md", JOURNAL.encode())
    got = [(e.heading.text, e.start, e.end, e.nonblank) for e in entries(note, 3)]
    # the comment line does not count; the fenced block's three lines do; the
    # "### not a heading" inside the fence is no entry
    assert got == [
        ("09:00 — Standup", 5, 13, 5),
        ("10:00 — Review", 15, 17, 2),
        ("14:00 — Empty", 20, 20, 0),
    ]


def test_entry_body_excludes_heading_and_setext_underline():
    note = parse_note("x.md", b"Title\n-----\nline one\nline two\n")
    (entry,) = entries(note, 2)
    assert entry.body == ["line one", "line two"]
    assert entry.body_start == 3
    assert entry.text == "line one\nline two"
    assert list(entry.lines()) == [(3, "line one"), (4, "line two")]
